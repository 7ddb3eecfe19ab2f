"""Priority order, --canary and --fail-fast with real processes: the launch
service, the local launcher and the ledger. Every outcome here is decided by
the scripts (a recipe whose image says `broken` fails; a `blocker` row waits
for a file that never comes), never by timing."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from governance.core.settings_priority import PriorityRule
from governance.sweeps.dispatch import LaunchResult, launch_rows
from governance.sweeps.identity import plan_rows
from governance.sweeps.ledger import Ledger, LedgerRun
from governance.sweeps.local_launcher import LocalLauncher
from governance.sweeps.naming import ScriptResolver
from governance.sweeps.priority import key_index
from governance.sweeps.resolve import resolve_rows
from governance.sweeps.schedule import Schedule
from governance.sweeps.slurm_client import SlurmError
from tests.sweeps.conftest import make_row, plan_of, write_script
from tests.sweeps.test_local import alive

SCRIPT = "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh"
BODY = """\
launch=$(dirname "$RESULT_DIR")
echo "$IMAGE $CONC" >> "$launch/order.log"
case "$IMAGE" in
  *late-broken*)
    while [ ! -e "$launch/blocker.pid" ]; do sleep 0.02; done
    exit 3 ;;
  *broken*) exit 3 ;;
  *blocker*)
    echo $$ > "$launch/blocker.pid"
    while [ ! -e "$launch/never" ]; do sleep 0.02; done ;;
