"""Bad master configs, runner files and changelog keys give located
violations: the file, the 1-based line and column of the offending key, and
the config key named in the message. Nothing leaks as an exception."""

from __future__ import annotations

import textwrap

import pytest

from governance.core import yamlsafe
from governance.core.blockcache import BlockCache
from governance.core.diagnostics import Violation
from governance.matrix.additions import Additions
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.expand import EvalMode, generate
from governance.matrix.masterfile import SourceFile
from governance.matrix.plan import PlanOptions, history, plan_violations
from tests.harness import AMD_MASTER, NVIDIA_MASTER, RUNNER_FILE

RUNNERS = textwrap.dedent(
    """\
    labels:
      h200: [h200-a_0]
      cluster:lab: [lab_0]
    hardware:
      cluster:lab: { available-cpu-dram-mib: 2064000, gpus-per-node: 8 }
    """
)

GOOD = textwrap.dedent(
    """\
    good-fp8-h200-vllm:
      image: img:1
      model: org/Good
      model-prefix: good
      precision: fp8
      framework: vllm
      runner: h200
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 8192
          osl: 1024
          search-space:
          - tp: 8
            conc-list: [16, 32]
    """
)


def make_catalog(
    amd: str, nvidia: str = "{}\n", runners: str = RUNNERS, cache: BlockCache | None = None
) -> Catalog:
    return Catalog(
        [SourceFile(AMD_MASTER, amd.encode()), SourceFile(NVIDIA_MASTER, nvidia.encode())],
        SourceFile(RUNNER_FILE, runners.encode()),
        cache=cache,
    )


