"""Safe YAML loading shared by the changelog and the master configs.

Safety rules (they apply to every YAML byte gov reads):
* only the standard YAML 1.1 tags are constructed (ruamel's safe constructor);
  any other tag is an error;
* alias expansion is bounded by what it generates, not by how many aliases
  there are: a document whose aliases expand it past `MAX_EXPANDED_NODES`
  nodes ("billion laughs", 99 aliases of one 3,000-value list) is refused,
  at the alias that crosses the bound, before anything walks it;
* the input size is bounded (`MAX_YAML_BYTES`), and so are the nesting
  depth (`MAX_DEPTH`) and the length of a tag (`MAX_TAG_CHARS`), checked
  before the loader sees the text (the C loader recurses per level and
  crashes the process past some 20,000 levels);
* only the standard tags are accepted, by both flavours (round-trip would
  otherwise keep unknown tags), and a value its tag cannot construct
  (`!!int XXX`, an integer over Python's 4,300-digit limit) is a located
  error, not an exception;
* `strict=True` (the changelog) also refuses explicit tags, anchors, aliases
  and merge keys: they let one entry's bytes say different things to
  different readers (round-trip keeps `!!str` as a tagged scalar, `<<`
  passes the safe loader and fails the edits);
* duplicate mapping keys are an error at any depth.

A plain document (no tag, anchor, alias or merge key, nested at most
`MAX_DEPTH` deep) is built straight from the C parser's events
(`core.yamlfast`): the parser keeps its own stack, the builder stops at the
first collection past the bound, and it gives up on anything the rules
above would look at, which then takes the guarded path.

The bounds are listed in docs/security.md ("Bounds").

YAML 1.1 is used on purpose: the reference tooling reads these files with
PyYAML, so `yes`/`on`/dates resolve the way users of those files expect.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML

MAX_YAML_BYTES = 16 * 1024 * 1024
# Nodes a document stands for once every alias is expanded (InferenceX's
# largest master config: about 40,000 nodes, no alias).
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 64  # nested collections (block and flow)
MAX_TAG_CHARS = 128
# The tags the safe constructor builds; anything else is refused by both flavours.
STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in (
        "null", "bool", "int", "float", "str", "binary", "timestamp",
        "seq", "map", "omap", "pairs", "set", "merge",
    )
)  # fmt: skip
_LEAD = re.compile(r"^[ ?-]*", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """A YAML failure with a 1-based location inside the parsed text."""

    # yaml-syntax, duplicate-key, yaml-alias, yaml-anchor, yaml-tag, too-large, too-deep
    kind: str
    message: str
    line: int
    column: int


class YamlLoadError(Exception):
    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_loader_cache: dict[bool, YAML] = {}


def _guarded(base: type) -> type:
    """`base` with construction failures turned into located YAML errors:
    ruamel raises bare ValueError/KeyError for `!!int XXX`, `!!bool maybe` or
    an integer longer than Python converts."""
    from ruamel.yaml.constructor import ConstructorError

    class Guarded(base):
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep)
            except (ValueError, KeyError, TypeError, OverflowError, AttributeError) as exc:
                value = node.value if isinstance(node.value, str) else ""
                shown = value if len(value) <= 40 else value[:40] + "…"
                tag = node.tag.removeprefix("tag:yaml.org,2002:")
                raise ConstructorError(
                    None, None, f"{shown!r} is not a valid !!{tag}", node.start_mark
                ) from exc

    return Guarded


def _one_version_resolver() -> type:
    """ruamel's resolver, always resolving plain scalars by YAML 1.1 (as
    PyYAML, the reference's reader, does: a `%YAML` directive changes
    nothing) and looking its table up once instead of once per scalar (a
    fifth of a master config's parse time)."""
    from ruamel.yaml.resolver import VersionedResolver

    class OneVersionResolver(VersionedResolver):
        @property
        def processing_version(self) -> tuple[int, int]:
            return (1, 1)

        @property
        def versioned_resolver(self) -> Any:
            table = self.__dict__.get("_gov_table")
            if table is None:
                table = self.__dict__["_gov_table"] = super().versioned_resolver
            return table

    return OneVersionResolver


def _yaml(round_trip: bool) -> YAML:
    """One configured ruamel instance per flavour (creating one is costly)."""
    if round_trip not in _loader_cache:
        from ruamel.yaml import YAML
        from ruamel.yaml.constructor import RoundTripConstructor, SafeConstructor

        # The safe flavour scans and parses in C when ruamel.yaml.clib is
        # installed (7x faster on a 320 KB master config); construction, and
        # so the tag and duplicate-key rules, stays in Python either way.
        yaml = YAML(typ="rt" if round_trip else "safe", pure=round_trip)
        yaml.Constructor = _guarded(RoundTripConstructor if round_trip else SafeConstructor)
        yaml.Resolver = _one_version_resolver()
        yaml.version = (1, 1)
        yaml.allow_duplicate_keys = False
        _loader_cache[round_trip] = yaml
    return _loader_cache[round_trip]


def _depth_bound(text: str) -> int:
    """A cheap upper bound of the nesting depth: every flow opener, plus two
    levels per column of the widest run of indentation and `-`/`?`
    indicators that starts a line (an indentless sequence shares its
    parent's column), plus the document's own two."""
    lead = max((len(run) for run in _LEAD.findall(text)), default=0)
    return text.count("[") + text.count("{") + 2 * lead + 2


def prescan(text: str, *, strict: bool = False, line_offset: int = 0) -> YamlProblem | None:
    """The first bound or token rule `text` breaks, located; None if none.

    Tokens come from the C scanner, which keeps no stack per level: it is
    safe on input the loader would crash on. It runs only when a cheap look
    at the text says a rule could be broken."""
    deep = _depth_bound(text) > MAX_DEPTH
    risky = "!" in text or "&" in text or "*" in text or (strict and "<<" in text)
    if not deep and not risky:
        return None
    from ruamel.yaml import tokens as tk
    from ruamel.yaml.error import YAMLError

    opens = (
        tk.BlockSequenceStartToken,
        tk.BlockMappingStartToken,
        tk.FlowSequenceStartToken,
        tk.FlowMappingStartToken,
    )
    closes = (tk.BlockEndToken, tk.FlowSequenceEndToken, tk.FlowMappingEndToken)
    depth = aliases = 0

    def at(kind: str, message: str, token: Any) -> YamlProblem:
        mark = token.start_mark
        return YamlProblem(kind, message, mark.line + 1 + line_offset, mark.column + 1)

    try:
        for token in _yaml(False).scan(text):
            if isinstance(token, opens):
                depth += 1
                if depth > MAX_DEPTH:
                    return at("too-deep", f"nesting deeper than {MAX_DEPTH} levels", token)
            elif isinstance(token, closes):
                depth -= 1
            elif isinstance(token, tk.TagToken):
                problem = _tag_problem(token.value, strict)
                if problem:
                    return at(*problem, token)
            elif isinstance(token, tk.AnchorToken | tk.AliasToken) and strict:
                return at("yaml-anchor", "anchors and aliases are not allowed here", token)
            elif isinstance(token, tk.AliasToken):
                aliases += 1
            elif (
                strict and isinstance(token, tk.ScalarToken) and token.plain and token.value == "<<"
            ):
                return at("yaml-anchor", "merge keys (`<<`) are not allowed here", token)
    except YAMLError:
        return None  # a syntax error: the loader reports it, located
    return expansion_problem(text, line_offset) if aliases else None


def expansion_problem(text: str, line_offset: int = 0) -> YamlProblem | None:
    """`yaml-alias` at the alias whose expansion takes the document past
    MAX_EXPANDED_NODES nodes. The parser's events are counted, each alias
    adding the size of the node it names (anchors inside anchors included);
    nothing is built."""
    from ruamel.yaml import events as ev
    from ruamel.yaml.error import YAMLError

    sizes: dict[str, int] = {}
    opened: list[tuple[str | None, int]] = []  # (anchor, nodes before it) per open collection
    nodes = 0
    try:
        for event in _yaml(False).parse(text):
            if isinstance(event, ev.AliasEvent):
                nodes += sizes.get(event.anchor, 1)
                if nodes > MAX_EXPANDED_NODES:
                    mark = event.start_mark
                    return YamlProblem(
                        "yaml-alias",
                        f"the aliases expand this document to more than "
                        f"{MAX_EXPANDED_NODES:,} nodes (alias *{event.anchor} stands for "
                        f"{sizes.get(event.anchor, 1):,})",
                        mark.line + 1 + line_offset,
                        mark.column + 1,
                    )
            elif isinstance(event, ev.ScalarEvent):
                nodes += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, ev.CollectionStartEvent):
                opened.append((event.anchor, nodes))
                nodes += 1
            elif isinstance(event, ev.CollectionEndEvent) and opened:
                anchor, before = opened.pop()
                if anchor is not None:
                    sizes[anchor] = nodes - before
    except YAMLError:
        return None  # a syntax error: the loader reports it, located
    return None


