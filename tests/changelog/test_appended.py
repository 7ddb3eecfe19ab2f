"""`changelog.appended`: the lines head adds to base, read from the blobs.

Each case is also held against what `git diff` (git's defaults, the
reference's reading) shows as `+` lines, in a real repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.changelog.appended import Removed, appended
from tests.harness import Repo


def entry(n: int, key: str = "k") -> bytes:
    return (
        f"- config-keys:\n    - {key}{n}\n  description:\n    - change {n}\n"
        f"  pr-link: https://example.invalid/pull/{n}\n"
    ).encode()


BASE = entry(1) + b"\n" + entry(2)
CASES = {
    "append": (BASE, BASE + b"\n" + entry(3)),
    "new-file": (b"", entry(1)),
    # an entry placed between two others: it reads from its `- config-keys:`
    # line (git's placement), not from `    - k3` one line lower
    "insert-between": (BASE, entry(1) + b"\n" + entry(3) + b"\n" + entry(2)),
    "insert-between-same-key": (
        entry(1, "same") + b"\n" + entry(2, "same"),
        entry(1, "same") + b"\n" + entry(3, "same") + b"\n" + entry(2, "same"),
    ),
    "blank-line-dropped": (BASE + b"\n", BASE + entry(3)),
    "line-starting-with-plus-plus": (BASE, BASE + b'\n- config-keys: ["a\n++"]\n'),
}


def git_plus_lines(tmp_path: Path, base: bytes, head: bytes) -> list[tuple[int, str]]:
    repo = Repo(tmp_path / "repo")
    repo.commit("base", **{"f.yaml": base})
    repo.commit("head", **{"f.yaml": head})
    diff = repo.git("diff", "--no-ext-diff", "--no-textconv", "HEAD~1", "HEAD", "--", "f.yaml")
    found: list[tuple[int, str]] = []
    line = 0
    for raw in diff.split("\n"):
        if raw.startswith("@@"):
            line = int(raw.split("+")[1].split(",")[0].split(" ")[0])
        elif raw.startswith(("+++ ", "--- ")) and not found and line == 0:
            continue  # the file headers (before the first hunk)
        elif raw.startswith("+"):
            found.append((line, raw[1:]))
            line += 1
        elif raw.startswith(" "):
            line += 1
    return found


@pytest.mark.parametrize(("base", "head"), CASES.values(), ids=CASES.keys())
def test_the_added_lines_are_the_ones_git_shows(tmp_path: Path, base: bytes, head: bytes) -> None:
    found = appended(base, head)
    assert found.removed is None
    assert list(zip(found.numbers, found.lines, strict=True)) == git_plus_lines(
        tmp_path, base, head
    )


def test_a_plain_append_is_heads_tail() -> None:
    found = appended(BASE, BASE + b"\n" + entry(3))
    assert found.numbers[0] == BASE.count(b"\n") + 1
    assert found.lines[:2] == ("", "- config-keys:")


def test_an_absent_file_adds_nothing_or_everything() -> None:
    assert appended(None, None).lines == ()
    assert appended(None, entry(1)).numbers == (1, 2, 3, 4, 5)
    assert appended(entry(1), None).removed == Removed("- config-keys:", 1, 1)


def test_a_rewritten_line_is_located_at_its_counterpart_in_head() -> None:
    head = BASE.replace(b"change 2", b"change 2b") + b"\n" + entry(3)
    found = appended(BASE, head)
    assert found.removed == Removed("    - change 2", 10, 10)


def test_a_deleted_line_that_starts_with_two_dashes_is_a_deletion() -> None:
    """In diff text it reads `---...`, a file header to a line scanner."""
    base = BASE + b"\n# --\n--x\n"
    found = appended(base, BASE + b"\n# --\n")
    assert found.removed == Removed("--x", 14, 13)  # head ends at line 13


def test_a_base_without_its_final_newline_counts_as_rewritten() -> None:
    """`x` and `x\\n` are different lines (git: `\\ No newline at end of file`)."""
    base = BASE.removesuffix(b"\n")
    found = appended(base, BASE + b"\n" + entry(3))
    assert found.removed is not None
    assert found.removed.text.startswith("  pr-link:")


def test_whitespace_only_deletions_are_not_reported() -> None:
    assert appended(BASE + b"\n\n", BASE + entry(3)).removed is None
