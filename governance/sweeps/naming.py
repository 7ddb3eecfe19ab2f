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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from governance.sweeps.identity import PlanRow, RowError, safe_token
from governance.sweeps.multinode import (
    DEFAULT_MULTINODE_RULES,
    EXTERNAL_PREFIX,
    MultiNodeRule,
    recipe_problem,
    rule_for,
    settings_of,
)

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
_PLACEHOLDER = re.compile(r"\{([a-z]+)(?:=([A-Za-z0-9._-]*):([A-Za-z0-9._/-]*))?\}")


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
    if template.startswith("/") or ".." in re.split(r"[/:{}]", template):
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
    """Where a row's script (or recipe) is, or why there is none.

    A recipe row (docs/sweeps.md, 'Multi-node rows') names its recipe in
    `recipe`; `recipe_path` is set when the recipe lies in the repository,
    `external` when it lives in the srt-slurm checkout. Its `script` is the
    recipe runner, None when the repository has none (`runner_missing`):
    the row is selected but cannot be launched from here."""

    script: Path | None
    tried: tuple[str, ...] = ()
    problem: str = ""  # why no script (empty when found)
    rule: str = ""  # the multi-node rule that decided ("" for single-node rows)
    recipe: str = ""  # CONFIG_FILE of a recipe row
    recipe_path: Path | None = None
    kind: str = "script"  # script | recipe (of the repository) | external (srt-slurm's)
    reason: str = ""  # the problem without the row's values, for counts
    runner_missing: str = ""  # the recipe runner that does not exist
    code: str = ""  # GOV703 for an unsafe value; empty: GOV702 when there is a problem

    @property
    def selected(self) -> bool:
        """The selection rule found what runs the row (maybe not launchable here)."""
        return not self.problem


def _plain_path(relative: str) -> bool:
    """A relative path that names itself (no `.`, `..` or empty component)."""
    return not relative.startswith("/") and all(
        part not in ("", ".", "..") for part in relative.split("/")
    )


@dataclass(slots=True)
class ScriptResolver:
    """Resolves rows to scripts below `root`, refusing anything outside it.

    `recipe_prefix` is how the repository names its scripts folder in a
    CONFIG_FILE (`benchmarks/` in InferenceX)."""

    root: Path
    table: Sequence[tuple[str, Sequence[str]]] = DEFAULT_SCRIPT_NAMES
    multinode: Sequence[MultiNodeRule] = DEFAULT_MULTINODE_RULES
    recipe_prefix: str = "benchmarks/"
    # The folder's regular files (paths below `root`) when it is known to hold
    # no symlink: existence is then a lookup, and no file needs to be on disk.
    listing: frozenset[str] | None = None
    # Writes the folder to disk (the listing is then dropped): asked for a
    # path the listing cannot answer exactly (a `.` or `..` in it).
    materialize: Callable[[], None] | None = None
    _real_root: Path = field(init=False)
    # candidate -> its real path (None: absent); rows share few scripts
    _cache: dict[str, Path | None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        for _glob, templates in self.table:
            for template in templates:
                check_template(template)
        for rule in self.multinode:
            for template in (*rule.scripts, *filter(None, [rule.runner])):
                check_template(template)
        self._real_root = self.root.resolve()

    def templates_for(self, hw: str) -> Sequence[str]:
        for pattern, templates in self.table:
            if fnmatch.fnmatchcase(hw, pattern):
                return templates
        return ()

    def _real(self, relative: str) -> Path | None:
        if relative not in self._cache:
            if self.listing is not None and not _plain_path(relative):
                if self.materialize is not None:
                    self.materialize()
                self.listing = None
            if self.listing is not None:
                found = relative in self.listing
                self._cache[relative] = self._real_root / relative if found else None
            else:
                candidate = self.root / relative
                self._cache[relative] = candidate.resolve() if candidate.is_file() else None
        return self._cache[relative]

    def _first(self, templates: Sequence[str], tokens: Mapping[str, str], rule: str) -> Resolution:
        tried = []
        for template in templates:
            relative = render(template, tokens)
            tried.append(relative)
            real = self._real(relative)
            if real is None:
                continue
            if not real.is_relative_to(self._real_root):
                return Resolution(
                    None,
                    tuple(tried),
                    f"{relative} resolves to {real}, outside the scripts folder {self._real_root}",
                    rule,
                )
            return Resolution(real, tuple(tried), rule=rule)
        why = f" (rule {rule})" if rule else ""
        problem = "none of the candidate scripts exists"
        return Resolution(None, tuple(tried), problem, rule, reason=problem + why)

    def resolve(self, row: PlanRow) -> Resolution:
        try:
            tokens = row_tokens(row)
        except RowError as exc:
            return Resolution(None, (), str(exc), code="GOV703")
        if row.is_multinode:
            rule = rule_for(self.multinode, tokens["hw"], tokens["framework"])
            if rule is not None:
                return self._multinode(row, rule, tokens)
        templates = self.templates_for(tokens["hw"])
        if not templates:
            return Resolution(None, (), f"no script-names entry matches hardware {tokens['hw']!r}")
        return self._first(templates, tokens, "")

    def _inside(self, relative: str) -> Path | None:
        """The real path of an existing file below the scripts folder, else None."""
        real = self._real(relative)
        return real if real is not None and real.is_relative_to(self._real_root) else None

    def _multinode(
        self, row: PlanRow, rule: MultiNodeRule, tokens: Mapping[str, str]
    ) -> Resolution:
        config = settings_of(row).get("CONFIG_FILE")
        why = f" (rule {rule.name})"

        def refused(problem: str, reason: str, code: str = "") -> Resolution:
            return Resolution(
                None, (), problem + why, rule.name, config or "", reason=reason + why, code=code
            )

        if config is not None and (bad := recipe_problem(config)):
            return refused(bad, "unsafe CONFIG_FILE", "GOV703")
        if not rule.recipe:
            found = self._first(rule.scripts, tokens, rule.name)
            if found.problem or config is None or not rule.recipe_folder:
                return found
            path = self._inside(f"{rule.recipe_folder}/{config}")
            if path is None:
                return refused(
                    f"CONFIG_FILE {config}: no such recipe in {rule.recipe_folder}/",
                    f"CONFIG_FILE names no recipe in {rule.recipe_folder}/",
                )
            return replace(found, recipe=config, recipe_path=path)
        if config is None:
            if rule.scripts:
                return self._first(rule.scripts, tokens, rule.name)
            return refused(
                "no CONFIG_FILE in additional-settings", "no CONFIG_FILE in additional-settings"
            )
        runner = self._real(rule.runner)
        found = Resolution(
            runner,
            (rule.runner,),
            rule=rule.name,
            recipe=config,
            kind="recipe",
            runner_missing="" if runner else rule.runner,
        )
        if config.startswith(EXTERNAL_PREFIX):
            return replace(found, kind="external")
        if not config.startswith(self.recipe_prefix):
            return refused(
                f"CONFIG_FILE {config} names neither the srt-slurm checkout ({EXTERNAL_PREFIX}…) "
                f"nor a file under {self.recipe_prefix}",
                f"CONFIG_FILE outside {EXTERNAL_PREFIX} and {self.recipe_prefix}",
            )
        path = self._inside(config.removeprefix(self.recipe_prefix))
        if path is None:
            return refused(
                f"CONFIG_FILE {config}: no such recipe in the repository",
                f"CONFIG_FILE names a recipe under {self.recipe_prefix} that does not exist",
            )
        return replace(found, recipe_path=path)
