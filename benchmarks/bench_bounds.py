"""Time of hostile changelogs through check, plan's reader and text rendering.

    .venv/bin/python benchmarks/bench_bounds.py [--scale 1.0] [--case NAME ...]

Each case is one appended entry built to be expensive (docs/security.md,
"Bounds"); the answer must come quickly and be a located finding. Each case
runs in its own process (a crash or a timeout is reported as such); the
sizes are those of the attacks in issue 10 times `--scale`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

BASE = (
    b"- config-keys:\n    - a\n  description:\n    - x\n"
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
)


def appended(body: bytes) -> bytes:
    return BASE + b"\n- config-keys:\n    - k\n" + body


def case(name: str, scale: float) -> bytes:
    n = lambda size: max(1, int(size * scale))  # noqa: E731
    if name == "description-lines":  # 1.57M description lines, 15.7 MB
        return appended(b"  description:\n" + b"    - x\n" * n(1_570_000) + b"  pr-link: XXX\n")
    if name == "long-tag":  # a 1 MB tag
        return appended(b"  description: [d]\n  pr-link: !" + b"t" * n(1_000_000) + b" XXX\n")
    if name == "deep-flow":  # 40,000 levels of flow nesting (segfaults the C loader)
        depth = n(40_000)
        return appended(
            b"  description: [d]\n  pr-link: XXX\n  extra: " + b"[" * depth + b"]" * depth + b"\n"
        )
    if name == "deep-entries":  # 1,000-deep nesting in each of 20 entries
        deep = b"[" * n(1000) + b"]" * n(1000)
        entry = (
            b"\n- config-keys:\n    - k\n  description: [d]\n  pr-link: XXX\n  extra: "
            + deep
            + b"\n"
        )
        return BASE + entry * 20
    if name == "many-findings":  # 8,000 findings to render
        entry = b"\n- config-keys:\n    - k\n  description: [d]\n  pr-link: nope\n"
        return BASE + entry * n(8000)
    raise SystemExit(f"unknown case {name}")


CASES = ("description-lines", "long-tag", "deep-flow", "deep-entries", "many-findings")

_CHILD = """
import sys, time
from governance.core.links import LinkPolicy
from governance.changelog.rules import CheckMode, check
from governance.check.render import render_text
from governance.check.service import CheckResult
head = sys.stdin.buffer.read()
base = head[: head.index(b"\\n- config-keys:") + 1]
start = time.perf_counter()
verdict = check(base, head, LinkPolicy(), CheckMode.pr_mode(5), trust_base=True)
text = render_text(CheckResult(verdict, "base", "head", base, head))
elapsed = time.perf_counter() - start
codes = sorted({v.code for v in verdict.violations})
print(f"{elapsed:.2f}s findings={len(verdict.violations)} codes={','.join(codes)} text={len(text):,}B")
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    for name in args.case or CASES:
        data = case(name, args.scale)
        start = time.perf_counter()
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD],
                input=data,
                capture_output=True,
                timeout=args.timeout,
                check=False,
            )
            wall = time.perf_counter() - start
            out = done.stdout.decode().strip() or done.stderr.decode().strip().splitlines()[-1:]
            print(f"{name:18} {len(data):>11,}B exit={done.returncode} wall={wall:.2f}s {out}")
        except subprocess.TimeoutExpired:
            print(f"{name:18} {len(data):>11,}B TIMEOUT after {args.timeout:.0f}s")


if __name__ == "__main__":
    main()