def _tag_problem(value: tuple[str | None, str], strict: bool) -> tuple[str, str] | None:
    handle, suffix = value
    spelled = (handle or "") + suffix
    if len(spelled) > MAX_TAG_CHARS:
        return "yaml-tag", f"a tag of {len(spelled):,} characters (at most {MAX_TAG_CHARS})"
    if handle == "!!":
        full = "tag:yaml.org,2002:" + suffix
    elif handle is None:
        full = suffix
    else:
        full = ""  # `!local` and `!x!` handles: never standard here
    if handle == "!" and suffix == "":
        return None  # `!` alone: the non-specific tag (a plain string)
    if full not in STANDARD_TAGS:
        shown = spelled if len(spelled) <= 40 else spelled[:40] + "…"
        return "yaml-tag", f"tag {shown!r} is not a standard YAML tag"
    if strict:  # the readers disagree on tagged values (round-trip keeps the tag)
        return "yaml-anchor", f"explicit tags ({spelled!r}) are not allowed here"
    return None


def load(text: str, *, round_trip: bool = False, line_offset: int = 0, strict: bool = False) -> Any:
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
    if not round_trip:
        from governance.core.yamlfast import NotPlain, load_plain

        # A plain document (no tag, anchor, alias or merge key, nesting within
        # MAX_DEPTH) is built straight from the parser's events, which breaks no
        # rule the prescan enforces; any other goes through the prescan and the
        # constructor, which say what is wrong and where.
        with contextlib.suppress(NotPlain):
            return load_plain(_yaml(False), text, MAX_DEPTH)
    problem = prescan(text, strict=strict, line_offset=line_offset)
    if problem is not None:
        raise YamlLoadError(problem)
    try:
        try:
            return _yaml(round_trip).load(text)
        except (IndexError, ValueError, TypeError):
            # The safe constructor crashes on some values its resolver accepts
            # (`-_` resolves as an int with no digits); the round-trip one
            # rejects the same value with its position.
            if round_trip:
                raise
            _yaml(True).load(text)
            raise
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
        if _unclosed(exc.context) and exc.context_mark is not None:
            mark = (
                exc.context_mark
            )  # where the quote or bracket opened, not where EOF or the next line noticed it
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


def _unclosed(context: str | None) -> bool:
    """A quoted scalar or flow collection left open: the parser notices it only
    at a later line, so the opening is the position to show."""
    text = context or ""
    return text.startswith(("while scanning a quoted scalar", "while parsing a flow"))


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