def position(text: str, marker: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based (line, column) where `marker` starts (its nth occurrence)."""
    index = -1
    for _ in range(occurrence):
        index = text.index(marker, index + 1)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def only(violations: list[Violation], code: str) -> Violation:
    matching = [v for v in violations if v.code == code]
    assert len(matching) == 1, violations
    return matching[0]


def test_good_config_has_no_violations() -> None:
    catalog = make_catalog(GOOD)
    assert catalog.violations() == []
    assert len(generate(catalog, ["good-*"], EvalMode.NO_EVALS)) == 2


def test_unknown_field_is_located_with_did_you_mean() -> None:
    text = GOOD.replace("conc-list: [16, 32]", "conc-lst: [16, 32]")
    found = make_catalog(text).violations()
    unknown = only(found, "GOV513")
    assert (unknown.path, unknown.line, unknown.column) == (
        AMD_MASTER,
        *position(text, "conc-lst"),
    )
    assert "'good-fp8-h200-vllm'" in unknown.message
    assert "scenarios.fixed-seq-len.0.search-space.0.conc-lst" in unknown.message
    assert "conc-list" in unknown.hint


def test_missing_field_points_at_the_config_key() -> None:
    text = GOOD.replace("  image: img:1\n", "")
    missing = only(make_catalog(text).violations(), "GOV514")
    assert (missing.line, missing.column) == (1, 1)
    assert "image: Field required" in missing.message


def test_tp_not_divisible_by_dcp_points_at_the_search_space_entry() -> None:
    text = GOOD.replace("- tp: 8\n", "- tp: 8\n        dcp-size: 3\n")
    rule = only(make_catalog(text).violations(), "GOV516")
    assert (rule.line, rule.column) == position(text, "tp: 8")
    assert "'tp' (8) must be divisible by 'dcp-size' (3)" in rule.message


def test_conc_start_after_end() -> None:
    text = GOOD.replace("conc-list: [16, 32]", "conc-start: 64\n        conc-end: 8")
    rule = only(make_catalog(text).violations(), "GOV516")
    assert "'conc-start' (64) must be <= 'conc-end' (8)." in rule.message
    assert rule.line == position(text, "tp: 8")[0]


def test_empty_search_space_is_no_rows_but_empty_scenarios_is_an_error() -> None:
    empty_space = GOOD.replace(
        "search-space:\n      - tp: 8\n        conc-list: [16, 32]\n", "search-space: []\n"
    )
    catalog = make_catalog(empty_space)
    assert catalog.violations() == []  # the reference allows it...
    assert generate(catalog, ["good-fp8-h200-vllm"]) == []
    advisory = only(catalog.advisory_violations(), "GOV517")  # ...but check says so
    assert (advisory.line, advisory.column) == position(empty_space, "search-space")
    no_scenarios = GOOD.split("  scenarios:")[0] + "  scenarios: {}\n"
    rule = only(make_catalog(no_scenarios).violations(), "GOV516")
    assert "At least one scenario type must be specified" in rule.message
    assert (rule.line, rule.column) == position(no_scenarios, "scenarios")


def test_multinode_search_space_without_workers() -> None:
    text = textwrap.dedent(
        """\
        big-fp4-gb200-dynamo-trt:
          image: img:2
          model: org/Big
          model-prefix: big
          precision: fp4
          framework: dynamo-trt
          runner: gb200
          multinode: true
          scenarios:
            fixed-seq-len:
            - isl: 8192
              osl: 1024
              search-space:
              - conc-list: [8]
        """
    )
    found = [v for v in make_catalog(text).violations() if v.code == "GOV514"]
    assert {v.message.rsplit(".", 1)[-1] for v in found} == {
        "prefill: Field required",
        "decode: Field required",
    }
    assert all((v.line, v.column) == position(text, "conc-list") for v in found)


def test_duplicate_top_level_key_in_one_file() -> None:
    text = GOOD + GOOD
    duplicate = only(make_catalog(text).violations(), "GOV511")
    assert duplicate.line == position(text, "good-fp8-h200-vllm:", 2)[0]
    assert "good-fp8-h200-vllm" in duplicate.message


def test_duplicate_nested_key_names_the_config() -> None:
    text = GOOD.replace("  model: org/Good\n", "  model: org/Good\n  model: org/Other\n")
    duplicate = only(make_catalog(text).violations(), "GOV511")
    assert duplicate.line == position(text, "model: org/Other")[0]
    assert "'good-fp8-h200-vllm'" in duplicate.message


def test_duplicate_key_across_files() -> None:
    duplicate = only(make_catalog(GOOD, GOOD).violations(), "GOV518")
    assert duplicate.path == NVIDIA_MASTER
    assert duplicate.message == (
        f"Duplicate configuration keys found in '{NVIDIA_MASTER}': good-fp8-h200-vllm"
    )
    assert (duplicate.line, duplicate.column) == (1, 1)


def test_wildcard_in_master_key() -> None:
    text = GOOD + GOOD.replace("good-fp8-h200-vllm:", "good-*:")
    wildcard = only(make_catalog(text).violations(), "GOV512")
    assert wildcard.line == position(text, "good-*:")[0]


def test_yaml_syntax_error_is_located() -> None:
    text = GOOD.replace("conc-list: [16, 32]", "conc-list: [16, 32")
    catalog = make_catalog(text)
    broken = only(catalog.violations(), "GOV510")
    assert broken.path == AMD_MASTER
    assert broken.line >= position(text, "conc-list")[0]
    with pytest.raises(MatrixError):
        generate(catalog, ["good-fp8-h200-vllm"])


@pytest.mark.parametrize(
    "text", ["", "- a\n- b\n", "just text\n", "\xff", "k: 1\n", "k:\n  multinode: yes\n"]
)
def test_garbage_never_raises_from_violations(text: str) -> None:
    catalog = make_catalog(text)
    found = catalog.violations()
    assert found, "garbage must not validate"
    assert all(isinstance(v, Violation) for v in found)
    with pytest.raises(MatrixError):
        generate(catalog, ["*"])


def test_not_a_mapping_message() -> None:
    found = make_catalog("- a\n").violations()
    assert found[0].message == f"Config file '{AMD_MASTER}' must contain a dictionary"


def test_runner_file_faults_are_located() -> None:
    runners = RUNNERS.replace("gpus-per-node: 8", "gpus-per-node: 8, color: red")
    fault = only(make_catalog(GOOD, runners=runners).violations(), "GOV520")
    assert fault.path == RUNNER_FILE
    assert (fault.line, fault.column) == position(runners, "color")
    assert "hardware.cluster:lab.color: Extra inputs are not permitted" in fault.message
    not_list = RUNNERS.replace("h200: [h200-a_0]", "h200: h200-a_0")
    fault = only(make_catalog(GOOD, runners=not_list).violations(), "GOV520")
    assert fault.message == "Runner config entry 'h200' must be a list, got str"
    assert fault.line == position(not_list, "h200:")[0]


def test_missing_runner_hardware_points_at_the_runner_field() -> None:
    text = textwrap.dedent(
        """\
        coder-fp8-b200-sglang-agentic:
          image: sglang:0.5
          model: org/Coder
          model-prefix: coder
          precision: fp8
          framework: sglang
          runner: cluster:nohw
          multinode: false
          scenarios:
            agentic-coding:
            - dram-utilization: 0.8
              search-space:
              - { tp: 4, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-list: [2] }
        """
    )
    catalog = make_catalog(text)
    assert catalog.violations() == []
    with pytest.raises(MatrixError) as raised:
        generate(catalog, ["coder-fp8-b200-sglang-agentic"])
    fault = raised.value.violations[0]
    assert fault.code == "GOV522"
    assert (fault.path, fault.line, fault.column) == (AMD_MASTER, *position(text, "runner:"))
    assert "Available hardware keys: cluster:lab" in fault.message


def test_runner_label_check_is_advisory() -> None:
    text = GOOD.replace("runner: h200", "runner: h2000")
    catalog = make_catalog(text)
    assert catalog.violations() == []  # generation accepts unknown labels
    advisory = only(catalog.advisory_violations(), "GOV521")
    assert advisory.line == position(text, "runner: h2000")[0]
    assert "h200" in advisory.hint


def test_agentic_style_mismatch_is_a_validation_error() -> None:
    text = textwrap.dedent(
        """\
        coder-fp4-gb200-dynamo-vllm:
          image: img
          model: org/Coder
          model-prefix: coder
          precision: fp4
          framework: dynamo-vllm
          runner: cluster:lab
          multinode: true
          scenarios:
            agentic-coding:
            - search-space:
              - { tp: 8, kv-offloading: none, conc-list: [4] }
        """
    )
    rule = only(make_catalog(text).violations(), "GOV516")
    assert "must use prefill/decode" in rule.message


# -- changelog key resolution (gov check) -------------------------------------------

CHANGELOG = textwrap.dedent(
    """\
    - config-keys:
        - good-fp8-h200-vllm
      description: [first]
      pr-link: https://example.invalid/1
    - config-keys:
        - good-fp8-h200-vlm
        - nothing-*
        - good-*
      description: [second]
      pr-link: https://example.invalid/2
    """
)


def appended(text: str, first_line: int = 1) -> Additions:
    """The appended lines of a changelog, numbered as in the file."""
    lines = text.splitlines()
    return Additions(
        "perf-changelog.yaml", tuple(lines), tuple(range(first_line, first_line + len(lines)))
    )


OPTIONS = PlanOptions(base_ref="base", head_ref="head", changelog_path="perf-changelog.yaml")


def test_plan_violations_are_located_in_the_changelog() -> None:
    keys, found, _document = plan_violations(appended(CHANGELOG), make_catalog(GOOD), None, OPTIONS)
    assert keys == ["good-fp8-h200-vllm"]
    unknown = only(found, "GOV501")
    assert (unknown.path, unknown.line, unknown.column) == (
        "perf-changelog.yaml",
        *position(CHANGELOG, "good-fp8-h200-vlm\n"),
    )
    assert "good-fp8-h200-vllm" in unknown.hint
    wildcard = only(found, "GOV502")
    assert wildcard.line == position(CHANGELOG, "nothing-*")[0]


def test_plan_violations_map_snippet_lines_to_file_lines() -> None:
    _, found, _document = plan_violations(
        appended(CHANGELOG, 40), make_catalog(GOOD), None, OPTIONS
    )
    assert only(found, "GOV501").line == position(CHANGELOG, "good-fp8-h200-vlm\n")[0] + 39


def test_plan_violations_include_faulty_master_entries() -> None:
    first_entry = "".join(CHANGELOG.splitlines(keepends=True)[:4])
    bad = GOOD.replace("tp: 8", "tp: eight")
    _, found, _document = plan_violations(appended(first_entry), make_catalog(bad), None, OPTIONS)
    fault = only(found, "GOV515")
    assert fault.path == AMD_MASTER
    assert fault.line == position(bad, "tp: eight")[0]


def test_history_lists_direct_and_wildcard_mentions_oldest_first() -> None:
    entries = yamlsafe.load(CHANGELOG)
    items = history("good-fp8-h200-vllm", entries)
    assert [item.index for item in items] == [0, 1]
    assert items[1].patterns == ("good-*",)
    assert history("other", entries) == []


# -- parsing paths ---------------------------------------------------------------------


def test_unsplittable_file_gives_same_data_and_located_errors() -> None:
    anchored = GOOD.replace("image: img:1", "image: &img img:1") + GOOD.replace(
        "good-fp8-h200-vllm:", "other-fp8-h200-vllm:"
    ).replace("image: img:1", "image: *img")
    catalog = make_catalog(anchored)
    assert catalog.violations() == []
    assert catalog.raw("other-fp8-h200-vllm")["image"] == "img:1"
    broken = anchored.replace("conc-list: [16, 32]", "conc-lst: [16, 32]", 1)
    unknown = only(make_catalog(broken).violations(), "GOV513")
    assert (unknown.line, unknown.column) == position(broken, "conc-lst")


def test_block_cache_reuses_parsed_blocks(tmp_path, monkeypatch) -> None:
    cache = BlockCache(tmp_path)
    first = make_catalog(GOOD, cache=cache)
    expected = first.raw("good-fp8-h200-vllm")

    def no_parsing(*args: object, **kwargs: object) -> object:
        raise AssertionError("block should come from the cache")

    second = make_catalog(GOOD, cache=cache)  # a line scan only: no block parsed yet
    monkeypatch.setattr(yamlsafe, "load", no_parsing)
    assert second.raw("good-fp8-h200-vllm") == expected
