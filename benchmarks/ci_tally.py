"""The README's CI command on every PR branch of the corpus: pass/fail counts by code.

    .venv/bin/python benchmarks/ci_tally.py [--limit N] [--json FILE]

Clones ../shared/corpus/inferencex.bundle (every `pr/*` branch) into a
temporary folder and runs, per branch, what the `check-changelog` job runs:
`gov check --base-ref origin/main --head-ref <branch tip>` (draft mode: the
corpus branches carry no PR number), with `--format json` so the findings can
be counted. It prints how many branches pass, how many touch no changelog
entry ("nothing appended"), and per finding code how many branches it fails;
with `--json` it also writes each branch's verdict, so two runs (before and
after a change) can be compared branch by branch.

A branch forked before InferenceX moved its master configs to `configs/`
(#1992) has no master configs in this bundle at all (it holds only the
changelog and `configs/`), so GOV510 there is the right answer, not a layout miss.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
BUNDLE = PROJECT.parent / "shared" / "corpus" / "inferencex.bundle"
GOV = str(Path(sys.executable).parent / "gov")


def clone(target: Path) -> None:
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(target)], check=True)
    subprocess.run(
        ["git", "fetch", "-q", str(BUNDLE), "+refs/heads/pr/*:refs/remotes/origin/pr/*"],
        cwd=target,
        check=True,
    )


def branches(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname:short)", "refs/remotes/origin/pr/"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(out.split())


def verdict(repo: Path, branch: str) -> dict[str, object]:
    done = subprocess.run(
        [GOV, "check", "--base-ref", "origin/main", "--head-ref", branch, "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"branch": branch, "exit": done.returncode, "codes": [], "error": done.stderr[-300:]}
    codes = sorted({v["code"] for v in data.get("violations", [])})
    return {
        "branch": branch,
        "exit": done.returncode,
        "codes": codes,
        "appended": len(data.get("additions", [])),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N branches")
    parser.add_argument("--json", type=Path, help="write every branch's verdict here")
    args = parser.parse_args()
    if not BUNDLE.exists():
        print(f"skipped: {BUNDLE} is absent", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "corpus"
        clone(repo)
        names = branches(repo)[: args.limit or None]
        started = time.monotonic()
        results = [verdict(repo, name) for name in names]
        took = time.monotonic() - started
    by_code: collections.Counter[str] = collections.Counter()
    for result in results:
        by_code.update(result["codes"])  # type: ignore[arg-type]
    passed = sum(1 for r in results if r["exit"] == 0)
    empty = sum(1 for r in results if r["exit"] == 0 and not r.get("appended"))
    errors = sum(1 for r in results if "error" in r)
    print(f"{len(results)} branches in {took:.0f} s: {passed} pass ({empty} append nothing), "
          f"{len(results) - passed} fail, {errors} without a JSON verdict")  # fmt: skip
    for code, count in sorted(by_code.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {code}  {count:4d} branch(es)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
