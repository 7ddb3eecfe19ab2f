"""GOV711: `bash -n` on a launch script the plan runs, remembered by its bytes.

`bash -n` reads a script without running it and reports its syntax errors.
Its answer depends only on the script's bytes and on the bash that reads
them, so after a new edit the hook asks bash again only about the scripts
that changed: the answers (exit status and the errors' lines and messages)
are kept in the preflight's shell cache (`.git/gov/shell-cache/`), keyed by
the bytes, the bash executable (path, size and time stamp) and gov's code.
A timeout is never remembered.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from governance.check.findings_cache import digest
from governance.core.blockcache import BlockPack
from governance.core.codes import violation
from governance.core.diagnostics import Violation

BASH_TIMEOUT_SECONDS = 20.0

_BASH_ERROR = re.compile(r"^(?P<file>.*?): line (?P<line>\d+): (?P<message>.*)$")

# What bash said: its exit status and each error's (line, message).
Answer = tuple[int, list[tuple[int, str]]]


def is_shell(data: bytes) -> bool:
    """Is the script for a POSIX shell or bash (what `bash -n` can judge)?"""
    if not data.startswith(b"#!"):
        return True
    first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    words = first[2:].split()
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name == "env" and len(words) > 1:
        name = words[1].rsplit("/", 1)[-1]
    return name in ("bash", "sh", "dash", "ksh")


def violations(
    path: str, on_disk: Callable[[], Path], data: bytes, cache: BlockPack | None
) -> list[Violation]:
    """The script's syntax errors as GOV711 findings at `path`. `on_disk`
    writes the script where bash can read it (only when bash is asked)."""
    if not is_shell(data):
        return []
    bash = shutil.which("bash")
    if bash is None:
        return [
            violation(
                "GOV711", "bash is not installed: the syntax was not checked", path,
                hint="install bash",
            )
        ]  # fmt: skip
    key = digest(["bash-n", bash_identity(bash), data])
    answer = _remembered(cache.get(key)) if cache is not None else None
    if answer is None:
        try:
            answer = _ask(bash, on_disk())
        except subprocess.TimeoutExpired:
            return [
                violation("GOV711", "`bash -n` did not finish", path, hint="simplify the script")
            ]
        if cache is not None:
            cache.put(key, [answer[0], [list(error) for error in answer[1]]])
    code, errors = answer
    if code == 0:
        return []
    found = [
        violation(
            "GOV711", f"bash -n: {message}", path, line, 1,
            "fix the shell syntax; `bash -n SCRIPT` shows the same",
        )
        for line, message in errors
    ]  # fmt: skip
    return found or [
        violation("GOV711", f"bash -n failed (exit {code})", path, hint="run bash -n on it")
    ]


def bash_identity(bash: str) -> str:
    """Which bash answers: another build may judge the same bytes otherwise."""
    info = os.stat(bash)
    return f"{os.path.realpath(bash)}:{info.st_size}:{info.st_mtime_ns}"


def _ask(bash: str, file: Path) -> Answer:
    done = subprocess.run(
        [bash, "-n", str(file)],
        capture_output=True,
        timeout=BASH_TIMEOUT_SECONDS,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
    )
    errors = []
    for line in done.stderr.decode("utf-8", "replace").splitlines():
        match = _BASH_ERROR.match(line)
        if match:
            errors.append((int(match.group("line")), match.group("message")))
    return done.returncode, errors


def _remembered(value: Any) -> Answer | None:
    """A stored answer, or None when it is not one (a miss, never an error)."""
    if not (isinstance(value, list) and len(value) == 2 and type(value[0]) is int):
        return None
    errors = value[1]
    if not isinstance(errors, list) or not all(
        isinstance(e, list) and len(e) == 2 and type(e[0]) is int and isinstance(e[1], str)
        for e in errors
    ):
        return None
    return value[0], [(line, message) for line, message in errors]
