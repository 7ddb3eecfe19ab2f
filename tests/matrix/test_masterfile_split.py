"""The block splitter (`masterfile._split`) against the line-by-line scan it
replaces: the same block starts, lines and repeats, and the same refusals
(an anchor, alias, tag or merge key outside a comment), on generated files."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.matrix.masterfile import _KEY_LINE, _UNSPLITTABLE, Block, _split, blocks_at


def line_by_line(text: str) -> tuple[dict[str, Block], list[tuple[str, int]]] | None:
    """The plain statement of the rule: every line read in turn."""
    starts: list[tuple[str, int, int]] = []
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if line[:1] and line[:1] not in " \t\r#":
            match = _KEY_LINE.match(line)
            if match is None:
                return None
            starts.append((match.group("key"), number, offset))
        code = "" if line.lstrip().startswith("#") else line.split(" #", 1)[0]
        if _UNSPLITTABLE.search(code):
            return None
        offset += len(line) + 1
    return blocks_at(text, starts)  # the blocks from the starts: shared, not under test


_LINES = st.sampled_from([
    "a-key:", "b:", "a-key:", "  image: x", "  tp: 8", "# a comment & *x", "  - x # *alias",
    "  x: &anchor 1", "  y: *anchor", "  z: !tag v", "  <<: *base", "", "  ", "\t", "\r",
    "bad line", "  s: 'a & b'", "  n: 3*4", "  l: [*a]", "  m: {k: !t v}", "c: # &x",
    "   # !not", "key.with.dots:", "k:v",
])  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(lines=st.lists(_LINES, max_size=12), final_newline=st.booleans())
def test_the_split_is_the_line_by_line_scan(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    assert _split.__wrapped__(text) == line_by_line(text)


def test_a_tie_outside_a_comment_refuses_the_split() -> None:
    assert _split.__wrapped__("a:\n  x: &k 1\nb:\n  y: *k\n") is None
    assert _split.__wrapped__("a:\n  x: 1 # &k\nb:\n  y: 2\n") is not None
