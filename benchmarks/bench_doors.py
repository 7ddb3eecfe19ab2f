"""The everyday doors as whole processes: `gov check`, the pre-commit entry
point and `gov plan`, warm and cold, against the reference validator on the
same diff when it is present.

    .venv/bin/python benchmarks/bench_doors.py [--runs N] [--reference SCRIPT]

Clones ../shared/corpus/inferencex.bundle into a temporary folder; the diff is
the newest main commit (`HEAD~1..HEAD`, PR #2707, one appended entry). Each
figure is the median of N runs with min-max and the peak resident memory of
the slowest-memory run (from `wait4`). "cold" removes `.git/gov/` (every
cache) before each run. The reference is any executable taking the clone's
path as its only argument and running the reference's changelog validator on
HEAD~1..HEAD (`--reference`, or `GOV_REFERENCE`); without one its rows are
skipped and the reason printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BUNDLE = PROJECT.parent / "shared" / "corpus" / "inferencex.bundle"
BIN = Path(sys.executable).parent
GOV = str(BIN / "gov")
HOOK = str(BIN / "gov-pre-commit")
ENTRY = b"""
- config-keys:
    - dsr1-fp8-mi300x-sglang
  description:
    - "Benchmark the hook on a staged entry"
  pr-link: XXX
"""


@dataclass(frozen=True)
class Figure:
    name: str
    seconds: list[float]
    peak_mib: float

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def line(self) -> str:
        return (
            f"| {self.name:<44} | {self.median:6.3f} s | {min(self.seconds):.3f}-"
            f"{max(self.seconds):.3f} | {len(self.seconds):>2} | {self.peak_mib:5.0f} MiB |"
        )


def run_once(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MiB and exit code of one whole process."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, process.returncode


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOV_", "GITHUB_"))}


def measure(
    name: str, argv: list[str], cwd: Path, runs: int, before: Callable[[], None] | None = None
) -> Figure:
    seconds, peaks = [], []
    run_once(argv, cwd)  # page cache and .pyc files warm; caches filled unless `before` clears
    for _ in range(runs):
        if before is not None:
            before()
        elapsed, peak, code = run_once(argv, cwd)
        if code not in (0, 1):
            sys.exit(f"{name}: exit {code} ({' '.join(argv)})")
        seconds.append(elapsed)
        peaks.append(peak)
    return Figure(name, seconds, max(peaks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reference", default=os.environ.get("GOV_REFERENCE"))
    options = parser.parse_args()
    if not BUNDLE.is_file():
        sys.exit(f"skipped: the corpus bundle is not at {BUNDLE}")
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "inferencex"
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
        hook_clone = Path(tmp) / "hook"
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(hook_clone)], check=True)
        with (hook_clone / "perf-changelog.yaml").open("ab") as handle:
            handle.write(ENTRY)
        subprocess.run(["git", "add", "perf-changelog.yaml"], cwd=hook_clone, check=True)

        def forget(repo: Path) -> Callable[[], None]:
            return lambda: shutil.rmtree(repo / ".git" / "gov", ignore_errors=True)

        check = [GOV, "check", "--base-ref", "HEAD~1", "--head-ref", "HEAD", "--pr", "2707"]
        plan = [GOV, "plan", "--base-ref", "HEAD~1", "--head-ref", "HEAD"]
        n = options.runs
        figures = [
            measure("gov check HEAD~1..HEAD --pr 2707, warm", check, clone, n),
            measure("gov check, cold (no .git/gov)", check, clone, max(3, n // 3), forget(clone)),
            measure("pre-commit entry point, staged entry, warm", [HOOK], hook_clone, n),
            measure("gov plan HEAD~1..HEAD, warm", plan, clone, n),
            measure("gov plan, cold (no .git/gov)", plan, clone, max(3, n // 3), forget(clone)),
            measure("gov --help", [GOV, "--help"], clone, n),
        ]
        reference = None
        if options.reference:
            script = str(Path(options.reference).resolve())
            reference = measure("reference validator, same diff", [script, str(clone)], clone, 5)
            figures.append(reference)
    print("| what | median | min-max | n | peak memory |")
    print("|---|---|---|---|---|")
    for figure in figures:
        print(figure.line())
    if reference is None:
        print("reference: skipped (no --reference SCRIPT or GOV_REFERENCE given)")
    else:
        for figure in figures[:4]:
            print(f"ratio reference / {figure.name}: {reference.median / figure.median:5.1f}x")


if __name__ == "__main__":
    main()
