"""The plain case of a changelog entry (`entry_fields.plainly_valid`) against
the pydantic model: it never accepts an entry the model rejects, it accepts
every entry of the plain shape the model accepts, and it covers the real
history (so the hook and CI never load pydantic for it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from governance.changelog.entry_fields import (
    FIELD_ALIASES,
    SCENARIO_TYPES,
    plain_entry,
    plainly_valid,
)
from governance.changelog.model import ChangelogEntry, ScenarioType
from governance.core import yamlsafe
from tests.harness import Repo


def model_accepts(raw: Any) -> bool:
    try:
        ChangelogEntry.model_validate(raw)
    except ValidationError:
        return False
    return True


def test_the_field_names_are_the_models() -> None:
    derived = {(info.alias or name): name for name, info in ChangelogEntry.model_fields.items()}
    assert derived == FIELD_ALIASES
    assert get_args(ScenarioType) == SCENARIO_TYPES


# Values of every kind the YAML loader can give, the odd ones included.
_ATOMS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
    st.sampled_from(["XXX", "", "fixed-seq-len", "agentic-coding", "a", "1", "true"]),
)  # fmt: skip
_VALUES = st.one_of(
    _ATOMS, st.lists(_ATOMS, max_size=3), st.dictionaries(st.text(max_size=2), _ATOMS, max_size=2)
)
_KEYS = st.sampled_from([*FIELD_ALIASES, *FIELD_ALIASES.values(), "pr_links", "extra", 1])


@settings(max_examples=600, deadline=None)
@given(raw=st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=9), _VALUES))
def test_it_never_accepts_what_the_model_rejects(raw: Any) -> None:
    if plainly_valid(raw):
        assert model_accepts(raw), raw


_TEXTS = st.lists(st.text(max_size=4), min_size=1, max_size=3)
PLAIN_ENTRIES = st.fixed_dictionaries(
    {"config-keys": _TEXTS, "description": _TEXTS, "pr-link": st.text(max_size=6)},
    optional={
        "evals-only": st.booleans(),
        "all-evals": st.booleans(),
        "append-only": st.booleans(),
        "eval-min-prefill-ep": st.one_of(st.none(), st.integers(-1, 9)),
        "scenario-type": st.one_of(
            st.none(), st.lists(st.sampled_from([*SCENARIO_TYPES, "other"]), max_size=2)
        ),
    },
)


@settings(max_examples=600, deadline=None)
@given(raw=PLAIN_ENTRIES)
def test_on_the_plain_shape_it_agrees_with_the_model(raw: dict[str, Any]) -> None:
    assert plainly_valid(raw) == model_accepts(raw), raw


_YAML_SCALARS = st.sampled_from([
    "XXX", '"quoted"', "'single'", "|\n      block", ">\n      folded", "yes", "0x10", "017",
    "16", "1_0", "-3", "~", "null", "true", "fixed-seq-len", '"agentic-coding"', "2024-01-01",
    "[a, b]", "[]", "{}", "[fixed-seq-len]", "[0x1]",
])  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(fields=st.dictionaries(st.sampled_from([*FIELD_ALIASES, "pr_link"]), _YAML_SCALARS))
def test_an_entry_read_round_trip_is_plain_only_when_the_models_accept_it(
    fields: dict[str, str],
) -> None:
    """YAML text through the round-trip loader (commented containers, block
    strings, hex ints): `plain_entry` vouches only for what both models accept,
    and gives the values the strict schema reads."""
    from governance.matrix.model import SweepEntry

    body = {"config-keys": "\n    - a-key", "description": '\n    - "d"', "pr-link": "XXX"}
    body.update(fields)
    text = "- " + "\n  ".join(f"{key}: {value}" for key, value in body.items()) + "\n"
    try:
        raw = yamlsafe.load(text, round_trip=True, strict=True)[0]
    except yamlsafe.YamlLoadError:
        return
    plain = plain_entry(raw)
    if plain is None:
        return
    assert model_accepts(raw), text
    assert SweepEntry.model_validate(raw).model_dump(by_alias=True) == SweepEntry.model_validate(
        plain
    ).model_dump(by_alias=True), text


def test_every_entry_of_the_real_changelog_is_plain(corpus_clone: Path) -> None:
    text = subprocess.run(
        ["git", "show", "origin/main:perf-changelog.yaml"],
        cwd=corpus_clone, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    entries = yamlsafe.load(text)
    assert len(entries) > 300
    assert all(plainly_valid(raw) and model_accepts(raw) for raw in entries)


def test_a_check_of_plain_entries_never_loads_pydantic(example_repo: Repo) -> None:
    """A PR appending a plain entry to the shipped example, its keys resolved
    against unchanged master configs: the check and its plan pass without
    importing pydantic (the doors pay for it only when something is wrong)."""
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_text(
        changelog.read_text()
        + "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n"
        + '  description:\n    - "Retune the MI300X vLLM recipe"\n  pr-link: XXX\n'
    )
    example_repo.commit("append an entry")
    probe = (
        "import sys\n"
        "from governance.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print('pydantic' in sys.modules, code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "check", "--base-ref", "HEAD~1"],
        cwd=example_repo.path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "1 appended entry" in done.stdout, done.stdout + done.stderr
    assert done.stdout.split()[-2:] == ["False", "0"], done.stdout + done.stderr
