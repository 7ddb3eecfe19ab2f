"""The shell lexer's shortcuts change no word: the lexer is held to its
character-at-a-time version (`ORACLE`, read from git) on generated text and on
every real launch script."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.sweeps.shellwords import Word, commands
from tests.harness import CORPUS, PROJECT, git

# The lexer before its regex-driven main loop and expansion shortcuts (every
# later change must give the same words, or say here why not).
ORACLE = "ba7a405a92c1d43db081dbf47b9eec7ddda4e0a0"
RUNNERS_BUNDLE = CORPUS / "inferencex-runners.bundle"
FIELDS = tuple(f.name for f in dataclasses.fields(Word))

Lexed = list[list[tuple[object, ...]]]


def _as_tuples(lexed: list[list[Word]]) -> Lexed:
    return [[tuple(getattr(word, name) for name in FIELDS) for word in words] for words in lexed]


@pytest.fixture(scope="module")
def oracle() -> Iterator[Callable[[str], Lexed]]:
    """The old lexer's `commands`, loaded from git into a module of its own."""
    shown = subprocess.run(
        ["git", "-C", str(PROJECT), "show", f"{ORACLE}:governance/sweeps/shellwords.py"],
        capture_output=True,
        text=True,
    )
    if shown.returncode != 0:
        pytest.skip(f"the oracle lexer (commit {ORACLE[:7]}) is not in this checkout's history")
    name = "shellwords_oracle"
    module = ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        exec(compile(shown.stdout, f"{ORACLE[:7]}:shellwords.py", "exec"), module.__dict__)
        assert tuple(f.name for f in dataclasses.fields(module.Word)) == FIELDS
        yield lambda text: _as_tuples(module.commands(text))
    finally:
        del sys.modules[name]


def _same(text: str, oracle: Callable[[str], Lexed], where: str = "") -> None:
    assert _as_tuples(commands(text)) == oracle(text), where or repr(text)


# Pieces that reach every branch: quotes, each kind of expansion (simple,
# nested, unclosed), escapes, continuations, comments, heredocs, arrays,
# redirections and separators, beside plain words that take the shortcuts.
PIECES = [
    *["vllm", "serve", "-m", "--quantization", "=", "fp8", "fp8=x", "é", "1", "2", "A_1"],
    *["$", "{", "}", "(", ")", "[", "]", "@", "*", "#", "?", "!", "-", "_"],
    *['"', "'", "\\", "`", ";", "&", "|", "<", ">", " ", "  ", "\t", "\r", "\n"],
    *["\\\n", "<<-EOF\n", "<<'EOF'\n", "EOF", "\tEOF\n", "A=", "x=(", "x+=(", "#x"],
    *["$A", "$é", "${A}", "${A:-$B}", "${A[@]}", "$(", "$((", "$(a b)", "$(a 'b')", "${"],
    *['"$A"', '"${A:-x}"', '"a b"', '"$(c)"', "'a b'", "`a`", "2>&1", ">&2", ";;", "&&"],
    *['"$(a "$B")/c"', "$((1 + (2)))", "$(a 'b' \"c\")", "$(a $(b))", '"$("$(x)")"', "f()"],
]


@settings(max_examples=1000, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=60))
def test_generated_text_is_lexed_as_the_oracle_lexes_it(
    parts: list[str], oracle: Callable[[str], Lexed]
) -> None:
    _same("".join(parts), oracle)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_any_text_is_lexed_as_the_oracle_lexes_it(
    text: str, oracle: Callable[[str], Lexed]
) -> None:
    _same(text, oracle)


@pytest.mark.corpus
def test_every_real_script_is_lexed_as_the_oracle_lexes_it(
    oracle: Callable[[str], Lexed], tmp_path: Path
) -> None:
    if not RUNNERS_BUNDLE.is_file():
        pytest.skip(f"runners bundle not found at {RUNNERS_BUNDLE} (the shared corpus)")
    clone = tmp_path / "runners"
    git(tmp_path, "clone", "-q", "--branch", "main", str(RUNNERS_BUNDLE), str(clone))
    scripts = [
        path for folder in ("benchmarks", "runners") for path in (clone / folder).rglob("*.sh")
    ]
    assert len(scripts) > 200
    for path in sorted(scripts):
        _same(path.read_text("utf-8", "replace"), oracle, str(path.relative_to(clone)))
