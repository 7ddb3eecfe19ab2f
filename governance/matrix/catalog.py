"""Master configs + runner file -> a validated, lazily parsed `Catalog`.

Pure: bytes in, data and located `Violation`s out (sections 1 and 2).

Why lazy: the NVIDIA master file is ~300 KB of YAML and a pure-Python YAML
parse of it takes seconds. Each top-level key of a master file is a
self-contained block, so the file is split at column-0 `key:` lines (a
byte-span scan) and each block is parsed only when asked for. Parsed blocks
can be cached on disk by the SHA-256 of their bytes (`BlockCache`), so an
unchanged block is never parsed twice, whichever commit it comes from. Files
the splitter cannot prove safe (anchors, flow style, directives...) are parsed
whole; both paths give the same data.

Positions: a violation points at the offending key (1-based line and column
in the master file); finding it re-parses only the faulty block with
ruamel's round-trip loader.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from governance import yamlsafe
from governance.changelog.keys import resolve_pattern
from governance.diagnostics import Violation
from governance.matrix.errors import MatrixError, did_you_mean, violation
from governance.matrix.model import RunnerConfig, RunnerHardware, entry_schema

AMD_MASTER = "configs/amd-master.yaml"
NVIDIA_MASTER = "configs/nvidia-master.yaml"
MASTER_FILES = (AMD_MASTER, NVIDIA_MASTER)
RUNNER_FILE = "configs/runners.yaml"

_CACHE_FORMAT = b"gov-matrix-block-v1\0"


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file: repository-relative path and bytes (None = missing)."""

    path: str
    data: bytes | None


# -- on-disk cache -------------------------------------------------------------


