"""The ledger's `launches` table: rows handed to a launcher, open until their
run is recorded (docs/sweeps.md, 'What survives a kill').

A launch is opened (one transaction for a batch) before its launcher starts
it, with the row identity, the folder it runs in and its owner, the gov
process waiting on it (`<pid>:<start time>`); `Ledger.add` closes it in the
transaction that records its run. A launch still open whose owner is gone is
a dead gov's: the next run that needs the same row identity claims it
(compare-and-swap on the owner, so two restarted runs never both take it)
and adopts it (`adopt`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from governance.sweeps.launch_record import same_process, start_time
from governance.sweeps.ledger import Ledger


@dataclass(frozen=True, slots=True)
class OpenLaunch:
    result_path: str  # the row's own folder
    token: str  # the launch token (the folder's parent)
    job_key: str
    identity: str  # RowIdentity digest; "" when the row's harness was not traced
    launcher: str
    commit_sha: str
    pr: int | None
    owner: str  # "<pid>:<start time>" of the gov waiting on it
    created_at: str


_COLUMNS = ", ".join(f.name for f in fields(OpenLaunch))


def me() -> str:
    """The owner value of this process."""
    pid = os.getpid()
    return f"{pid}:{start_time(pid)}"


def owner_alive(owner: str) -> bool:
    """The gov process named by `owner` still runs (same pid, same start time)."""
    pid, _, started = owner.partition(":")
    return pid.isdigit() and same_process(int(pid), started)


class Launches:
    def __init__(self, ledger: Ledger) -> None:
        self._store = ledger._store

    def open(self, launches: Sequence[OpenLaunch]) -> None:
        """Record launches about to start, in one transaction."""
        marks = ", ".join("?" * len(fields(OpenLaunch)))
        with self._store.connect(write=True) as conn:
            conn.executemany(
                f"INSERT OR REPLACE INTO launches ({_COLUMNS}) VALUES ({marks})",
                [tuple(getattr(item, f.name) for f in fields(OpenLaunch)) for item in launches],
            )

    def unowned(self, identities: Iterable[str], launcher: str) -> list[OpenLaunch]:
        """Open launches of these identities whose owner is gone, newest first."""
        wanted = sorted(set(identities) - {""})
        found: list[OpenLaunch] = []
        with self._store.connect(write=False) as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = conn.execute(
                    f"SELECT {_COLUMNS} FROM launches WHERE closed = 0 AND launcher = ? "
                    f"AND identity IN ({', '.join('?' * len(chunk))})",
                    (launcher, *chunk),
                )
                found += [OpenLaunch(*tuple(row)) for row in rows]
        found.sort(key=lambda item: item.created_at, reverse=True)
        return [item for item in found if not owner_alive(item.owner)]

    def claim(self, launch: OpenLaunch, owner: str) -> bool:
        """Take over an open launch from its dead owner; False when another run did."""
        with self._store.connect(write=True) as conn:
            cursor = conn.execute(
                "UPDATE launches SET owner = ? WHERE result_path = ? AND owner = ? AND closed = 0",
                (owner, launch.result_path, launch.owner),
            )
            return cursor.rowcount == 1

    def close_unstarted(self, result_path: str) -> None:
        """Close a launch whose script never ran (nothing to record)."""
        with self._store.connect(write=True) as conn:
            conn.execute("UPDATE launches SET closed = 1 WHERE result_path = ?", (result_path,))

    def still_open(self) -> list[OpenLaunch]:
        """Every open launch (what `gov runs` and the tests look at)."""
        with self._store.connect(write=False) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM launches WHERE closed = 0")
            return [OpenLaunch(*tuple(row)) for row in rows]