esac
printf '{}' > "$RESULT_DIR/$RESULT_FILENAME.json"
"""


def rows_of(image: str, *concs: int) -> list[dict[str, Any]]:
    return [make_row(image=image, conc=c) for c in concs]


def launch(
    tmp_path: Path,
    rows: list[dict[str, Any]],
    schedule: Schedule,
    *,
    parallel: int = 1,
    launcher: Any = None,
) -> tuple[LaunchResult, list[LedgerRun], list[str]]:
    scripts = tmp_path / "scripts"
    write_script(scripts, SCRIPT, BODY)
    resolved = resolve_rows(
        plan_rows(plan_of(rows)), ScriptResolver(scripts), tmp_path / "results", machine="local"
    )
    with Ledger(tmp_path / "runs.sqlite3") as ledger:
        result = launch_rows(
            resolved,
            launcher or LocalLauncher(),
            ledger,
            commit="0" * 40,
            pr=7,
            parallel=parallel,
            schedule=schedule,
        )
        runs = ledger.runs()
    [log] = (tmp_path / "results").glob("runs/*/order.log")
    return result, runs, log.read_text().splitlines()


def statuses(result: LaunchResult) -> list[tuple[str, str, str]]:
    return [(o.job.env["IMAGE"], o.job.env["CONC"], str(o.status)) for o in result.outcomes]


def key_of(result: LaunchResult, image: str, conc: int) -> str:
    [key] = [
        o.job.key
        for o in result.outcomes
        if o.job.env["IMAGE"] == image and o.job.env["CONC"] == str(conc)
    ]
    return key


def test_canary_stops_only_the_recipe_whose_canary_failed(tmp_path: Path) -> None:
    rows = rows_of("good", 4, 8, 16) + rows_of("broken", 4, 8, 16)
    result, runs, order = launch(tmp_path, rows, Schedule(canary=True))
    # the canaries (first row of each recipe) ran first, then only the good recipe
    assert order == ["good 4", "broken 4", "good 8", "good 16"]
    canary = key_of(result, "broken", 4)
    assert statuses(result) == [
        ("good", "4", "succeeded"),
        ("good", "8", "succeeded"),
        ("good", "16", "succeeded"),
        ("broken", "4", "failed"),
        ("broken", "8", "cancelled"),
        ("broken", "16", "cancelled"),
    ]
    assert result.stopped == {
        key_of(result, "broken", c): f"canary failed: {canary}" for c in (8, 16)
    }
    assert not result.ok and not result.interrupted  # a failure (exit 1), not Ctrl-C
    recorded = {run.job_key: (run.status, run.detail) for run in runs}
    assert len(runs) == 6  # nothing silently dropped: every row is in the ledger
    assert recorded[key_of(result, "broken", 16)] == ("cancelled", f"canary failed: {canary}")


def test_canary_with_every_canary_passing_runs_everything(tmp_path: Path) -> None:
    rows = rows_of("a", 4, 8) + rows_of("b", 4, 8)
    result, _runs, order = launch(tmp_path, rows, Schedule(canary=True), parallel=2)
    assert order[:2] == ["a 4", "b 4"] or order[:2] == ["b 4", "a 4"]
    assert sorted(order[2:]) == ["a 8", "b 8"]
    assert result.ok and not result.stopped


def test_fail_fast_stops_the_rest_at_the_first_failed_row(tmp_path: Path) -> None:
    rows = rows_of("broken", 4) + rows_of("good", 4, 8)
    result, runs, order = launch(tmp_path, rows, Schedule(fail_fast=True))
    assert order == ["broken 4"]  # nothing started after the failure
    first = key_of(result, "broken", 4)
    assert [s for _, _, s in statuses(result)] == ["failed", "cancelled", "cancelled"]
    assert set(result.stopped.values()) == {f"fail-fast: {first} failed"}
    assert not result.interrupted
    assert {run.detail for run in runs if run.status == "cancelled"} == {
        f"fail-fast: {first} failed (not started)"
    }


def test_fail_fast_kills_running_rows_by_process_group(tmp_path: Path) -> None:
    # parallel 2: the blocker runs (and never ends by itself) when the other
    # row fails; the third row waits for a slot.
    rows = rows_of("blocker", 4) + rows_of("late-broken", 4) + rows_of("good", 4)
    result, runs, order = launch(tmp_path, rows, Schedule(fail_fast=True), parallel=2)
    assert sorted(order) == ["blocker 4", "late-broken 4"]
    first = key_of(result, "late-broken", 4)
    assert statuses(result) == [
        ("blocker", "4", "cancelled"),
        ("late-broken", "4", "failed"),
        ("good", "4", "cancelled"),
    ]
    [pid_file] = (tmp_path / "results").glob("runs/*/blocker.pid")
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    detail = {run.job_key: run.detail for run in runs}
    assert detail[key_of(result, "blocker", 4)] == f"fail-fast: {first} failed (cancelled)"
    assert detail[key_of(result, "good", 4)] == f"fail-fast: {first} failed (not started)"


class NoCancel:
    """A launcher that cannot cancel (only `name` and `launch`)."""

    name = "no-cancel"

    def __init__(self) -> None:
        self.calls: list[int] = []
        self._inner = LocalLauncher()

    def launch(self, jobs: Sequence[Any], *, parallel: int, on_event: Any = None) -> list[Any]:
        self.calls.append(len(jobs))
        return self._inner.launch(jobs, parallel=parallel, on_event=on_event)


def test_fail_fast_without_cancel_goes_in_waves(tmp_path: Path) -> None:
    rows = rows_of("good", 4, 8) + rows_of("broken", 4) + rows_of("good", 16, 32)
    launcher = NoCancel()
    result, _runs, order = launch(
        tmp_path, rows, Schedule(fail_fast=True), parallel=2, launcher=launcher
    )
    assert launcher.calls == [2, 2]  # the third wave never started
    assert sorted(order) == ["broken 4", "good 16", "good 4", "good 8"]
    assert [s for _, _, s in statuses(result)][-1] == "cancelled"
    assert len(result.stopped) == 1


def test_order_follows_priority_and_ties_keep_the_plan_order(tmp_path: Path) -> None:
    rows = rows_of("cold", 4, 8) + rows_of("hot", 4, 8) + rows_of("warm", 4)
    keys = key_index(
        {
            "cold-key": rows_of("cold", 4),
            "hot-key": rows_of("hot", 4),
            "warm-key": rows_of("warm", 4),
        }
    )
    rules = (
        PriorityRule("hot", config_keys=("hot-*",), add=2.0),
        PriorityRule("warm", config_keys=("warm-*", "hot-*"), add=1.0),
        PriorityRule("urgent", labels=("urgent",), config_keys=("cold-*",), set=9.0),
    )
    result, _runs, order = launch(tmp_path, rows, Schedule(rules, frozenset(), keys))
    assert order == ["hot 4", "hot 8", "warm 4", "cold 4", "cold 8"]
    assert result.scores[key_of(result, "hot", 8)] == 3.0
    # a label turns the order around
    again, _runs, order = launch(tmp_path / "2", rows, Schedule(rules, frozenset({"urgent"}), keys))
    assert order == ["cold 4", "cold 8", "hot 4", "hot 8", "warm 4"]
    nice = {o.job.env["IMAGE"]: o.job.nice for o in again.outcomes}
    assert nice == {"cold": 0, "hot": 600, "warm": 800}


class Refuses:
    """A launcher whose submissions after the first `ok` ones are refused
    (what SlurmError reports when sbatch says no)."""

    name = "refuses"

    def __init__(self, ok: int) -> None:
        self.ok = ok
        self._inner = LocalLauncher()

    def launch(self, jobs: Sequence[Any], *, parallel: int, on_event: Any = None) -> list[Any]:
        if self.ok == 0:
            raise SlurmError("sbatch failed (exit 1): invalid partition specified")
        self.ok -= 1
        return self._inner.launch(jobs, parallel=parallel, on_event=on_event)


def test_a_refused_later_phase_keeps_what_the_canaries_measured(tmp_path: Path) -> None:
    rows = rows_of("a", 4, 8)
    result, runs, order = launch(tmp_path, rows, Schedule(canary=True), launcher=Refuses(1))
    assert order == ["a 4"]
    assert statuses(result) == [("a", "4", "succeeded"), ("a", "8", "failed")]
    assert [run.detail for run in runs] == [
        "",
        "not launched: GOV706 launch-rejected: sbatch failed (exit 1): invalid partition specified",
    ]
    with pytest.raises(SlurmError):  # nothing ran: refused as before, nothing recorded
        launch(tmp_path / "2", rows, Schedule(canary=True), launcher=Refuses(0))
    with Ledger(tmp_path / "2" / "runs.sqlite3") as ledger:
        assert ledger.runs() == []
