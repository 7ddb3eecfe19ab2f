"""Time of hostile inputs: changelogs through check, plan's reader and text
rendering; master configs, result files and row files at and past their bounds.

    .venv/bin/python benchmarks/bench_bounds.py [--scale 1.0] [--case NAME ...]
    .venv/bin/python benchmarks/bench_bounds.py --inputs [--repeat 5] [--input NAME ...]

Each changelog case is one appended entry built to be expensive
(docs/security.md, "Bounds"); the answer must come quickly and be a located
finding. Each case runs in its own process (a crash or a timeout is reported
as such); the sizes are those of the attacks in issue 10 times `--scale`.
`--inputs` runs the cases of issue 18: each at a bound
or past it, `--repeat` times in fresh processes, printing the median wall
time and peak memory (RSS) of the process doing the work.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

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


# -- issue 18: master configs, result files and row files --------------------------

PROJECT = Path(__file__).resolve().parents[1]
GOV = [sys.executable, "-m", "governance.cli.app"]
CONFIG_HEAD = """
{key}:
  image: vllm/vllm-openai-rocm:v0.11.2
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: mi300x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
"""


def _listed(values: int) -> str:
    return ", ".join(str(i) for i in range(1, values + 1))


def aliased(values: int, copies: int, key: str = "bomb-fp8-mi300x-vllm") -> str:
    first = f"      - {{ tp: 8, conc-list: &c [{_listed(values)}] }}\n"
    return CONFIG_HEAD.format(key=key) + first + "      - { tp: 8, conc-list: *c }\n" * copies


def literal(values: int, key: str) -> str:
    return CONFIG_HEAD.format(key=key) + f"      - {{ tp: 8, conc-list: [{_listed(values)}] }}\n"


# name -> (master config text appended, config keys of the entry), checked with `gov check`
def _config_cases() -> dict[str, tuple[str, list[str]]]:
    wide = [f"wide{i}-fp8-mi300x-vllm" for i in range(20)]
    return {
        "alias-18k": (aliased(3_000, 98), ["bomb-fp8-mi300x-vllm"]),  # issue 18: 17-33 s, 591 MiB
        "alias-60k": (aliased(10_000, 98), ["bomb-fp8-mi300x-vllm"]),  # issue 18: 122 s, 1.84 GiB
        "alias-under-bound": (aliased(3_000, 60), ["bomb-fp8-mi300x-vllm"]),  # 183k nodes: GOV524
        "config-at-bound": (literal(1_000, "wide0-fp8-mi300x-vllm"), wide[:1]),  # 1,000 rows: ok
        "plan-at-bound": ("".join(literal(1_000, key) for key in wide), wide),  # 20,000 rows: ok
    }


_CHECK_CHILD = """
import resource, sys, time
from governance.cli.app import main
sys.argv = ["gov", "check", "--base-ref", "main", "--pr", "7", "--format", "json"]
start = time.perf_counter()
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"RESULT {elapsed:.3f} {peak:.1f} {code}", file=sys.stderr)
"""

_FILE_CHILD = """
import os, resource, sys, tempfile, time
from pathlib import Path
from governance.core import jsonsafe
from governance.sweeps import runfiles
case = sys.argv[1]
from governance.results.reader import MAX_RESULT_BYTES as cap
start = time.perf_counter()
outcome = "read"
if case == "row-200mib":
    folder = Path(tempfile.mkdtemp(prefix="gov-bench-"))
    with open(folder / "gov-row.json", "wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    start = time.perf_counter()
    [recorded] = runfiles.record(folder)
    outcome = runfiles.verify(folder, [recorded])
    os.unlink(folder / "gov-row.json"); os.rmdir(folder)
else:
    data = {
        # at the read cap (4 MiB): the costliest shapes for the depth scan and the parser
        "json-cap-flat": b"[" + b"[]," * (cap // 3 - 2) + b"[]]",
        "json-cap-strings": b"[" + b'"a",' * (cap // 4 - 2) + b'"a"]',
        "json-cap-late-deep": b"[" + b'"a",' * (cap // 4 - 20) + b"[" * 70,
        "json-cap-objects": b"[" + b'{"a":[1]},' * (cap // 10 - 2) + b"{}]",
        "json-deep-100k": b"[" * 100_000 + b"]" * 100_000,
        "json-digits-5001": b'{"total_token_throughput": ' + b"9" * 5001 + b"}",
    }[case]
    start = time.perf_counter()
    try:
        jsonsafe.loads(data)
    except jsonsafe.JsonBoundError as exc:
        outcome = exc.reason
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"RESULT {elapsed:.3f} {peak:.1f} {outcome}", file=sys.stderr)
"""
FILE_CASES = (
    "json-cap-flat",
    "json-cap-strings",
    "json-cap-late-deep",
    "json-cap-objects",
    "json-deep-100k",
    "json-digits-5001",
    "row-200mib",
)


def _repository(root: Path, config: str, keys: list[str]) -> Path:
    import shutil

    repo = root / "repo"
    shutil.copytree(PROJECT / "configs", repo / "configs")
    shutil.copyfile(PROJECT / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b")
    env.update(GIT_COMMITTER_EMAIL="b@b")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "example")
    git("checkout", "-q", "-b", "pr")
    master = repo / "configs/amd-master.yaml"
    master.write_text(master.read_text() + config)
    listed = "".join(f"    - {key}\n" for key in keys)
    entry = f'\n- config-keys:\n{listed}  description:\n    - "bench"\n  pr-link: XXX\n'
    log = repo / "perf-changelog.yaml"
    log.write_bytes(log.read_bytes() + entry.encode())
    git("commit", "-q", "-am", "pr")
    return repo


def _measure(argv: list[str], cwd: Path, timeout: float) -> tuple[float, float, str, str]:
    """(seconds, peak MiB, outcome, findings) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOV_"))}
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, timeout=timeout, check=False, env=env, text=True
    )
    line = next((x for x in done.stderr.splitlines() if x.startswith("RESULT ")), "")
    if not line:
        return float("nan"), float("nan"), f"crash exit={done.returncode}", done.stderr[-300:]
    _, seconds, peak, outcome = line.split(" ", 3)
    findings = ""
    if done.stdout.strip().startswith("{"):
        import json

        out = json.loads(done.stdout)
        codes = sorted({v["code"] for v in out.get("violations", [])})
        findings = ",".join(codes) or "none"
    return float(seconds), float(peak), outcome, findings


def run_inputs(names: list[str] | None, repeat: int, timeout: float) -> None:
    import shutil
    import statistics
    import tempfile

    configs = _config_cases()
    for name in names or [*configs, *FILE_CASES]:
        times, peaks, last = [], [], ("", "")
        for _ in range(repeat):
            root = Path(tempfile.mkdtemp(prefix="gov-bench-bounds-"))
            try:
                if name in configs:
                    text, keys = configs[name]
                    repo = _repository(root, text, keys)
                    argv, cwd = [sys.executable, "-c", _CHECK_CHILD], repo
                elif name in FILE_CASES:
                    argv, cwd = [sys.executable, "-c", _FILE_CHILD, name], PROJECT
                else:
                    raise SystemExit(f"unknown input case {name}")
                seconds, peak, outcome, findings = _measure(argv, cwd, timeout)
            except subprocess.TimeoutExpired:
                seconds, peak, outcome, findings = float("inf"), float("nan"), "TIMEOUT", ""
            finally:
                shutil.rmtree(root, ignore_errors=True)
            times.append(seconds)
            peaks.append(peak)
            last = (outcome, findings)
        print(
            f"{name:20} median {statistics.median(times):6.2f}s "
            f"peak {statistics.median(peaks):7.1f} MiB  (of {repeat}) "
            f"exit/outcome={last[0]} findings={last[1]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--case", action="append", choices=CASES)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--inputs", action="store_true", help="the issue 18 cases instead")
    parser.add_argument("--input", action="append", help="one issue 18 case (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.inputs or args.input:
        run_inputs(args.input, args.repeat, args.timeout)
        return
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
