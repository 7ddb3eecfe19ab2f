"""A PR's figures beside main's, per config and concurrency (pure: data in, data out).

A *point* is one measured result: the config it belongs to (its key: the row's
place on a dashboard curve without the recipe details, so an image bump
compares with the image before), its concurrency, its figures and the run
that measured it. `compare` pairs each PR point with the newest main point of
the same key and concurrency and computes, per metric, the relative change and
whether it is past the threshold, better or worse (docs/results.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from governance.results.reader import Figures

# (attribute, label, higher is better)
METRICS: tuple[tuple[str, str, bool], ...] = (
    ("tput_per_gpu", "tput/GPU (tok/s)", True),
    ("ttft_ms", "median TTFT (ms)", False),
    ("tpot_ms", "median TPOT (ms)", False),
    ("interactivity", "median interactivity (tok/s/user)", True),
)


@dataclass(frozen=True, slots=True)
class Point:
    config: str  # a readable name of the config, e.g. "dsv4 fp8 mi300x vllm 1k/1k tp8"
    key: tuple[Any, ...]  # what makes two points the same config (without conc)
    conc: str
    figures: Figures
    run_id: int = 0
    commit: str = ""
    pr: int | None = None
    fingerprint: str | None = None
    result_path: str = ""
    landed_as: str = ""  # a main point: main's commit its PR landed as ("" = measured on main)

    def to_dict(self) -> dict[str, object]:
        return {
            "config": self.config,
            "conc": self.conc,
            "run": self.run_id,
            "commit": self.commit,
            "landed_as": self.landed_as,
            "pr": self.pr,
            "fingerprint": self.fingerprint,
            "result_path": self.result_path,
            "figures": self.figures.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Change:
    metric: str
    label: str
    pr: float | None
    main: float | None
    relative: float | None  # (pr - main) / main, None when either is missing or main is 0
    flag: str = ""  # "" | "better" | "worse": past the threshold

    def to_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "pr": self.pr,
            "main": self.main,
            "relative": self.relative,
            "flag": self.flag,
        }


@dataclass(frozen=True, slots=True)
class Comparison:
    pr: Point
    main: Point | None
    changes: tuple[Change, ...] = ()

    @property
    def flags(self) -> list[str]:
        return [c.flag for c in self.changes if c.flag]

    def to_dict(self) -> dict[str, object]:
        return {
            "config": self.pr.config,
            "conc": self.pr.conc,
            "pr": self.pr.to_dict(),
            "main": self.main.to_dict() if self.main else None,
            "changes": [c.to_dict() for c in self.changes],
        }


@dataclass(slots=True)
class ComparisonReport:
    pr: int
    threshold: float  # percent
    comparisons: list[Comparison] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "run 12: why"
    # "run 12 <job key>: unverifiable (result files missing: …)": never compared
    unverifiable: list[str] = field(default_factory=list)
    main_label: str = "main"

    @property
    def worse(self) -> int:
        return sum("worse" in c.flags for c in self.comparisons)

    @property
    def better(self) -> int:
        return sum("better" in c.flags and "worse" not in c.flags for c in self.comparisons)

    def to_dict(self) -> dict[str, object]:
        return {
            "pr": self.pr,
            "main": self.main_label,
            "threshold_percent": self.threshold,
            "comparisons": [c.to_dict() for c in self.comparisons],
            "flagged_worse": self.worse,
            "flagged_better": self.better,
            "unreadable": list(self.unreadable),
            "unverifiable": list(self.unverifiable),
        }


def _change(
    name: str, label: str, higher: bool, pr: float | None, main: float | None, threshold: float
) -> Change:
    relative = (pr - main) / main if pr is not None and main else None
    flag = ""
    if relative is not None and abs(relative) * 100.0 > threshold:
        flag = "better" if (relative > 0) == higher else "worse"
    return Change(name, label, pr, main, relative, flag)


def changes(pr: Figures, main: Figures, threshold: float) -> tuple[Change, ...]:
    if pr.kind == "eval":
        return tuple(
            _change(name, name, True, value, main.scores.get(name), threshold)
            for name, value in sorted(pr.scores.items())
        )
    return tuple(
        _change(name, label, higher, getattr(pr, name), getattr(main, name), threshold)
        for name, label, higher in METRICS
    )


def newest(points: Iterable[Point]) -> dict[tuple[tuple[Any, ...], str], Point]:
    """The newest point (highest run id) per key and concurrency."""
    out: dict[tuple[tuple[Any, ...], str], Point] = {}
    for point in points:
        slot = (point.key, point.conc)
        if slot not in out or point.run_id > out[slot].run_id:
            out[slot] = point
    return out


def compare(
    pr_points: Sequence[Point], main_points: Sequence[Point], threshold: float
) -> list[Comparison]:
    """Each PR point (the newest per key and conc) beside main's newest, sorted by
    config then concurrency."""
    mains = newest(main_points)
    out = []
    for slot, point in newest(pr_points).items():
        main = mains.get(slot)
        if main is not None and main.figures.kind != point.figures.kind:
            main = None
        found = changes(point.figures, main.figures, threshold) if main else ()
        out.append(Comparison(point, main, found))
    return sorted(out, key=lambda c: (c.pr.config, _conc_order(c.pr.conc)))


def _conc_order(conc: str) -> tuple[int, str]:
    head = conc.split("x", 1)[0]
    return (int(head) if head.isdigit() else 0, conc)
