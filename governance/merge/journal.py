"""The prepare-merge journal: where every ref was, and how far a run got.

One JSON file per PR under `<git-dir>/gov/merge/pr-N.json`, rewritten
atomically (temporary file + fsync + rename) after every step, so a process
killed at any point leaves either the previous or the next journal, never a
torn one. A rerun reads it to undo what the dead run left behind.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from governance.core.atomic import write_atomically
from governance.core.crash import crash_point
from governance.core.diagnostics import UsageError
from governance.core.state import StateLayout

JOURNAL_VERSION = 1


@dataclass(slots=True)
class Journal:
    pr: int
    original_branch: str | None  # None: HEAD was detached
    original_head: str
    scratch_ref: str
    pr_head: str  # the PR head when the run started
    main_tip: str = ""
    prepared: str = ""  # the commit prepare-merge built (may equal pr_head)
    step: str = "started"  # the last step that completed
    done: bool = False  # the run finished (success); nothing left to undo
    pushed: bool = False
    merged: bool = False
    steps: list[str] = field(default_factory=list)
    pid: int = 0  # the process that owns the run
    version: int = JOURNAL_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: Path) -> Journal:
        try:
            data = json.loads(text)
            known = {f.name for f in fields(cls)}
            if not isinstance(data, dict) or data.get("version") != JOURNAL_VERSION:
                raise ValueError("unknown journal version")
            return cls(**{k: v for k, v in data.items() if k in known})
        except (ValueError, TypeError) as exc:
            raise UsageError(
                f"{where}: unreadable prepare-merge journal ({exc})",
                "inspect it, restore your branches by hand if needed, then delete the file",
            ) from exc


def owner_alive(journal: Journal) -> bool:
    """Is the run that wrote `journal` still running (another process)?"""
    if journal.done or not journal.pid or journal.pid == os.getpid():
        return False
    try:
        os.kill(journal.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


SCRATCH_PREFIX = "refs/gov/prepare-merge/"


def scratch_ref(pr: int) -> str:
    """The ref a run builds its result on: outside `refs/heads/`, so no user
    branch (not even one named `gov/prepare-merge/pr-N`) can be it."""
    return f"{SCRATCH_PREFIX}pr-{pr}"


def scratch_value(journal: Journal) -> str:
    """What the run set its scratch ref to (the prepared commit once
    `commit` moved it, the PR head before): the only value gov deletes."""
    return journal.prepared or journal.pr_head


def lock_path(git_dir: Path, pr: int) -> Path:
    """The per-PR lock every prepare-merge of PR `pr` holds from start to end."""
    return StateLayout(git_dir).locks / f"prepare-merge-pr-{pr}.lock"


def checkout_lock_path(git_dir: Path) -> Path:
    """The lock on the shared checkout (HEAD, index, working tree)."""
    return StateLayout(git_dir).locks / "checkout.lock"


def journal_path(git_dir: Path, pr: int) -> Path:
    return StateLayout(git_dir).merge_journal(pr)


def load(path: Path) -> Journal | None:
    if not path.is_file():
        return None
    return Journal.from_json(path.read_text("utf-8"), path)


def save(path: Path, journal: Journal) -> None:
    """Atomically replace the journal (a crash leaves the old or the new file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, journal.to_json().encode("utf-8"))


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def record(path: Path, journal: Journal, step: str) -> None:
    """Note that `step` completed, then honour the crash-test hook."""
    journal.step = step
    journal.steps.append(step)
    save(path, journal)
    crash_point(step)
