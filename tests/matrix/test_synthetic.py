"""Synthetic goldens: small hand-made configs with rows or exact error text.

Generator cases (`generator-cases.json`) run through `expand.generate`;
processor cases (`process-changelog-cases.json`) through `plan.build_plan`,
from the base and head changelog bytes (the reference read the diff text).

Error comparison: the error category, the config key and the rule-specific
message (docs/matrix-differences.md, 'Errors are located findings'). A reference envelope such as

    ValueError: Master config entry 'k' failed validation:
    1 validation error for SingleNodeMasterConfigEntry
    scenarios.fixed-seq-len.0.search-space.0.pp
      Input should be greater than 0 [type=greater_than, ...]

must come back as a violation naming 'k', the location path and the message.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

import pytest

from governance.matrix.errors import MatrixError
from governance.matrix.expand import EvalMode, eval_mode_from_flags, generate
from governance.matrix.plan import PlanOptions, PlanResult, build_plan
from governance.matrix.row_builder import Filters

from .corpus import GOLDENS, catalog_from_texts, load_json

CHANGELOG_FILE = "perf-changelog.yaml"  # the path the reference cases name

GENERATOR_CASES: list[dict[str, Any]] = (
    load_json(GOLDENS / "synthetic" / "generator-cases.json")
    if (GOLDENS / "synthetic" / "generator-cases.json").exists()
    else []
)


def _argv_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("command")
    parser.add_argument("--config-keys", nargs="+", required=True)
    parser.add_argument("--config-files", nargs="+")
    parser.add_argument("--runner-config")
    parser.add_argument("--no-evals", action="store_true")
    parser.add_argument("--evals-only", action="store_true")
    parser.add_argument("--all-evals", action="store_true")
    parser.add_argument("--scenario-type", nargs="+")
    parser.add_argument("--runner-node-filter")
    parser.add_argument("--conc", nargs="+", type=int)
    parser.add_argument("--seq-lens", nargs="+")
    return parser


def run_generator_case(case: dict[str, Any]) -> list[dict[str, Any]]:
    args = _argv_parser().parse_args(case["argv"])
    mode = eval_mode_from_flags(args.no_evals, args.evals_only, args.all_evals)
    filters = Filters(
        scenario_types=tuple(args.scenario_type) if args.scenario_type else None,
        seq_lens=tuple(args.seq_lens) if args.seq_lens else None,
        conc=tuple(args.conc) if args.conc else None,
        runner_node_filter=args.runner_node_filter,
    )
    return generate(catalog_from_texts(case["inputs"]), args.config_keys, mode, filters)


_ENVELOPE = re.compile(
    r"^(?P<owner>Master config entry '(?P<key>[^']+)' failed validation|"
    r"Runner config failed validation):\n1 validation error for \w+\n"
    r"(?:(?P<loc>[^\s].*)\n)?  (?:Value error, )?(?P<msg>.*?) \[type=",
    re.DOTALL,
)


def expected_fragments(error: str) -> list[str]:
    """What a gov message must contain to match a reference error text."""
    _, _, text = error.partition(": ")
    # gov names the three closest keys in a hint instead of listing every key
    # (docs/matrix-differences.md, "Unknown keys"): the rule text must match.
    text = text.split("\nAvailable keys: ")[0]
    match = _ENVELOPE.match(text)
    if match is None:
        return [text.strip()]
    fragments = [match["owner"], match["msg"]]
    if match["loc"]:
        fragments.append(f": {match['loc']}: ")
    return fragments


def case_id(case: dict[str, Any]) -> str:
    return case["name"]


@pytest.mark.corpus
@pytest.mark.parametrize("case", GENERATOR_CASES, ids=case_id)
def test_generator_case(case: dict[str, Any]) -> None:
    if "rows" in case:
        assert run_generator_case(case) == case["rows"]
        return
    error: str = case["error"]
    if case["exit_code"] == 2:  # argument errors: the flag-combination rule
        with pytest.raises(ValueError) as raised:
            run_generator_case(case)
        assert str(raised.value) in error
        return
    with pytest.raises(MatrixError) as raised:
        run_generator_case(case)
    messages = [v.message for v in raised.value.violations]
    if error.startswith("KeyError"):
        # the reference crashes on an agentic style / multinode mismatch; gov
        # rejects it as a validation error of that entry (docs/matrix-differences.md).
        assert any("agentic search-space entries must use" in m for m in messages), messages
        return
    first = messages[0]
    for fragment in expected_fragments(error):
        assert fragment in first, (fragment, first)


def test_generator_case_count() -> None:
    if not GENERATOR_CASES:
        pytest.skip("synthetic goldens not available")
    assert len(GENERATOR_CASES) == 94


def test_eval_mode_flags() -> None:
    assert eval_mode_from_flags(False, True, True) is EvalMode.ALL_EVALS
    assert eval_mode_from_flags(True, False, False) is EvalMode.NO_EVALS
    assert eval_mode_from_flags(False, False, False) is EvalMode.DEFAULT


# -- processor cases -------------------------------------------------------------

PROCESSOR_CASES: list[dict[str, Any]] = (
    load_json(GOLDENS / "synthetic" / "process-changelog-cases.json")
    if (GOLDENS / "synthetic" / "process-changelog-cases.json").exists()
    else []
)
_SCHEMA_ERROR = re.compile(
    r"^1 validation error for ChangelogEntry\n(?:(?P<loc>[^\s].*)\n)?"
    r"  (?:Value error, )?(?P<msg>.*?) \[type=",
    re.DOTALL,
)


def run_processor_case(case: dict[str, Any]) -> PlanResult:
    shared = {path: case[path] for path in ("configs/nvidia-master.yaml", "configs/runners.yaml")}
    head = catalog_from_texts({**shared, **case["head"]})
    base = catalog_from_texts({**shared, **case["base"]})
    options = PlanOptions(
        base_ref="BASE",
        head_ref="HEAD",
        changelog_path=CHANGELOG_FILE,
        trim_conc="--trim-conc" in case["flags"],
        evals_only="--evals-only" in case["flags"],
        all_evals="--all-evals" in case["flags"],
    )
    # The plan reads the changelog's two versions, not the recorded diff text
    # (which the reference read): the outputs must still be the reference's.
    changelog = tuple(
        None if side.get(CHANGELOG_FILE) is None else side[CHANGELOG_FILE].encode("utf-8")
        for side in (case["base"], case["head"])
    )
    return build_plan((changelog[0], changelog[1]), head, options, base)


def processor_fragments(error: str) -> list[str]:
    _, _, text = error.partition(": ")
    match = _SCHEMA_ERROR.match(text)
    if match is None:
        return [text.strip()]
    return [f"{match['loc']}: {match['msg']}" if match["loc"] else match["msg"]]


@pytest.mark.corpus
@pytest.mark.parametrize("case", PROCESSOR_CASES, ids=case_id)
def test_processor_case(case: dict[str, Any]) -> None:
    if "output" in case:
        result = run_processor_case(case)
        assert json.dumps(result.document) == json.dumps(case["output"])
        return
    with pytest.raises(MatrixError) as raised:
        run_processor_case(case)
    first = raised.value.violations[0].message
    for fragment in processor_fragments(case["error"]):
        assert fragment in first, (fragment, first)


def test_processor_case_count() -> None:
    if not PROCESSOR_CASES:
        pytest.skip("synthetic goldens not available")
    assert len(PROCESSOR_CASES) == 34
