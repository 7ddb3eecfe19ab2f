"""False warnings of the engine-flag preflight over every launch script of a repository.

    .venv/bin/python benchmarks/bench_preflight.py [--bundle PATH] [--ref main] [--show N]

Clones the scripts bundle (default `../shared/corpus/inferencex-scripts.bundle`)
into a temporary folder, and checks each `*.sh` under `benchmarks/` at REF
against all the others (leave one out: as if each script were the one a PR
adds). Every warning on a script that is on main is a false one; the count,
the worst cases and the time are printed. Also printed: the warnings the
shared-vocabulary rule holds back (docs/sweeps.md, 'Preflight').
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from governance.sweeps.flagindex import build_index, flag_warnings, worth_checking
from governance.sweeps.shellscan import flag_uses

DEFAULT_BUNDLE = next(
    (
        p / "shared/corpus/inferencex-scripts.bundle"
        for p in Path(__file__).resolve().parents
        if (p / "shared/corpus/inferencex-scripts.bundle").is_file()
    ),
    Path("../shared/corpus/inferencex-scripts.bundle"),
)


def scripts_at(bundle: Path, ref: str, work: Path) -> dict[str, bytes]:
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(bundle), str(work)], check=True)
    names = subprocess.run(
        ["git", "-C", str(work), "ls-tree", "-r", "--name-only", f"origin/{ref}", "benchmarks"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    out = {}
    for name in names:
        if name.endswith(".sh"):
            out[name] = subprocess.run(
                ["git", "-C", str(work), "show", f"origin/{ref}:{name}"],
                check=True,
                capture_output=True,
            ).stdout
    return out


def measure(scripts: dict[str, bytes]) -> tuple[list[str], int, int, list[str]]:
    """(warning lines, scripts with an engine, flag uses, the uses the shared-vocabulary
    clause held back)."""
    index = build_index(scripts)
    lines: list[str] = []
    held: list[str] = []
    engines = uses = 0
    for path, data in sorted(scripts.items()):
        found = flag_uses(data)
        engines += bool(found)
        uses += len(found)
        for warning in flag_warnings(data, index, frozenset({path})):
            lines.append(f"{path}:{warning.use.line}:{warning.use.column}: {warning.message()}")
        for use in found:  # what the rule would say without the shared-vocabulary clause
            others = index.others(use.engine, use.flag, use.value, frozenset({path}))
            alone = frozenset({path})
            if (
                worth_checking(use.value)
                and others
                and not index.seen(use.engine, use.flag, use.value, alone)
                and all(index.share_values(use.engine, o, use.flag, alone) for o in others)
            ):
                held.append(
                    f"{path}:{use.line}:{use.column}: {use.engine} {use.spelled} "
                    f"{use.value} (also used by {', '.join(sorted(others))})"
                )
    return lines, engines, uses, held


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--ref", default="main")
    parser.add_argument("--show", type=int, default=10)
    args = parser.parse_args()
    if not args.bundle.is_file():
        print(f"no bundle at {args.bundle}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as temp:
        scripts = scripts_at(args.bundle, args.ref, Path(temp) / "scripts")
    start = time.perf_counter()
    lines, engines, uses, held = measure(scripts)
    took = time.perf_counter() - start
    print(
        f"{len(scripts)} scripts at {args.ref}, {engines} start a serving engine, "
        f"{uses} literal flag values; {len(lines)} warning(s) (at main each is a false one); "
        f"{len(held)} held back as shared vocabulary; {took:.2f} s"
    )
    for line in lines[: args.show]:
        print("  warning: " + line)
    for line in held[: args.show]:
        print("  held back: " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
