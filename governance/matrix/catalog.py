"""Master configs + runner file -> a validated, lazily parsed `Catalog`.

Pure: bytes in, data and located `Violation`s out (docs/matrix.md, 'Master configs').

Why lazy: the NVIDIA master file is ~300 KB of YAML and a pure-Python YAML
parse of it takes seconds. Each file is split into per-key blocks
(`masterfile.py`), each block is parsed only when asked for, and parsed blocks
can be cached on disk by the SHA-256 of their bytes (`cache.py`).

Positions: a violation points at the offending key (1-based line and column
in the master file); finding it re-parses only the faulty block with
ruamel's round-trip loader.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

from governance.core import yamlsafe
from governance.core.blockcache import BlockCache
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.suggest import did_you_mean
from governance.matrix.errors import MatrixError
from governance.matrix.locate import (
    Locator,
    pydantic_violations,
    round_trip,
    schema_fields,
    tree_locator,
)
from governance.matrix.master_plain import plainly_valid
from governance.matrix.masterfile import MasterFile, SourceFile, read_master, yaml_violation
from governance.matrix.names import foreign_keys, foreign_values
from governance.matrix.runners import RunnerData, parse_runner_file

# -- the catalog ---------------------------------------------------------------------


class Catalog:
    """Merged master configs (AMD then NVIDIA order) plus the runner file.

    Nothing is parsed beyond a line scan until a key's data is asked for.
    `violations()` validates everything (the reference's all-or-nothing rule,
    used by `plan`); `violations(keys)` validates only those blocks.
    """

    def __init__(
        self,
        masters: Sequence[SourceFile],
        runner: SourceFile,
        *,
        cache: BlockCache | None = None,
        trusted: Catalog | None = None,
        trust_all: bool = False,
    ) -> None:
        self._files = [read_master(source) for source in masters]
        # Blocks already validated where they came from: identical to the
        # `trusted` catalog's block of the same key (the base, validated when
        # it landed), or every block (`trust_all`, for the base itself).
        self._trusted = trusted
        self._trust_all = trust_all
        self._runner_source = runner
        self._runner_path = runner.path
        self._runner: tuple[RunnerData | None, list[Violation]] | None = None
        self._cache = cache
        self._owner: dict[str, MasterFile] = {}
        self._file_problems: list[Violation] = []
        self._raw: dict[str, Any] = {}
        self._checked: dict[str, list[Violation]] = {}
        for master in self._files:
            self._file_problems.extend(master.problems)
            repeated: list[str] = []
            for key in master.keys:
                line, column = master.key_lines.get(key, (0, 0))
                if "*" in key:
                    self._file_problems.append(
                        violation(
                            "GOV512",
                            f"Wildcard '*' is not allowed in master config keys: '{key}'",
                            master.path,
                            line,
                            column,
                            hint="config keys are literal names; '*' is only for changelog "
                            "patterns",
                        )
                    )
                if key in self._owner:
                    repeated.append(key)
                else:
                    self._owner[key] = master
            if repeated:
                first = repeated[0]
                line, column = master.key_lines.get(first, (0, 0))
                self._file_problems.append(
                    violation(
                        "GOV518",
                        f"Duplicate configuration keys found in '{master.path}': "
                        + ", ".join(sorted(repeated)),
                        master.path,
                        line,
                        column,
                        hint=f"already defined in {self._owner[first].path}",
                    )
                )
        plain = [key for key in self._owner if key.isascii()]
        for master in self._files:
            self._file_problems += foreign_keys(
                master.path, master.text, master.keys, master.key_lines, plain
            )

    # -- keys ----------------------------------------------------------------------

    @property
    def masters(self) -> list[MasterFile]:
        return list(self._files)

    @property
    def files_label(self) -> str:
        """How messages name the master configs, e.g. "a.yaml / b.yaml"."""
        return " / ".join(master.path for master in self._files)

    @property
    def keys(self) -> list[str]:
        """Every config key, in master order."""
        return list(self._owner)

    def __contains__(self, key: object) -> bool:
        return key in self._owner

    def resolve_globs(self, patterns: Sequence[str]) -> list[str]:
        """Generator key resolution: shell globs or exact keys."""
        keys = self.keys
        resolved: list[str] = []
        for pattern in patterns:
            if "*" in pattern or "?" in pattern:
                matched = [key for key in keys if fnmatch.fnmatchcase(key, pattern)]
                if not matched:
                    raise _unresolved(
                        "GOV502", f"Pattern '{pattern}' matched no config keys.", pattern, keys
                    )
            elif pattern in self._owner:
                matched = [pattern]
            else:
                raise _unresolved("GOV501", f"Config key(s) not found: {pattern}.", pattern, keys)
            resolved.extend(key for key in matched if key not in resolved)
        return resolved

    # -- data ----------------------------------------------------------------------

    def raw(self, key: str) -> Any:
        """The parsed (unvalidated) YAML value of a config key."""
        if key not in self._raw:
            self._raw[key] = self._parse(key)
        return self._raw[key]

    def _parse(self, key: str) -> Any:
        master = self._owner[key]
        if master.blocks is None:
            return (master.whole or {}).get(key)
        block = master.blocks[key]
        data = block.text.encode("utf-8")
        digest = BlockCache.digest(data) if self._cache is not None else ""
        if self._cache is not None:
            cached = self._cache.get(digest)
            if isinstance(cached, dict) and key in cached:
                return cached[key]
        try:
            parsed = yamlsafe.load(block.text, line_offset=block.line - 1)
        except yamlsafe.YamlLoadError as exc:
            self._checked[key] = [yaml_violation(master.path, exc, key)]
            return None
        if not isinstance(parsed, dict) or list(parsed) != [key]:
            # the scanner misjudged the block: fall back to a whole-file parse
            return self._parse_whole(master, key)
        if self._cache is not None:
            self._cache.put(digest, parsed)
        return parsed[key]

    def _parse_whole(self, master: MasterFile, key: str) -> Any:
        if master.whole is None:
            try:
                data = yamlsafe.load(master.text)
            except yamlsafe.YamlLoadError as exc:
                self._checked[key] = [yaml_violation(master.path, exc, key)]
                return None
            master.whole = data if isinstance(data, dict) else {}
        return master.whole.get(key)

    def entry(self, key: str) -> dict[str, Any]:
        """Validated raw data of one config key; MatrixError when invalid."""
        problems = self.entry_violations(key)
        if problems:
            raise MatrixError(problems)
        return self.raw(key)

    def block_text(self, key: str) -> str | None:
        """The bytes of a key's own block (None when its file is parsed whole)."""
        master = self._owner.get(key)
        if master is None or master.blocks is None:
            return None
        return master.blocks[key].text

    def _is_trusted(self, key: str) -> bool:
        if self._trust_all:
            return True
        if self._trusted is None:
            return False
        text = self.block_text(key)
        return text is not None and text == self._trusted.block_text(key)

    def entry_violations(self, key: str) -> list[Violation]:
        if key not in self._checked and self._is_trusted(key):
            self._checked[key] = []  # unchanged since a validated snapshot: not parsed
        if key not in self._checked:
            raw = self.raw(key)
            if key not in self._checked:  # parsing may already have failed
                self._checked[key] = self._validate(key, raw)
        return self._checked[key]

    def _validate(self, key: str, raw: Any) -> list[Violation]:
        # A plainly valid block needs no schema; the pydantic models are
        # built only for a block that may be wrong, to word its faults.
        if plainly_valid(raw):
            return self._foreign_names(key, raw)
        from pydantic import ValidationError

        from governance.matrix.master_entry import entry_schema

        schema = entry_schema(raw)
        try:
            schema.model_validate(raw)
        except ValidationError as exc:
            master = self._owner[key]
            return pydantic_violations(
                exc,
                path=master.path,
                owner=f"Master config entry '{key}' failed validation",
                locate=self._locator(key),
                known_fields=schema_fields(schema),
            ) + self._foreign_names(key, raw)
        return self._foreign_names(key, raw)

    def _foreign_names(self, key: str, raw: Any) -> list[Violation]:
        def labels() -> list[str]:
            data, _ = self.runner_result()
            return list(data.labels) if data is not None else []

        def locate(field: str) -> tuple[str, int, int]:
            return self.field_location(key, field)

        return foreign_values(key, raw, self._owner[key].text, locate, labels)

    def _locator(self, key: str) -> Locator:
        """Locate fields inside one config; only its own block is re-parsed."""
        master = self._owner[key]
        default = master.key_lines.get(key, (0, 0))
        if master.blocks is not None:
            block = master.blocks[key]
            root = round_trip(block.text, master.path)
            return tree_locator(root, [key], block.line - 1, default)
        if master._rt_whole is None:
            master._rt_whole = round_trip(master.text, master.path)
        return tree_locator(master._rt_whole, [key], 0, default)

    # -- runner -------------------------------------------------------------------

    @property
    def runner(self) -> RunnerData:
        data, problems = self.runner_result()
        if data is None:
            raise MatrixError(problems)
        return data

    def runner_result(self) -> tuple[RunnerData | None, list[Violation]]:
        if self._runner is None:
            self._runner = parse_runner_file(self._runner_source)
        return self._runner

    # -- whole-catalog validation ----------------------------------------------------

    def file_violations(self) -> list[Violation]:
        """Faults of the master files as wholes: unreadable, not a mapping,
        `*` in a key, keys defined twice."""
        return list(self._file_problems)

    def violations(
        self, keys: Iterable[str] | None = None, *, first_entry_only: bool = False
    ) -> list[Violation]:
        """File-level faults, then entry faults (all keys, or just `keys`) in
        master order, then runner-file faults: the reference's check order.
        `first_entry_only` stops after the first faulty entry (the reference
        aborts there; locating faults costs a re-parse per faulty block)."""
        found = list(self._file_problems)
        wanted = self.keys if keys is None else [k for k in self.keys if k in set(keys)]
        for key in wanted:
            problems = self.entry_violations(key)
            found.extend(problems)
            if problems and first_entry_only:
                break
        found.extend(self.runner_result()[1])
        return found

    def require_valid(self, keys: Iterable[str] | None = None) -> None:
        """Raise MatrixError (first faulty entry, with all its faults) unless
        the files, the entries (all, or `keys`) and the runner file are valid."""
        problems = self.violations(keys, first_entry_only=True)
        if problems:
            raise MatrixError(problems)

    def advisory_violations(self, keys: Iterable[str] | None = None) -> list[Violation]:
        """Findings for `gov check` that row generation itself tolerates:
        runners missing from the runner file's labels and scenario
        blocks whose empty search-space generates no rows at all."""
        data, _ = self.runner_result()
        found: list[Violation] = []
        for key in self.keys if keys is None else keys:
            raw = self.raw(key)
            if not isinstance(raw, dict):
                continue
            runner = raw.get("runner")
            if (
                data is not None
                and isinstance(runner, str)
                and runner.isascii()  # else GOV523, with the entry's validation
                and runner not in data.labels
            ):
                path, line, column = self.field_location(key, "runner")
                found.append(
                    violation(
                        "GOV521",
                        f"config '{key}': runner '{runner}' is not a label in {self._runner_path}",
                        path,
                        line,
                        column,
                        did_you_mean(runner, data.labels, quote=repr),
                    )
                )
            scenarios = raw.get("scenarios")
            for kind, blocks in scenarios.items() if isinstance(scenarios, dict) else ():
                for index, block in enumerate(blocks if isinstance(blocks, list) else ()):
                    if isinstance(block, dict) and block.get("search-space") == []:
                        path, line, column = self.field_location(
                            key, "scenarios", kind, index, "search-space"
                        )
                        found.append(
                            violation(
                                "GOV517",
                                f"config '{key}': {kind}[{index}] has an empty search-space "
                                "and generates no rows",
                                path,
                                line,
                                column,
                                "add search-space entries or remove the block",
                            )
                        )
        return found

    def field_location(self, key: str, *loc: Any) -> tuple[str, int, int]:
        """(path, line, column) of a field inside a config, e.g. ("runner",)."""
        line, column = self._locator(key)(loc)
        return self._owner[key].path, line, column


def _unresolved(code: str, text: str, pattern: str, keys: Sequence[str]) -> MatrixError:
    """A pattern of the generator that names no config key (the reference's
    wording), with the three closest keys, not all of them (InferenceX has 220)."""
    hint = did_you_mean(pattern, keys, limit=3, quote=repr) or (
        f"none of the {len(keys)} keys is close; `gov log KEY` or the master configs list them"
    )
    return MatrixError([violation(code, text, hint=hint)])
