"""Time of the shell lexer over real launch scripts.

    .venv/bin/python benchmarks/bench_shell_lexer.py [--bundle PATH | --root DIR] [--repeat 15]

Reads every `*.sh` under `benchmarks/` and `runners/` of the runners bundle
(default `../shared/corpus/inferencex-runners.bundle`, cloned into a temporary
folder) or of a checkout given with `--root`, then prints the median, best
and worst of `--repeat` runs of `shellwords.commands` over all of them, and
of `shellscan.flag_uses` (the lexer plus the engine-flag search a cold
`gov check` runs on each script).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from governance.sweeps.shellscan import flag_uses
from governance.sweeps.shellwords import commands

T = TypeVar("T")
BUNDLE_NAME = "shared/corpus/inferencex-runners.bundle"
DEFAULT_BUNDLE = next(
    (p / BUNDLE_NAME for p in Path(__file__).resolve().parents if (p / BUNDLE_NAME).is_file()),
    Path("..") / BUNDLE_NAME,
)


def read_scripts(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for folder in ("benchmarks", "runners")
        for path in sorted((root / folder).rglob("*.sh"))
        if path.is_file()
    }


def timings(run: Callable[[T], object], inputs: Sequence[T], repeat: int) -> list[float]:
    """Milliseconds of each run over all inputs, each result dropped as gov
    drops it (kept, the young objects make the collector's passes dearer)."""
    found = []
    for _ in range(repeat + 1):  # the first warms up: imports, compiled patterns, caches
        started = time.perf_counter()
        for given in inputs:
            run(given)
        found.append((time.perf_counter() - started) * 1000)
    return found[1:]


def report(name: str, found: list[float]) -> None:
    print(
        f"{name:<12} median {statistics.median(found):8.2f} ms"
        f"   best {min(found):8.2f}   worst {max(found):8.2f}   ({len(found)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--root", type=Path, help="a checkout to read instead of the bundle")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        root = args.root
        if root is None:
            root = Path(work) / "runners"
            clone = ["git", "clone", "-q", "--branch", "main", str(args.bundle), str(root)]
            subprocess.run(clone, check=True)
        scripts = read_scripts(root)
    texts = [data.decode("utf-8", "replace") for data in scripts.values()]
    size = sum(len(text) for text in texts)
    words = sum(len(command) for text in texts for command in commands(text))
    print(f"{len(texts)} scripts, {size / 1e6:.2f} M characters, {words} words")
    report("commands", timings(commands, texts, args.repeat))
    report("flag_uses", timings(flag_uses, list(scripts.values()), args.repeat))


if __name__ == "__main__":
    main()
