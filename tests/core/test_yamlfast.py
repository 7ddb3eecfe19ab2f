"""The event builder (`core.yamlfast`) against ruamel's safe constructor: on
every document it builds, the same values of the same types, key order
included; on the rest it gives up and the constructor decides. Real master
configs and changelogs from the corpus history, then generated documents
full of YAML 1.1's odd scalars."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.core import yamlsafe
from governance.core.yamlfast import NotPlain, load_plain
from tests.harness import MASTER_FILES

# `1e3` is a YAML 1.1 float the constructor converts with a warning; the builder, silently.
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.MantissaNoDotYAML1_1Warning")


def same(a: Any, b: Any) -> bool:
    """Equal values of identical types all the way down (True is not 1, 1.0 is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def built(text: str) -> Any:
    """The builder's value, or NotPlain."""
    return load_plain(yamlsafe._yaml(False), text, yamlsafe.MAX_DEPTH)


def constructed(text: str) -> Any:
    """The safe constructor's value (the path every non-plain document takes)."""
    return yamlsafe._yaml(False).load(text)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def test_real_master_configs_and_changelogs_build_as_the_constructor_does(
    corpus_clone: Path,
) -> None:
    """Master configs and changelogs at six points of InferenceX's history and
    at the newest PR branches: each builds without the constructor, to equal values."""
    history = _git(corpus_clone, "rev-list", "--first-parent", "origin/main").split()
    newest = _git(corpus_clone, "for-each-ref", "--sort=-committerdate", "--count=3",
                  "--format=%(objectname)", "refs/remotes/origin/pr").split()  # fmt: skip
    commits = [*history[:: max(1, len(history) // 5)], *newest]
    texts: dict[str, str] = {}
    for commit in commits:
        for path in (*MASTER_FILES, "perf-changelog.yaml"):
            blob = _git(corpus_clone, "ls-tree", "--object-only", commit, path).strip()
            if blob and blob not in texts:
                texts[blob] = _git(corpus_clone, "cat-file", "blob", blob)
    assert len(texts) >= 8, "the history should hold several versions of these files"
    for blob, text in texts.items():
        value = built(text)  # NotPlain here would mean the shortcut never applies
        assert same(value, constructed(text)), blob
        assert same(yamlsafe.load(text), value)


ODD_SCALARS = [
    "0", "-0", "+12", "017", "0o17", "0x1F", "0b101", "1_000", "1:30", "-1:30:00",
    "1.5", "-.5", "1e3", "1.0e+3", "6.8523015e+5", "685_230.15", "190:20:30.15",
    ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "yes", "No", "ON", "off", "y", "N",
    "true", "False", "~", "null", "Null", "", "2024-01-01", "2001-12-14t21:59:43.10-05:00",
    "<<", "=", "09", "0b", "0x", "1__0", "+", "-", ".", "a: b", "x y", "é", "3.", "1_0.0_1", "-_", "+__", "._",
]  # fmt: skip
_KEYS = st.sampled_from(["a", "b", "tp", "conc", "1", "yes", "no", "0x10", "~", "on", "k"])


def _scalar() -> st.SearchStrategy[str]:
    plain = st.sampled_from(ODD_SCALARS)
    words = st.text(alphabet="abcxyz019 .-_:", min_size=0, max_size=8)
    return st.one_of(
        plain,
        plain.map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
        plain.map(lambda s: "'" + s.replace("'", "''") + "'"),
        words,
    )


def _render(value: Any, indent: int) -> str:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "".join(f"\n{pad}{k}: {_render(v, indent + 2)}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(isinstance(v, str) for v in value) and len(value) < 3:
            return "[" + ", ".join(value) + "]"
        return "".join(f"\n{pad}- {_render(v, indent + 2).lstrip()}" for v in value)
    return str(value)


_TREES = st.recursive(
    _scalar(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(tree=st.dictionaries(_KEYS, _TREES, min_size=1, max_size=4))
def test_generated_documents_build_as_the_constructor_does(tree: dict[str, Any]) -> None:
    text = _render(tree, 0).lstrip("\n") + "\n"
    try:
        expected: Any = constructed(text)
    except Exception:  # not valid YAML, a bad value, a crash: the builder must give up too
        with pytest.raises(NotPlain):
            built(text)
        with pytest.raises(yamlsafe.YamlLoadError):  # and the loader says where, never crashes
            yamlsafe.load(text)
        return
    try:
        value = built(text)
    except NotPlain:
        return  # the constructor decides, as load() does
    assert same(value, expected), text


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate key: the constructor's located error
        "? [1, 2]\n: x\n",  # a key the builder cannot hash
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "a: !!str 1\n",  # a tag
        "<<: {a: 1}\n",  # a merge key
        "when: 2024-01-01\n",  # a timestamp
        "a: 1\n---\nb: 2\n",  # two documents
        "a: [1, 2\n",  # not valid YAML
        "a: " + "[" * 70 + "]" * 70 + "\n",  # deeper than MAX_DEPTH
    ],
)
def test_what_the_builder_leaves_to_the_constructor(text: str) -> None:
    with pytest.raises(NotPlain):
        built(text)


def test_load_still_refuses_what_the_prescan_refuses() -> None:
    """The shortcut comes before the prescan, so the prescan's refusals must
    still reach the caller, located, for documents the builder gives up on."""
    with pytest.raises(yamlsafe.YamlLoadError) as deep:
        yamlsafe.load("a: " + "[" * 70 + "]" * 70 + "\n")
    assert deep.value.problem.kind == "too-deep"
    with pytest.raises(yamlsafe.YamlLoadError) as dup:
        yamlsafe.load("a: 1\nb: 2\na: 3\n")
    assert dup.value.problem.kind == "duplicate-key" and dup.value.problem.line == 3
    with pytest.raises(yamlsafe.YamlLoadError) as strict:
        yamlsafe.load("a: &x 1\n", strict=True)
    assert strict.value.problem.kind == "yaml-anchor"


@pytest.mark.parametrize(("text", "where"), [("a: -_\n", (1, 4)), ("x:\n  - 1\n  - +__\n", (3, 5))])
def test_a_sign_without_digits_is_a_located_error_not_a_crash(
    text: str, where: tuple[int, int]
) -> None:
    """YAML 1.1 resolves `-_` as an int; ruamel's safe constructor then fails
    with an IndexError. The loader reports the value and its position instead
    (found by the generated documents above)."""
    with pytest.raises(NotPlain):
        built(text)
    with pytest.raises(yamlsafe.YamlLoadError) as caught:
        yamlsafe.load(text)
    problem = caught.value.problem
    assert (problem.line, problem.column) == where
    assert "is not a valid !!int" in problem.message
