"""`gov queue run --watch`: passes until a signal, and SIGTERM as Ctrl-C for every run."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NoReturn

from governance.cli.common import emit, err

if TYPE_CHECKING:
    from governance.forge.base import Forge
    from governance.git.repo import GitRepo
    from governance.merge.queue import CarResult, LandCar, RunResult, Speculate
    from governance.merge.queue_store import QueueStore


def watch_cars(
    repo: GitRepo,
    store: QueueStore,
    forge: Forge,
    land_car: LandCar,
    main: str,
    interval: float,
    text: bool,
    say: Callable[[CarResult], None],
    speculate: Speculate | None = None,
) -> NoReturn:
    """`run --watch`: passes until a signal (Ctrl-C or SIGTERM: exit 130)."""
    import json

    from governance.merge.queue import watch_queue
    from governance.merge.queue_render import render_summary, run_data

    passes = 0

    def after_pass(result: RunResult) -> None:
        nonlocal passes
        passes += 1
        if text:
            emit(f"{render_summary(result)} (pass {passes}; next in {interval:g} s)")
        else:  # JSON Lines: one object per pass
            emit(json.dumps({"pass": passes, **run_data(result)}, ensure_ascii=False))
        sys.stdout.flush()

    try:
        watch_queue(
            repo, store, forge, land_car, main_branch=main, interval=interval,
            say=say if text else None, after_pass=after_pass, speculate=speculate,
        )  # fmt: skip
    except KeyboardInterrupt:
        # On stderr with JSON: stdout stays one JSON object per line.
        (emit if text else err)(f"gov queue run --watch: stopped after {passes} pass(es)")
        raise
    raise AssertionError("watch_queue returns only with max_passes or stop")


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a service manager's stop, a CI job's cancel) interrupts `run` as
    Ctrl-C does: prepare-merge rolls the car in flight back, the car waits
    again, exit 130. The previous handler is restored after."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
