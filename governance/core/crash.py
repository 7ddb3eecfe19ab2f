"""Test-only crash points: die like a power cut where a test asks.

`crash_point(step)` sends this process SIGKILL when `GOV_TEST_CRASH_AFTER`
names `step` (docs/prepare-merge.md, "Crash testing"). The kill tests set it
to prove that a process killed at that point leaves nothing a rerun cannot
finish or undo. Never set it in real use.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "GOV_TEST_CRASH_AFTER"


def crash_point(step: str) -> None:
    """SIGKILL this process when GOV_TEST_CRASH_AFTER names `step`."""
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
