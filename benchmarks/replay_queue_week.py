"""One real week through `gov queue run --no-sweep` (issue 20's measurement).

    .venv/bin/python benchmarks/replay_queue_week.py [--keep DIR] [--ahead N]

Clones ../shared/corpus/inferencex.bundle with every branch into a temporary
folder (or DIR). The week: the corpus PR branches whose last commit is dated
2026-08-15..22, one per PR number (its latest push; the number is the one the
branch's links name, `inferred.pr_number` in goldens/rules/pr-branches.jsonl;
branches that name none are left out), in order of last push, kept when they
pass on their own (`gov check --base-ref MERGE-BASE --head-ref BRANCH --pr N`).
Each is opened on the local forge and enqueued in that order on main's tip,
then one `gov queue run --no-sweep` lands them. It prints, per car, the
outcome, the step and finding code of a refusal, whether the changelog
conflicted (and was resolved), and the wall time; then what a sequential
stop-on-first-failure run of the same order lands (the cars before the first
refusal).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared" / "corpus"
BUNDLE = SHARED / "inferencex.bundle"
GOLDENS = SHARED / "goldens" / "rules" / "pr-branches.jsonl"
GOV = str(Path(sys.executable).parent / "gov")
WEEK = ("2026-08-15", "2026-08-22")


def run(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def clone(target: Path) -> None:
    run(target.parent, "git", "clone", "-q", str(BUNDLE), target.name)
    run(target, "git", "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")
    for key, value in (("user.name", "gov replay"), ("user.email", "replay@example.invalid")):
        run(target, "git", "config", key, value)
    run(target, "git", "config", "commit.gpgsign", "false")


def week(repo: Path) -> list[tuple[str, str, int]]:
    """(last push, branch, PR number), one per number, oldest push first."""
    latest: dict[int, tuple[str, str, int]] = {}
    for line in GOLDENS.read_text().splitlines():
        row = json.loads(line)
        if not row.get("inferred"):
            continue
        number, branch = row["inferred"]["pr_number"], row["branch"]
        pushed = run(repo, "git", "log", "-1", "--format=%cI", branch).stdout.strip()
        if not WEEK[0] <= pushed[:10] <= WEEK[1]:
            continue
        stamp = run(repo, "git", "log", "-1", "--format=%ct", branch).stdout.strip()
        if number not in latest or stamp > latest[number][0]:
            latest[number] = (stamp, branch, number)
    return sorted(latest.values())


def passes_alone(repo: Path, branch: str, number: int) -> bool:
    base = run(repo, "git", "merge-base", branch, "main").stdout.strip()
    done = run(repo, GOV, "check", "--base-ref", base, "--head-ref", branch,
               "--pr", str(number), check=False)  # fmt: skip
    return done.returncode == 0


def codes(report: dict[str, object]) -> str:
    steps = report.get("steps") or []
    found = {v["code"] for s in steps for v in s.get("violations", [])}  # type: ignore[union-attr]
    return ",".join(sorted(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="clone here and keep it")
    parser.add_argument("--ahead", type=int, default=0, help="gov queue run --ahead N")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="gov-replay-"))
    repo = work / "inferencex"
    work.mkdir(parents=True, exist_ok=True)
    clone(repo)
    candidates = week(repo)
    cars = [(b, n) for _s, b, n in candidates if passes_alone(repo, b, n)]
    print(f"week {WEEK[0]}..{WEEK[1]}: {len(candidates)} PR(s), {len(cars)} pass on their own")
    for branch, number in cars:
        run(repo, GOV, "pr", "open", "--number", str(number), "--branch", branch)
        run(repo, GOV, "queue", "add", "--pr", str(number))
    started, wall = time.monotonic(), time.time()
    ahead = ("--ahead", str(args.ahead)) if args.ahead else ()
    done = run(repo, GOV, "queue", "run", "--no-sweep", *ahead, "--format", "json", check=False)
    total = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    result = json.loads(done.stdout)
    status = json.loads(run(repo, GOV, "queue", "status", "--format", "json").stdout)
    finished = {car["pr"]: car["updated_at"] for car in status["cars"]}
    stamps = [finished[c["pr"]] for c in result["cars"]]
    times = [datetime.fromisoformat(s).timestamp() for s in stamps]
    print("| # | PR | branch | outcome | step / codes | changelog conflict | wall s |")
    print("|---|---|---|---|---|---|---|")
    landed_prefix, stopped = 0, False
    resolved = 0
    previous = wall  # the first car's time includes the process start
    for index, (car, at) in enumerate(zip(result["cars"], times, strict=True), 1):
        report = car["report"] or {}
        merge = next((s for s in report.get("steps", []) if s["name"] == "merge"), None)
        conflict = bool(merge and re.search(r"perf-changelog\.yaml conflicts", merge["detail"]))
        refused = car["outcome"] == "refused"
        resolved += conflict and not (refused and car["step"] in ("merge", "resolve"))
        if refused:
            stopped = True
        elif not stopped:
            landed_prefix += 1
        where = f"{car['step']} {codes(report)}".strip() if refused else ""
        branch = next(b for b, n in cars if n == car["pr"])
        print(f"| {index} | {car['pr']} | {branch} | {car['outcome']} | {where} |"
              f" {'yes' if conflict else 'no'} | {at - previous:.1f} |")  # fmt: skip
        previous = at
    landed = sum(car["outcome"] == "landed" for car in result["cars"])
    print(f"gov queue: {landed} landed, {len(result['cars']) - landed} refused,"
          f" {resolved} changelog conflict(s) resolved, {total:.1f} s in all;"
          f" stop-on-first-failure lands {landed_prefix}")  # fmt: skip
    tree = run(repo, "git", "rev-parse", "main^{tree}").stdout.strip()
    print(f"main's tree after the run: {tree} (--ahead {args.ahead})")
    print(f"clone: {repo}" if args.keep else "")


if __name__ == "__main__":
    main()
