"""The launch order (pure): priority rules, the stable sort, canaries, nice values,
and the `priority` setting as files and variables give it."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governance.core.diagnostics import UsageError
from governance.core.settings import load_settings
from governance.core.settings_priority import DEFAULT_PRIORITY_RULES, PriorityRule
from governance.sweeps.priority import (
    canaries,
    config_signature,
    key_index,
    nice_values,
    prioritize,
    score,
)
from tests.sweeps.conftest import make_row


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        # base 1 + sglang 0.5 + dsr1 0.75
        ("dsr1-fp8-mi300x-sglang", 2.25),
        # + fp4 0.75
        ("dsr1-fp4-b200-sglang", 3.0),
        # base 1 + mtp 0.75 + vllm 0.5 + dsv4 0.75
        ("dsv4-fp8-mi300x-vllm-mtp", 3.0),
        # base 1 + agentic 1 + fp4 0.75 + mtp 0.75 + vllm 0.5 + kimik3 1.5
        ("kimik3-fp4-mi355x-vllm-agentic-mtp", 5.5),
        # base 1 + multi-node 1.25 + fp4 0.75 + sglang 0.5 + dsr1 0.75
        ("dsr1-fp4-gb200-sglang-disagg", 4.25),
        # a family InferenceX does not list, an engine it does not adjust: the base score
        ("gptoss-fp8-h100-trt", 1.0),
    ],
)
def test_default_rules_are_inferencex_ci_priority(key: str, expected: float) -> None:
    assert score([key], set(), DEFAULT_PRIORITY_RULES) == expected


def test_patchwork_labels_score_zero_unless_waived() -> None:
    key = ["kimik3-fp4-mi355x-vllm-agentic-mtp"]
    assert score(key, {"engine-patch"}, DEFAULT_PRIORITY_RULES) == 0.0
    assert score(key, {"ci-patchwork"}, DEFAULT_PRIORITY_RULES) == 0.0
    waived = {"ci-patchwork", "ci-patchwork-waived"}
    assert score(key, waived, DEFAULT_PRIORITY_RULES) == 5.5


def test_rules_apply_in_order_and_set_ends_the_walk() -> None:
    rules = (
        PriorityRule("a", config_keys=("x-*",), add=2.0),
        PriorityRule("b", labels=("urgent",), set=10.0),
        PriorityRule("c", add=1.0),
    )
    assert score(["x-1"], set(), rules) == 3.0
    assert score(["x-1"], {"urgent"}, rules) == 10.0  # `set` wins over what came before
    assert score(["y-1"], set(), rules) == 1.0
    assert score([], set(), rules) == 1.0  # unknown keys: only rules without config-keys
    assert score(["y-1", "x-2"], set(), rules) == 3.0  # any of a row's keys


rule_lists = st.lists(
    st.builds(
        PriorityRule,
        name=st.just("r"),
        config_keys=st.lists(st.sampled_from(["a-*", "*-b", "c", "*"]), max_size=2).map(tuple),
        labels=st.lists(st.sampled_from(["l1", "l2"]), max_size=1).map(tuple),
        add=st.integers(-3, 3).map(float),
    ),
    max_size=5,
)
items = st.lists(
    st.tuples(st.integers(0, 10**6), st.lists(st.sampled_from(["a-1", "x-b", "c", "d"]))),
    max_size=30,
)


@given(items, st.sets(st.sampled_from(["l1", "l2"])), rule_lists)
def test_prioritize_is_a_stable_sort_keeping_every_row_once(
    rows: list[tuple[int, list[str]]], labels: set[str], rules: list[PriorityRule]
) -> None:
    tagged = list(enumerate(rows))  # (input position, row)
    ranked = prioritize(tagged, lambda item: item[1][1], labels, rules)
    assert sorted(item for item, _ in ranked) == tagged  # each row exactly once
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)  # higher first
    assert all(s == score(item[1][1], labels, rules) for item, s in ranked)
    for (a, sa), (b, sb) in pairwise(ranked):
        assert sa > sb or a[0] < b[0]  # ties keep the plan's order


@given(st.lists(st.one_of(st.none(), st.sampled_from("abc")), max_size=20))
def test_canaries_are_the_first_row_of_each_recipe(recipes: list[str | None]) -> None:
    tagged = list(enumerate(recipes))
    first, rest = canaries(tagged, lambda item: item[1])
    assert sorted(first + rest) == tagged
    assert [r for _, r in first] == list(dict.fromkeys(r for r in recipes if r is not None))
    assert all(item == min(i for i in tagged if i[1] == item[1]) for item in first)
    assert first == sorted(first) and rest == sorted(rest)  # both keep the order


def test_nice_is_zero_for_the_top_and_grows_below_it() -> None:
    assert nice_values([3.0, 2.25, 3.0, 0.0]) == {3.0: 0, 2.25: 75, 0.0: 300}
    assert nice_values([]) == {}
    assert nice_values([-1.0]) == {-1.0: 0}


def test_key_index_finds_a_row_config_by_its_signature() -> None:
    plain, mtp = make_row(conc=4), make_row(conc=8, **{"spec-decoding": "mtp"})
    index = key_index({"k-plain": [plain, make_row(conc=64)], "k-mtp": [mtp], "k-twin": [plain]})
    assert index[config_signature(make_row(conc=32))] == ("k-plain", "k-twin")
    assert index[config_signature(mtp)] == ("k-mtp",)


def _load(tmp_path: Path, text: str, **environ: str) -> tuple[PriorityRule, ...]:
    (tmp_path / ".gov.toml").write_text(text)
    return load_settings(tmp_path, environ=environ).priority


def test_setting_from_file_and_environment(tmp_path: Path) -> None:
    assert _load(tmp_path, "") == DEFAULT_PRIORITY_RULES
    rules = _load(
        tmp_path,
        '[[priority]]\nname = "hot"\nconfig-keys = ["kimik3-*"]\nadd = 2\n'
        '[[priority]]\nlabels = "ci-patchwork"\nunless-labels = ["ok"]\nset = 0\n',
    )
    assert rules == (
        PriorityRule("hot", config_keys=("kimik3-*",), add=2.0),
        PriorityRule("rule 2", labels=("ci-patchwork",), unless_labels=("ok",), set=0.0),
    )
    env = _load(tmp_path, "", GOV_PRIORITY='[{"config-keys": ["a-*"], "add": 1}]')
    assert env == (PriorityRule("rule 1", config_keys=("a-*",), add=1.0),)
    assert _load(tmp_path, "priority = []\n") == ()  # no rules: the plan's order


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("priority = 3\n", "must be a list of tables"),
        ("[[priority]]\nadd = 1\nset = 2\n", "exactly one of add, set"),
        ("[[priority]]\nconfig-keys = ['a']\n", "exactly one of add, set"),
        ("[[priority]]\nadd = 'high'\n", "`priority.add` must be a number"),
        ("[[priority]]\nadd = true\n", "`priority.add` must be a number"),
        ("[[priority]]\nadd = inf\n", "must be a finite number"),
        ("[[priority]]\nadd = 1\nconfig-keys = [1]\n", "must be a list of strings"),
        ("[[priority]]\nadd = 1\nlabel = ['x']\n", "unknown field 'label'"),
    ],
)
def test_bad_rules_are_usage_errors_naming_why(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(UsageError) as caught:
        _load(tmp_path, text)
    assert why in str(caught.value) and ".gov.toml" in str(caught.value)
