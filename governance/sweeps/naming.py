"""Row -> launch script: the reference's naming rule as data (docs/sweeps.md, 'Row → script').

The rule is an ordered list of candidate name templates per hardware token;
the first candidate that exists below the scripts folder wins. Templates use
`{name}` for a row token and `{field=value:text}` for "text when the field
equals value" (e.g. `{spec=mtp:_mtp}`), so per-launcher quirks (only `trt`
tagged on H200, `atom` on MI355X) are rows of a table, not copies of scripts.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from governance.sweeps.identity import PlanRow, RowError, safe_token

_BASE = "{node}/{scenario}/{model}_{precision}_{hw}"
_MTP = "{spec=mtp:_mtp}"
# One row per launcher family (docs/sweeps.md). "*" is the fallback (B200/B300/RTX).
DEFAULT_SCRIPT_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mi300x", (f"{_BASE}{_MTP}.sh",)),
    ("mi325x", (f"{_BASE}{_MTP}.sh",)),
    ("h100", (f"{_BASE}{_MTP}.sh",)),
    ("h200", (f"{_BASE}{{framework=trt:_trt}}{_MTP}.sh",)),
    ("mi355x", (f"{_BASE}_{{framework}}{_MTP}.sh", f"{_BASE}{{framework=atom:_atom}}{_MTP}.sh")),
    ("*", (f"{_BASE}_{{framework}}{_MTP}.sh", f"{_BASE}{{framework=trt:_trt}}{_MTP}.sh")),
)
TOKENS = ("node", "scenario", "model", "precision", "hw", "framework", "spec", "runner")
_PLACEHOLDER = re.compile(r"\{([a-z]+)(?:=([A-Za-z0-9._-]*):([A-Za-z0-9._-]*))?\}")


class TemplateError(ValueError):
    """A template in the settings that cannot be used."""


def hardware_token(runner: str) -> str:
    """`cluster:b200-dgxc` -> `b200`, `mi300x` -> `mi300x`: the hardware a
    runner label names (the reference hard-codes it per launcher script)."""
    label = runner.split(":", 1)[-1]
    return label.split("-", 1)[0]


def row_tokens(row: PlanRow) -> dict[str, str]:
    """The validated tokens a template may use (RowError when one is unsafe)."""
    exp_name = safe_token(row, "exp-name")
    label = row.data.get("runner")
    # `cluster:b200-dgxc` names the cluster label after the colon.
    runner = safe_token(row, "runner", label.split(":", 1)[-1] if isinstance(label, str) else "")
    return {
        "node": "multi_node" if row.is_multinode else "single_node",
        "scenario": "agentic" if row.is_agentic else "fixed_seq_len",
        "model": exp_name.split("_", 1)[0],
        "precision": safe_token(row, "precision"),
        "hw": safe_token(row, "runner", hardware_token(runner)),  # already safe
        "framework": safe_token(row, "framework"),
        "spec": safe_token(row, "spec-decoding"),
        "runner": runner,
    }


def check_template(template: str) -> None:
    for match in re.finditer(r"\{[^}]*\}?", template):
        placeholder = _PLACEHOLDER.fullmatch(match.group(0))
        if placeholder is None or placeholder.group(1) not in TOKENS:
            raise TemplateError(
                f"template {template!r}: unknown placeholder {match.group(0)!r} "
                f"(known: {', '.join(TOKENS)}; conditional form {{spec=mtp:_mtp}})"
            )
    if template.startswith("/") or ".." in template.split("/"):
        raise TemplateError(f"template {template!r} must be a relative path without '..'")


def render(template: str, tokens: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name, value, text = match.groups()
        if value is None:
            return tokens[name]
        return text if tokens[name] == value else ""

    return _PLACEHOLDER.sub(one, template)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a row's script is, or why there is none."""

    script: Path | None
    tried: tuple[str, ...] = ()
    problem: str = ""  # why no script (empty when found)


@dataclass(slots=True)
class ScriptResolver:
    """Resolves rows to scripts below `root`, refusing anything outside it."""

    root: Path
    table: Sequence[tuple[str, Sequence[str]]] = DEFAULT_SCRIPT_NAMES
    _real_root: Path = field(init=False)
    # candidate -> its real path (None: absent); rows share few scripts
    _cache: dict[str, Path | None] = field(init=False, default_factory=dict)
    _inside_cache: dict[str, bool] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for _glob, templates in self.table:
            for template in templates:
                check_template(template)
        self._real_root = self.root.resolve()

    def templates_for(self, hw: str) -> Sequence[str]:
        for pattern, templates in self.table:
            if fnmatch.fnmatchcase(hw, pattern):
                return templates
        return ()

    def _inside(self, real: Path) -> bool:
        key = f"inside:{real}"
        if key not in self._inside_cache:
            self._inside_cache[key] = real.is_relative_to(self._real_root)
        return self._inside_cache[key]

    def _real(self, relative: str) -> Path | None:
        if relative not in self._cache:
            candidate = self.root / relative
            self._cache[relative] = candidate.resolve() if candidate.is_file() else None
        return self._cache[relative]

    def resolve(self, row: PlanRow) -> Resolution:
        try:
            tokens = row_tokens(row)
        except RowError as exc:
            return Resolution(None, (), str(exc))
        templates = self.templates_for(tokens["hw"])
        if not templates:
            return Resolution(None, (), f"no script-names entry matches hardware {tokens['hw']!r}")
        tried = []
        for template in templates:
            relative = render(template, tokens)
            tried.append(relative)
            real = self._real(relative)
            if real is None:
                continue
            if not self._inside(real):
                return Resolution(
                    None,
                    tuple(tried),
                    f"{relative} resolves to {real}, outside the scripts folder {self._real_root}",
                )
            return Resolution(real, tuple(tried))
        return Resolution(None, tuple(tried), "none of the candidate scripts exists")