class BlockCache:
    """Parsed master-config blocks on disk, keyed by the SHA-256 of the block's
    bytes. Content addressing makes entries valid forever; only plain JSON
    data is stored (blocks holding dates, binary... are simply not cached)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @staticmethod
    def digest(block: bytes) -> str:
        return hashlib.sha256(_CACHE_FORMAT + block).hexdigest()

    def _file(self, digest: str) -> Path:
        return self.directory / digest[:2] / f"{digest}.json"

    def get(self, digest: str) -> Any | None:
        try:
            return json.loads(self._file(digest).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, digest: str, value: Any) -> None:
        if not _json_plain(value):
            return
        target = self._file(digest)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(value, handle, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, target)
        except OSError:
            pass  # a cache that cannot be written is only slower


def git_blob_id(data: bytes) -> str:
    """The git blob SHA-1 of `data` (what `git hash-object` prints), so callers
    can key their own caches by blob id without asking git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _json_plain(value: Any) -> bool:
    """True when a JSON round trip gives back an equal, same-typed value."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_json_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_plain(v) for k, v in value.items())
    return False


# -- splitting a master file into per-key blocks --------------------------------

_KEY_LINE = re.compile(r"(?P<key>[A-Za-z0-9_.][^\s:#]*):(?:[ \t]|$)")
# anchors, aliases, merge keys or tags would tie blocks together: parse whole.
_UNSPLITTABLE = re.compile(r"(?:^|[\s\[{,])[&*!][^\s,\]}]|<<\s*:")


@dataclass(slots=True)
class _Block:
    key: str
    line: int  # 1-based line of the `key:` line
    text: str  # the block's source (key line to the line before the next key)


@dataclass(slots=True)
class _MasterFile:
    path: str
    text: str
    blocks: dict[str, _Block] | None  # None: parsed whole (see `whole`)
    whole: dict[str, Any] | None = None
    problems: list[Violation] = field(default_factory=list)
    key_lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    _rt_whole: Any = None

    @property
    def keys(self) -> list[str]:
        if self.blocks is not None:
            return list(self.blocks)
        return list(self.whole or {})


def _split(text: str) -> tuple[dict[str, _Block], list[tuple[str, int]]] | None:
    """Blocks per top-level key, plus repeated keys (key, line); None when the
    file is not in the plain block style this scanner can vouch for."""
    starts: list[tuple[str, int, int]] = []  # key, line number, char offset
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        first = line[:1]
        if first and first not in " \t\r#":
            match = _KEY_LINE.match(line)
            if match is None:
                return None
            starts.append((match.group("key"), number, offset))
        # comments cannot tie blocks together; code is checked up to a ` #`
        code = "" if line.lstrip().startswith("#") else line.split(" #", 1)[0]
        if _UNSPLITTABLE.search(code):
            return None
        offset += len(line) + 1
    if not starts:
        return None
    blocks: dict[str, _Block] = {}
    repeats: list[tuple[str, int]] = []
    for index, (key, number, start) in enumerate(starts):
        end = starts[index + 1][2] if index + 1 < len(starts) else len(text)
        if key in blocks:
            repeats.append((key, number))
            continue
        blocks[key] = _Block(key, number, text[start:end])
    return blocks, repeats


def _yaml_violation(path: str, exc: yamlsafe.YamlLoadError, key: str = "") -> Violation:
    problem = exc.problem
    code = "GOV511" if problem.kind == "duplicate-key" else "GOV510"
    where = f" (config '{key}')" if key else ""
    return violation(code, f"{path}: {problem.message}{where}", path, problem.line, problem.column)


def _read_master(source: SourceFile) -> _MasterFile:
    path = source.path
    if source.data is None:
        missing = _MasterFile(path, "", None, {})
        missing.problems.append(violation("GOV510", f"Input file '{path}' does not exist.", path))
        return missing
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = _MasterFile(path, "", None, {})
        bad.problems.append(violation("GOV510", f"{path} is not UTF-8: {exc}", path))
        return bad
    split = _split(text)
    if split is not None:
        blocks, repeats = split
        master = _MasterFile(path, text, blocks)
        for key, number in repeats:
            master.problems.append(
                violation(
                    "GOV511",
                    f"duplicate key '{key}' in {path} (first defined on line "
                    f"{blocks[key].line})",
                    path,
                    number,
                    1,
                    hint="each config key may be defined once; merge or rename the blocks",
                )
            )
        master.key_lines = {key: (block.line, 1) for key, block in blocks.items()}
        return master
    master = _MasterFile(path, text, None)
    try:
        data = yamlsafe.load(text)
    except yamlsafe.YamlLoadError as exc:
        master.whole = {}
        master.problems.append(_yaml_violation(path, exc))
        return master
    if not isinstance(data, dict):
        master.whole = {}
        master.problems.append(
            violation("GOV510", f"Config file '{path}' must contain a dictionary", path, 1, 1)
        )
        return master
    master.whole = data
    if data:
        # positions of top-level keys, needed for key-level violations
        rt = _round_trip(text, path)
        master._rt_whole = rt
        if rt is not None:
            for key in data:
                master.key_lines[key] = _key_position(rt, key)
    return master


def _round_trip(text: str, path: str, line_offset: int = 0) -> Any:
    try:
        return yamlsafe.load(text, round_trip=True, line_offset=line_offset)
    except yamlsafe.YamlLoadError:
        return None


def _key_position(mapping: Any, key: Any) -> tuple[int, int]:
    try:
        line, column = mapping.lc.key(key)
    except (AttributeError, KeyError, TypeError):
        return 0, 0
    return line + 1, column + 1


# -- mapping a pydantic error location to a line/column -------------------------


Locator = Callable[[Sequence[Any]], tuple[int, int]]


def tree_locator(root: Any, prefix: Sequence[Any] = (), line_offset: int = 0,
                 default: tuple[int, int] = (0, 0)) -> Locator:
    """A function mapping an error location to an absolute (line, column)."""

    def locate(loc: Sequence[Any]) -> tuple[int, int]:
        found = yamlsafe.position(root, [*prefix, *loc]) if root is not None else None
        if found is None:
            return default
        return found[0] + line_offset, found[1]

    return locate


_ERROR_CODES = {"extra_forbidden": "GOV513", "missing": "GOV514", "value_error": "GOV516"}


def _pydantic_violations(
    exc: ValidationError,
    *,
    path: str,
    owner: str,
    locate: Locator,
    known_fields: Iterable[str] = (),
    code: str | None = None,
) -> list[Violation]:
    """One located violation per pydantic error."""
    found: list[Violation] = []
    for error in exc.errors(include_url=False, include_input=False):
        loc = list(error["loc"])
        line, column = locate(loc)
        message = error["msg"].removeprefix("Value error, ")
        where = ".".join(str(part) for part in loc)
        kind = _ERROR_CODES.get(error["type"], "GOV515")
        hint = ""
        if kind == "GOV513" and loc:
            hint = did_you_mean(str(loc[-1]), known_fields)
        text = f"{owner}: {where}: {message}" if where else f"{owner}: {message}"
        found.append(violation(code or kind, text, path, line, column, hint))
    return found


def _schema_fields(schema: type) -> set[str]:
    """Every YAML field name a schema family knows (for did-you-mean hints)."""
    names: set[str] = set()
    pending = [schema]
    seen: set[type] = set()
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():  # type: ignore[attr-defined]
            names.add(info.alias or name)
            for arg in _model_args(info.annotation):
                pending.append(arg)
    return names


def _model_args(annotation: Any) -> list[type]:
    from pydantic import BaseModel

    found: list[type] = []
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            found.append(item)
        stack.extend(getattr(item, "__args__", ()) or ())
    return found


# -- runner file -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunnerData:
    labels: dict[str, list[str]]
    hardware: dict[str, RunnerHardware]


def parse_runner_file(source: SourceFile) -> tuple[RunnerData | None, list[Violation]]:
    """Validate the runner file (1.2). Returns the data or the violations."""
    path = source.path
    if source.data is None:
        return None, [violation("GOV520", f"Runner config file '{path}' does not exist.", path)]
    try:
        text = source.data.decode("utf-8")
        raw = yamlsafe.load(text)
    except UnicodeDecodeError as exc:
        return None, [violation("GOV520", f"{path} is not UTF-8: {exc}", path)]
    except yamlsafe.YamlLoadError as exc:
        problem = exc.problem
        return None, [
            violation("GOV520", f"{path}: {problem.message}", path, problem.line, problem.column)
        ]
    rt: Any = None

    def where(*loc: Any) -> tuple[int, int]:
        nonlocal rt
        if rt is None:
            rt = _round_trip(text, path)
        return tree_locator(rt, default=(1, 1))(loc)

    labels = raw.get("labels") if isinstance(raw, dict) else None
    if not isinstance(labels, dict):
        line, column = where("labels")
        message = "Runner config must define a labels mapping"
        return None, [violation("GOV520", message, path, line, column)]
    for label, nodes in labels.items():
        message = ""
        if not isinstance(nodes, list):
            message = f"Runner config entry '{label}' must be a list, got {type(nodes).__name__}"
        elif not all(isinstance(node, str) for node in nodes):
            message = f"Runner config entry '{label}' must contain only strings"
        elif not nodes:
            message = f"Runner config entry '{label}' cannot be an empty list"
        if message:
            line, column = where("labels", label)
            return None, [violation("GOV520", message, path, line, column)]
    try:
        config = RunnerConfig.model_validate(raw)
    except ValidationError as exc:
        found = _pydantic_violations(
            exc,
            path=path,
            owner="Runner config failed validation",
            locate=tree_locator(_round_trip(text, path), default=(1, 1)),
            known_fields=_schema_fields(RunnerConfig),
            code="GOV520",
        )
        return None, found
    return RunnerData(dict(config.labels), dict(config.hardware)), []


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
        runner: SourceFile | None = None,
        *,
        cache: BlockCache | None = None,
    ) -> None:
        self._files = [_read_master(source) for source in masters]
        self._runner_source = runner
        self._runner: tuple[RunnerData | None, list[Violation]] | None = None
        self._cache = cache
        self._owner: dict[str, _MasterFile] = {}
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
                        "GOV511",
                        f"Duplicate configuration keys found in '{master.path}': "
                        + ", ".join(sorted(repeated)),
                        master.path,
                        line,
                        column,
                        hint=f"already defined in {self._owner[first].path}",
                    )
                )

    @classmethod
    def from_bytes(
        cls,
        amd: bytes | None,
        nvidia: bytes | None,
        runners: bytes | None,
        *,
        cache: BlockCache | None = None,
    ) -> Catalog:
        return cls(
            [SourceFile(AMD_MASTER, amd), SourceFile(NVIDIA_MASTER, nvidia)],
            SourceFile(RUNNER_FILE, runners),
            cache=cache,
        )

    # -- keys ----------------------------------------------------------------------

    @property
    def keys(self) -> list[str]:
        """Every config key, in master order."""
        return list(self._owner)

    def __contains__(self, key: object) -> bool:
        return key in self._owner

    def location(self, key: str) -> tuple[str, int, int]:
        """(path, line, column) of a config key's definition."""
        master = self._owner[key]
        line, column = master.key_lines.get(key, (0, 0))
        return master.path, line, column

    def resolve_globs(self, patterns: Sequence[str]) -> list[str]:
        """Generator key resolution (4.1): shell globs or exact keys."""
        keys = self.keys
        resolved: list[str] = []
        for pattern in patterns:
            if "*" in pattern or "?" in pattern:
                matched = [key for key in keys if fnmatch.fnmatchcase(key, pattern)]
                if not matched:
                    raise MatrixError(
                        [
                            violation(
                                "GOV502",
                                f"Pattern '{pattern}' matched no config keys.\n"
                                f"Available keys: {', '.join(sorted(keys))}",
                                hint=did_you_mean(pattern, keys),
                            )
                        ]
                    )
            elif pattern in self._owner:
                matched = [pattern]
            else:
                raise MatrixError(
                    [
                        violation(
                            "GOV501",
                            f"Config key(s) not found: {pattern}.\n"
                            f"Available keys: {', '.join(sorted(keys))}",
                            hint=did_you_mean(pattern, keys),
                        )
                    ]
                )
            resolved.extend(key for key in matched if key not in resolved)
        return resolved

    def match_wildcard(self, pattern: str) -> list[str]:
        """Changelog key resolution (7.3) of one pattern; [] when nothing matches."""
        if "*" not in pattern:
            return [pattern] if pattern in self._owner else []
        return resolve_pattern(pattern, self.keys)

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
            self._checked[key] = [_yaml_violation(master.path, exc, key)]
            return None
        if not isinstance(parsed, dict) or list(parsed) != [key]:
            # the scanner misjudged the block: fall back to a whole-file parse
            return self._parse_whole(master, key)
        if self._cache is not None:
            self._cache.put(digest, parsed)
        return parsed[key]

    def _parse_whole(self, master: _MasterFile, key: str) -> Any:
        if master.whole is None:
            try:
                data = yamlsafe.load(master.text)
            except yamlsafe.YamlLoadError as exc:
                self._checked[key] = [_yaml_violation(master.path, exc, key)]
                return None
            master.whole = data if isinstance(data, dict) else {}
        return master.whole.get(key)

    def entry(self, key: str) -> dict[str, Any]:
        """Validated raw data of one config key; MatrixError when invalid."""
        problems = self.entry_violations(key)
        if problems:
            raise MatrixError(problems)
        return self.raw(key)

    def entry_violations(self, key: str) -> list[Violation]:
        if key not in self._checked:
            raw = self.raw(key)
            if key not in self._checked:  # parsing may already have failed
                self._checked[key] = self._validate(key, raw)
        return self._checked[key]

    def _validate(self, key: str, raw: Any) -> list[Violation]:
        schema = entry_schema(raw)
        try:
            schema.model_validate(raw)
        except ValidationError as exc:
            master = self._owner[key]
            return _pydantic_violations(
                exc,
                path=master.path,
                owner=f"Master config entry '{key}' failed validation",
                locate=self._locator(key),
                known_fields=_schema_fields(schema),
            )
        return []

    def _locator(self, key: str) -> Locator:
        """Locate fields inside one config; only its own block is re-parsed."""
        master = self._owner[key]
        default = master.key_lines.get(key, (0, 0))
        if master.blocks is not None:
            block = master.blocks[key]
            root = _round_trip(block.text, master.path)
            return tree_locator(root, [key], block.line - 1, default)
        if master._rt_whole is None:
            master._rt_whole = _round_trip(master.text, master.path)
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
            source = self._runner_source or SourceFile(RUNNER_FILE, None)
            self._runner = parse_runner_file(source)
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
        runners missing from the runner file's labels (9.12) and scenario
        blocks whose empty search-space generates no rows at all."""
        data, _ = self.runner_result()
        found: list[Violation] = []
        for key in self.keys if keys is None else keys:
            raw = self.raw(key)
            if not isinstance(raw, dict):
                continue
            runner = raw.get("runner")
            if data is not None and isinstance(runner, str) and runner not in data.labels:
                path, line, column = self.field_location(key, "runner")
                found.append(
                    violation(
                        "GOV521",
                        f"config '{key}': runner '{runner}' is not a label in {RUNNER_FILE}",
                        path,
                        line,
                        column,
                        did_you_mean(runner, data.labels),
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
