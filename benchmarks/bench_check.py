"""Speed of gov check / audit / --help on the corpus: median and spread of repeated runs.

    .venv/bin/python benchmarks/bench_check.py [--runs N] [--audit-runs N]

Clones ../shared/corpus/inferencex.bundle into a temporary directory and times
whole `gov` processes (wall clock), the way a hook or a CI job pays for them.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BUNDLE = PROJECT.parent / "shared" / "corpus" / "inferencex.bundle"
GOV = str(Path(sys.executable).parent / "gov")


def timed(
    args: list[str], cwd: Path, runs: int, before: Callable[[], None] | None = None
) -> list[float]:
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        subprocess.run(
            args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append(time.perf_counter() - start)
    return samples


def report(name: str, samples: list[float]) -> None:
    median = statistics.median(samples)
    spread = max(samples) - min(samples)
    print(
        f"{name:<58} median {median:7.3f} s   min {min(samples):7.3f}   max {max(samples):7.3f}   "
        f"spread {spread:6.3f}   n={len(samples)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--audit-runs", type=int, default=3)
    options = parser.parse_args()
    if not BUNDLE.is_file():
        sys.exit(f"corpus bundle not found at {BUNDLE}")
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "inferencex"
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(clone)], check=True)
        report("gov --help", timed([GOV, "--help"], clone, options.runs))
        check = [GOV, "check", "--base-ref", "HEAD~1", "--head-ref", "HEAD", "--pr", "2707"]

        def forget() -> None:  # the plan findings and parsed master blocks
            shutil.rmtree(clone / ".git" / "gov", ignore_errors=True)

        report("gov check newest main commit, cold caches", timed(check, clone, 5, forget))
        report("gov check newest main commit (append fast path)", timed(check, clone, options.runs))
        report(
            "gov check newest main commit --no-configs",
            timed([*check, "--no-configs"], clone, options.runs),
        )
        report(
            "gov check newest main commit --full", timed([*check, "--full"], clone, options.runs)
        )
        audit = [GOV, "audit", "main", "--no-configs", "--format", "jsonl"]
        report("gov audit --no-configs (830 commits)", timed(audit, clone, options.audit_runs))


if __name__ == "__main__":
    main()
