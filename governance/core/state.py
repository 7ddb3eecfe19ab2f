"""gov's own state under `.git/gov/`: the one place that lays it out, and the
one SQLite helper its databases share.

```
.git/gov/
  forge.sqlite3        the embedded forge (pull requests, labels, checks)
  runs.sqlite3         the run ledger (one row per launched or reused plan row)
  queue.sqlite3        the merge queue (`gov queue`): cars and the paused flag
  results.sqlite3      the results database `gov results publish` writes (unless
                       `results-database` names another file or a PostgreSQL server)
  results/             sweep results (unless the `results` setting moves them): one folder
                       per run, runs/<launch token>/<job key>/ (sweeps/runfiles.py)
  matrix-cache/        parsed master-config blocks, keyed by content (one SQLite file)
  check-cache/         check findings, keyed by the bytes they were computed from
  shell-cache/         launch scripts' serving-engine flag uses, keyed by their bytes
  merge/pr-N.json      prepare-merge journals
  locks/               lock files of runs in progress
```

Living under the git directory keeps the state out of every commit and every
`git status`, and shared by all worktrees of one repository.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from governance.core.diagnostics import GovError


@dataclass(frozen=True, slots=True)
class StateLayout:
    """Where each kind of state lives, given the repository's common git dir."""

    git_dir: Path

    @property
    def root(self) -> Path:
        return self.git_dir / "gov"

    @property
    def forge_db(self) -> Path:
        return self.root / "forge.sqlite3"

    @property
    def runs_db(self) -> Path:
        return self.root / "runs.sqlite3"

    @property
    def queue_db(self) -> Path:
        return self.root / "queue.sqlite3"

    @property
    def results_db(self) -> Path:
        return self.root / "results.sqlite3"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def matrix_cache(self) -> Path:
        return self.root / "matrix-cache"

    @property
    def shell_cache(self) -> Path:
        return self.root / "shell-cache"

    @property
    def check_cache(self) -> Path:
        return self.root / "check-cache"

    @property
    def merge_journals(self) -> Path:
        return self.root / "merge"

    def merge_journal(self, pr: int) -> Path:
        return self.merge_journals / f"pr-{pr}.json"

    @property
    def locks(self) -> Path:
        return self.root / "locks"


ErrorFactory = Callable[[str], GovError]


class SqliteStore:
    """One SQLite file with a versioned schema.

    WAL lets readers proceed while a writer holds the lock; every write runs in
    one `BEGIN IMMEDIATE` transaction (the writer lock taken up front), so two
    processes never interleave a read-then-write, and a crash leaves a batch
    either whole or absent. `user_version` records the schema version: a file
    written by a newer gov is refused rather than misread.
    """

    def __init__(
        self, path: Path, label: str, schema: str, version: int, error: ErrorFactory
    ) -> None:
        self.path = path
        self.label = label
        self._error = error
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self.connect(write=True, setup=True) as conn:
                found = conn.execute("PRAGMA user_version").fetchone()[0]
                if found > version:
                    raise error(
                        f"{label} {path} has schema v{found}, newer than this gov knows (v{version})"
                    )
                for statement in filter(str.strip, schema.split(";")):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version}")
        except OSError as exc:
            raise error(f"cannot create {label} {path}: {exc.strerror}") from exc
        except GovError as exc:
            if exc.__cause__ is None:
                raise
            raise error(f"cannot open {label} {path}: {exc.__cause__}") from exc.__cause__

    @contextmanager
    def connect(self, *, write: bool, setup: bool = False) -> Iterator[sqlite3.Connection]:
        """A short-lived connection in one transaction: no lock outlives a call."""
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._error(f"cannot open {self.label} {self.path}: {exc}") from exc
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            if setup:  # persistent: set once, on creation or upgrade
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise  # a bug in the caller's statement, not a problem with the file
        except sqlite3.Error as exc:
            raise self._error(f"{self.label} {self.path}: {exc}") from exc
        finally:
            conn.close()
