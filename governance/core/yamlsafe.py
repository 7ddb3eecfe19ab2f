"""Safe YAML loading shared by the changelog and the master configs.

Safety rules (they apply to every YAML byte gov reads):
* only the standard YAML 1.1 tags are constructed (ruamel's safe constructor);
  any other tag is an error;
* anchors and aliases are bounded: an alias-heavy document ("billion laughs")
  is refused before anything walks it;
* the input size is bounded (`MAX_YAML_BYTES`);
* duplicate mapping keys are an error at any depth.

YAML 1.1 is used on purpose: the reference tooling reads these files with
PyYAML, so `yes`/`on`/dates resolve the way users of those files expect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML

MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_ALIASES = 100


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """A YAML failure with a 1-based location inside the parsed text."""

    kind: str  # "yaml-syntax" | "duplicate-key" | "yaml-alias" | "yaml-tag" | "too-large"
    message: str
    line: int
    column: int


class YamlLoadError(Exception):
    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_loader_cache: dict[bool, YAML] = {}


def _yaml(round_trip: bool) -> YAML:
    """One configured ruamel instance per flavour (creating one is costly)."""
    if round_trip not in _loader_cache:
        from ruamel.yaml import YAML

        # The safe flavour scans and parses in C when ruamel.yaml.clib is
        # installed (7x faster on a 320 KB master config); construction, and
        # so the tag and duplicate-key rules, stays in Python either way.
        yaml = YAML(typ="rt" if round_trip else "safe", pure=round_trip)
        yaml.version = (1, 1)
        yaml.allow_duplicate_keys = False
        _loader_cache[round_trip] = yaml
    return _loader_cache[round_trip]


def _count_aliases(text: str) -> int:
    """Cheap upper bound on alias use: '*name' tokens outside quotes are rare
    in our files; only when present do we ask the scanner for real tokens."""
    if "*" not in text and "&" not in text:
        return 0
    from ruamel.yaml.tokens import AliasToken

    yaml = _yaml(False)
    count = 0
    try:
        for token in yaml.scan(text):
            if isinstance(token, AliasToken):
                count += 1
    except Exception:
        return count
    return count


def load(text: str, *, round_trip: bool = False, line_offset: int = 0) -> Any:
    """Parse one YAML document safely.

    `line_offset` is added to reported line numbers (for snippets cut out of a
    larger file). `round_trip=True` returns ruamel's commented containers,
    which carry `.lc` positions (slower; use it only where positions matter).
    """
    from ruamel.yaml.constructor import ConstructorError, DuplicateKeyError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.reader import ReaderError

    if len(text) > MAX_YAML_BYTES:
        raise YamlLoadError(
            YamlProblem(
                "too-large",
                f"YAML input is {len(text)} bytes; the limit is {MAX_YAML_BYTES}",
                1 + line_offset,
                1,
            )
        )
    if _count_aliases(text) > MAX_ALIASES:
        raise YamlLoadError(
            YamlProblem(
                "yaml-alias",
                f"more than {MAX_ALIASES} YAML aliases; refusing a possible alias bomb",
                1 + line_offset,
                1,
            )
        )
    try:
        return _yaml(round_trip).load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark or exc.context_mark
        key = _duplicate_key_name(str(exc.problem or ""))
        message = f"duplicate key {key!r}" if key else "duplicate mapping key"
        raise YamlLoadError(_problem("duplicate-key", message, mark, line_offset)) from exc
    except ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        detail = (exc.problem or str(exc)).strip()
        kind = "yaml-tag" if "tag" in detail else "yaml-syntax"
        raise YamlLoadError(_problem(kind, detail, mark, line_offset)) from exc
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        detail = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlLoadError(_problem("yaml-syntax", detail or str(exc), mark, line_offset)) from exc
    except ReaderError as exc:
        # Non-printable characters; the position is a character index.
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        message = f"character #x{exc.character:04x} is not allowed in YAML"
        raise YamlLoadError(
            YamlProblem("yaml-syntax", message, line + line_offset, column)
        ) from exc
    except YAMLError as exc:
        raise YamlLoadError(YamlProblem("yaml-syntax", str(exc), 1 + line_offset, 1)) from exc
    except RecursionError as exc:
        raise YamlLoadError(
            YamlProblem("yaml-syntax", "YAML nesting is too deep", 1 + line_offset, 1)
        ) from exc


def _problem(kind: str, message: str, mark: Any, line_offset: int) -> YamlProblem:
    line = (mark.line + 1) if mark is not None else 1
    column = (mark.column + 1) if mark is not None else 1
    return YamlProblem(kind, message, line + line_offset, column)


def _duplicate_key_name(problem: str) -> str:
    # ruamel says: found duplicate key "pr-link" with value "..." (original value: "...")
    marker = 'found duplicate key "'
    start = problem.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    end = problem.find('"', start)
    return problem[start:end] if end > start else ""


def position(node: Any, loc: Sequence[Any]) -> tuple[int, int] | None:
    """Where a key or item sits in a `load(..., round_trip=True)` tree.

    Walks `loc` through the round-trip containers; the 1-based position of the
    deepest element that exists (a missing field points at its parent), or
    None when not even the first step exists."""
    found: tuple[int, int] | None = None
    for part in loc:
        lc = getattr(node, "lc", None)
        if lc is None:
            break
        try:
            if isinstance(node, dict) and part in node:
                line, column = lc.key(part)
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                line, column = lc.item(part)
                node = node[part]
            else:
                break
        except (KeyError, IndexError, TypeError):
            break
        found = (line + 1, column + 1)
    return found


def compose(text: str) -> Any:
    """The YAML node tree of `text` (nodes carry start/end marks), from the
    same configured round-trip instance. Only for text that `load` accepted:
    composing builds nodes, never objects."""
    return _yaml(True).compose(text)
