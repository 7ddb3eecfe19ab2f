"""The sweep preflight's answer, remembered by what it depends on.

After an edit that leaves the rows alone (a description, a link), the hook's
preflight asks the same question again: the same rows, the same scripts. Its
answer is a function of the plan's rows, the settings, the scripts folder the
rows run from (`scripts_folder.scripts_identity`: the tree id at a commit,
else every file's name, size, time stamp and mode on disk), the base's
scripts tree (a script the change adds or edits vouches for nothing), the
bash that judges the syntax and gov's code (`findings_cache.digest`). It is
kept in `.git/gov/check-cache/` under a digest of them.

Only an answer with no finding that stops the check is kept, so a timeout,
a missing bash or a script that does not resolve is asked again every time.
Anything unreadable is a miss, never an error; `--no-cache` skips the lookup.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.check.findings_cache import digest
from governance.check.scripts_folder import scripts_identity
from governance.check.syntax import bash_identity
from governance.core.blockcache import BlockCache
from governance.core.settings import Settings
from governance.git.repo import GitRepo
from governance.sweeps.identity import EVAL_SECTIONS, THROUGHPUT_SECTIONS

ROW_SECTIONS = (*THROUGHPUT_SECTIONS, *EVAL_SECTIONS)  # where `plan_rows` finds rows


@dataclass(frozen=True, slots=True)
class PreflightQuestion:
    """What the preflight is asked: will the rows of `document` run, from the
    scripts at `head_commit` (None: on disk), judged against the base's?
    `tracked`: the scripts folder is inside the repository."""

    repo: GitRepo
    settings: Settings
    document: Mapping[str, Any]
    head_commit: str | None
    base_commit: str
    tracked: bool


def preflight_key(question: PreflightQuestion, scripts_id: str | None = None) -> str:
    """The digest of everything the answer to `question` depends on
    (`scripts_id`: the scripts folder's identity at head, when already taken)."""
    repo, settings, tracked = question.repo, question.settings, question.tracked
    bash = shutil.which("bash")
    base_scripts = (repo.tree_id(question.base_commit, settings.scripts) or "-") if tracked else "-"
    return digest(
        [
            "preflight",
            repr(settings),
            # The rows, in order (no sort_keys): what `plan_rows` reads, not
            # the changelog metadata beside them (a description edit is no new row).
            json.dumps([question.document.get(s) for s in ROW_SECTIONS], default=repr),
            str(tracked),
            scripts_id or scripts_identity(repo, settings, question.head_commit),
            base_scripts,
            bash_identity(bash) if bash else "-",
        ]
    )


class PreflightCache:
    """Records (`Preflight.to_record`) under `preflight_key` digests."""

    def __init__(self, folder: Path, *, read: bool = True) -> None:
        self.store = BlockCache(folder)
        self.read = read  # False: every lookup is a miss (--no-cache)

    def get(self, key: str) -> dict[str, Any] | None:
        data = self.store.get(key) if self.read else None
        return data if isinstance(data, dict) else None

    def put(self, key: str, record: dict[str, Any], *, stops: bool) -> None:
        if not stops:  # a stopping answer is asked again: a timeout may be gone next time
            self.store.put(key, record)
