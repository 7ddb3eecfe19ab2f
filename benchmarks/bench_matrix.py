"""Benchmark the matrix engine on the shared corpus.

    .venv/bin/python benchmarks/bench_matrix.py [--repeat N] [--repo CLONE]

Measures (wall clock, median and spread over repeated runs):
* `plan`: `gov plan` for the newest corpus `main` commit (main^..main),
  cold (empty parse cache) and warm (cache filled by an earlier run);
* `matrix`: rows for every config key of corpus `main` in all four eval
  modes, cold and warm.
Targets: plan < 0.5 s, matrix (all keys, all modes) < 10 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from governance.core.blockcache import BlockCache  # noqa: E402
from governance.core.settings import Settings  # noqa: E402
from governance.git.repo import GitRepo  # noqa: E402
from governance.matrix.expand import EvalMode, generate  # noqa: E402
from governance.matrix.sources import catalog_at, plan_between  # noqa: E402

BUNDLE = ROOT / ".." / "shared" / "corpus" / "inferencex.bundle"


def clone_corpus(target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(target)], check=True)
    return target


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def report(name: str, samples: list[float]) -> None:
    spread = statistics.pstdev(samples) if len(samples) > 1 else 0.0
    print(
        f"{name:<28} median {statistics.median(samples):7.3f} s   "
        f"min {min(samples):7.3f}   max {max(samples):7.3f}   stdev {spread:6.3f}   "
        f"(n={len(samples)})"
    )


def plan_once(repo_path: Path, cache_dir: Path, validate_all: bool = True) -> None:
    repo = GitRepo(repo_path)
    plan_between(
        repo,
        "main^",
        "main",
        layout=Settings().layout(),
        cache=BlockCache(cache_dir),
        validate_all=validate_all,
    )


def matrix_once(repo_path: Path, cache_dir: Path) -> int:
    catalog = catalog_at(GitRepo(repo_path), "main", Settings().layout(), BlockCache(cache_dir))
    count = 0
    for key in catalog.keys:
        for mode in EvalMode:
            count += len(generate(catalog, [key], mode))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--repo", type=Path, help="existing clone of the corpus bundle")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        repo = args.repo or clone_corpus(scratch_path / "corpus")
        head = GitRepo(repo).resolve("main")
        print(f"corpus main = {head[:12]}; {args.repeat} repeats")
        cold = [
            timed(lambda i=i: plan_once(repo, scratch_path / f"plan-cold-{i}"))
            for i in range(max(1, args.repeat // 3))
        ]
        report("plan cold (empty cache)", cold)
        selected = [
            timed(lambda i=i: plan_once(repo, scratch_path / f"plan-sel-{i}", False))
            for i in range(args.repeat)
        ]
        report("plan cold, selected only", selected)
        warm_dir = scratch_path / "warm"
        plan_once(repo, warm_dir)
        report("plan warm", [timed(lambda: plan_once(repo, warm_dir)) for _ in range(args.repeat)])
        rows = matrix_once(repo, warm_dir)
        print(f"matrix: {rows} rows over all keys x {len(EvalMode)} modes")
        cold = [
            timed(lambda i=i: matrix_once(repo, scratch_path / f"matrix-cold-{i}"))
            for i in range(max(1, args.repeat // 3))
        ]
        report("matrix all keys cold", cold)
        report(
            "matrix all keys warm",
            [timed(lambda: matrix_once(repo, warm_dir)) for _ in range(args.repeat)],
        )


if __name__ == "__main__":
    main()
