"""The environment git leaks to hooks, and removing it.

Git sets `GIT_DIR`, `GIT_INDEX_FILE` and friends when it runs a hook; a tool
called from a hook that inherits them talks to the wrong repository or index,
so every git process gov starts runs with those variables removed.
"""

from __future__ import annotations

import os

# Variables git exports to hooks that would redirect our own git calls.
_LEAKED_GIT_VARS = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
)


def strip_leaked_git_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Return (and, for os.environ, apply) the environment without hook leaks."""
    target = os.environ if env is None else env
    for name in _LEAKED_GIT_VARS:
        target.pop(name, None)
    return dict(target)
