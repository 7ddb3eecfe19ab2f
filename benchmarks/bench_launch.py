"""Benchmark `gov launch` on the shared corpus and the local launcher's overhead.

    .venv/bin/python benchmarks/bench_launch.py [--repeat N] [--rows N] [--repo CLONE]

Measures (wall clock, median and spread over repeated runs):
* `launch --dry-run`: the `gov launch --dry-run` process for the full plan of
  the newest corpus `main` commit (every config key, throughput and eval rows),
  against a scripts folder holding the first candidate script of every row;
* `gov launch startup`: the same command on an empty plan (the fixed cost of
  the CLI: imports, opening the repository, settings), to separate it;
* `resolve (in process)`: `load_plan` + `resolve_rows` alone for that plan;
* `local launcher / row`: `launch_rows` (result folder, row JSON, process,
  result check, ledger) for N rows of a script that only writes its result
  file, run one at a time, divided by N.
Targets: dry run < 1 s, launcher overhead < 50 ms per row. The machine's
load average is printed too: on a shared machine, compare the dry run with
the startup line (what every gov command pays) and the in-process time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from governance.core.fingerprint import recipe_fingerprint  # noqa: E402
from governance.core.settings import Settings  # noqa: E402
from governance.git.repo import GitRepo  # noqa: E402
from governance.matrix.expand import EvalMode, generate  # noqa: E402
from governance.matrix.plan import PlanOptions, assemble  # noqa: E402
from governance.matrix.row_fields import normalise_row  # noqa: E402
from governance.matrix.sources import catalog_at  # noqa: E402
from governance.sweeps.dispatch import launch_rows  # noqa: E402
from governance.sweeps.identity import plan_rows  # noqa: E402
from governance.sweeps.ledger import Ledger  # noqa: E402
from governance.sweeps.local_launcher import LocalLauncher  # noqa: E402
from governance.sweeps.naming import ScriptResolver  # noqa: E402
from governance.sweeps.plan_file import load_plan  # noqa: E402
from governance.sweeps.resolve import resolve_rows  # noqa: E402

BUNDLE = ROOT / ".." / "shared" / "corpus" / "inferencex.bundle"
GOV = Path(sys.executable).parent / "gov"


def report(name: str, samples: list[float], unit: str = "s", scale: float = 1.0) -> None:
    values = [s * scale for s in samples]
    spread = statistics.pstdev(values) if len(values) > 1 else 0.0
    print(
        f"{name:<26} median {statistics.median(values):8.3f} {unit}   min {min(values):8.3f}   "
        f"max {max(values):8.3f}   stdev {spread:7.3f}   (n={len(values)})"
    )


def full_plan(repo: GitRepo) -> dict:
    """Every config key of main: what a plan naming them all would hold."""
    catalog = catalog_at(repo, "main", Settings().layout())
    throughput = generate(catalog, ["*"], EvalMode.NO_EVALS)
    for row in throughput:
        row["recipe-fingerprint"] = recipe_fingerprint(row)
    evals = generate(catalog, ["*"], EvalMode.EVALS_ONLY)
    options = PlanOptions(base_ref="main^", head_ref="main", changelog_path=Settings().changelog)
    document = assemble(throughput, evals, [], options)
    json.dumps(document)  # fail here, not in gov, if something is not JSON
    return document


def scripts_for(document: dict, folder: Path) -> int:
    """Create the first candidate script of every row (so every row resolves)."""
    resolver = ScriptResolver(folder)
    made = set()
    for row in plan_rows(document):
        found = resolver.resolve(row)
        if found.tried and found.tried[0] not in made:
            path = folder / found.tried[0]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("#!/bin/sh\nexit 0\n")
            path.chmod(0o755)
            made.add(found.tried[0])
    return len(made)


def bench_in_process(plan: Path, scripts: Path, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        document = load_plan(plan)
        resolve_rows(
            plan_rows(document),
            ScriptResolver(scripts),
            plan.parent / "r",
            machine="m",
            build=False,
        )
        samples.append(time.perf_counter() - start)
    return samples


def bench_dry_run(repo_path: Path, plan: Path, scripts: Path, repeat: int) -> list[float]:
    env = {**os.environ, "GOV_SCRIPTS": str(scripts)}
    command = [str(GOV), "-C", str(repo_path), "launch", "--plan", str(plan), "--dry-run"]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        samples.append(time.perf_counter() - start)
        # 1: some rows do not resolve (corpus main has recipe rows whose recipe
        # is missing); the dry run still did all its work. 2 or more: it did not.
        if done.returncode not in (0, 1):
            raise SystemExit(
                f"dry run failed (exit {done.returncode}): {(done.stderr or done.stdout)[-2000:]}"
            )
    if done.stdout.strip():
        print("  " + done.stdout.splitlines()[-1])
    return samples


def bench_launcher(scratch: Path, rows: int, repeat: int) -> list[float]:
    scripts = scratch / "trivial"
    script = scripts / "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh"
    script.parent.mkdir(parents=True)
    script.write_text('#!/bin/sh\n: > "$RESULT_DIR/$RESULT_FILENAME.json"\n')
    script.chmod(0o755)
    base = {
        "image": "i",
        "model": "m",
        "model-prefix": "dsr1",
        "precision": "fp8",
        "framework": "sglang",
        "spec-decoding": "none",
        "runner": "mi300x",
        "isl": 1024,
        "osl": 1024,
        "tp": 8,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "max-model-len": 2304,
        "exp-name": "dsr1_1k1k",
        "disagg": False,
        "run-eval": False,
    }
    table = [normalise_row({**base, "conc": conc}) for conc in range(1, rows + 1)]
    for row in table:
        row["recipe-fingerprint"] = recipe_fingerprint(row)
    document = {"single_node": {"1k1k": table}, "multi_node": {}}
    samples = []
    for attempt in range(repeat):
        resolved = resolve_rows(
            plan_rows(document), ScriptResolver(scripts), scratch / f"r{attempt}", machine="bench"
        )
        with Ledger(scratch / "runs.sqlite3") as ledger:
            start = time.perf_counter()
            result = launch_rows(
                resolved, LocalLauncher(), ledger, commit="0" * 40, pr=None, parallel=1
            )
            samples.append((time.perf_counter() - start) / rows)
        assert result.ok, [o.detail for o in result.outcomes if o.detail][:3]
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--repo", type=Path, help="existing clone of the corpus bundle")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        report("local launcher / row", bench_launcher(scratch, args.rows, args.repeat), "ms", 1000)
        if args.repo is None and not BUNDLE.is_file():
            print(f"corpus bundle not found at {BUNDLE}: dry-run benchmark skipped")
            return
        repo_path = args.repo
        if repo_path is None:
            repo_path = scratch / "corpus"
            subprocess.run(["git", "clone", "-q", str(BUNDLE), str(repo_path)], check=True)
        repo = GitRepo(repo_path)
        document = full_plan(repo)
        plan = scratch / "plan.json"
        plan.write_text(json.dumps(document))
        made = scripts_for(document, scratch / "scripts")
        count = len(plan_rows(document))
        print(f"corpus main = {repo.resolve('main')[:12]}: {count} rows, {made} scripts")
        scripts = scratch / "scripts"
        report("launch --dry-run (all keys)", bench_dry_run(repo_path, plan, scripts, args.repeat))
        empty = scratch / "empty.json"
        empty.write_text('{"single_node": {}}')
        report("gov launch startup", bench_dry_run(repo_path, empty, scripts, args.repeat))
        report("resolve (in process)", bench_in_process(plan, scripts, args.repeat))


if __name__ == "__main__":
    main()
