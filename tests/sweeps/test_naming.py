"""Row -> script: the reference's naming rule (docs/sweeps.md) as a table of templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.sweeps.identity import PlanRow
from governance.sweeps.naming import (
    ScriptResolver,
    TemplateError,
    hardware_token,
    render,
    row_tokens,
)
from tests.sweeps.conftest import make_row, write_script

FIXED = "single_node/fixed_seq_len"


def plan_row(**changes: object) -> PlanRow:
    return PlanRow("single_node", "8k1k", 0, make_row(**changes))


@pytest.mark.parametrize(
    ("runner", "token"),
    [("mi300x", "mi300x"), ("b200-dsv4", "b200"), ("cluster:b200-dgxc", "b200"), ("h200", "h200")],
)
def test_hardware_token(runner: str, token: str) -> None:
    assert hardware_token(runner) == token


def test_worked_example_1_mi300x_never_names_the_framework(scripts_dir: Path) -> None:
    # MI300X never names the framework: dsv4-fp8-mi300x-vllm-mtp -> dsv4_fp8_mi300x_mtp.sh
    write_script(scripts_dir, f"{FIXED}/dsv4_fp8_mi300x_vllm_mtp.sh", "")
    wanted = write_script(scripts_dir, f"{FIXED}/dsv4_fp8_mi300x_mtp.sh", "")
    row = plan_row(**{"model-prefix": "dsv4", "exp-name": "dsv4_8k1k", "framework": "vllm"})
    row = PlanRow("single_node", "8k1k", 0, {**row.data, "spec-decoding": "mtp"})
    assert ScriptResolver(scripts_dir).resolve(row).script == wanted.resolve()


def test_worked_example_2_framework_first_then_fallback(scripts_dir: Path) -> None:
    vllm = write_script(scripts_dir, f"{FIXED}/dsv4_fp4_b200_vllm_mtp.sh", "")
    plain = write_script(scripts_dir, f"{FIXED}/dsv4_fp4_b200.sh", "")
    base = {"model-prefix": "dsv4", "exp-name": "dsv4_1k1k", "precision": "fp4"}
    resolver = ScriptResolver(scripts_dir)
    mtp = plan_row(**base, runner="cluster:b200-dgxc", framework="vllm")
    mtp = PlanRow("single_node", "1k1k", 0, {**mtp.data, "spec-decoding": "mtp"})
    assert resolver.resolve(mtp).script == vllm.resolve()
    sglang = resolver.resolve(plan_row(**base, runner="b200-dsv4", framework="sglang"))
    assert sglang.script == plain.resolve()
    assert sglang.tried == (f"{FIXED}/dsv4_fp4_b200_sglang.sh", f"{FIXED}/dsv4_fp4_b200.sh")


def test_h200_tags_only_trt_and_mi355x_tags_atom(scripts_dir: Path) -> None:
    trt = write_script(scripts_dir, f"{FIXED}/gptoss_fp4_h200_trt.sh", "")
    atom = write_script(scripts_dir, f"{FIXED}/dsr1_fp8_mi355x_atom.sh", "")
    resolver = ScriptResolver(scripts_dir)
    row = plan_row(
        **{"exp-name": "gptoss_1k1k", "precision": "fp4", "runner": "h200", "framework": "trt"}
    )
    assert resolver.resolve(row).script == trt.resolve()
    row = plan_row(runner="cluster:mi355x-amds", framework="atom")
    assert resolver.resolve(row).script == atom.resolve()


def test_agentic_rows_use_the_agentic_folder(scripts_dir: Path) -> None:
    script = write_script(scripts_dir, "single_node/agentic/dsv4_fp4_mi355x_vllm_mtp.sh", "")
    data = make_row(**{"exp-name": "dsv4_tp8_conc4_kvnone", "precision": "fp4"})
    data.update({"runner": "cluster:mi355x-amds", "framework": "vllm", "spec-decoding": "mtp"})
    data["scenario-type"] = "agentic-coding"
    row = PlanRow("single_node", "agentic", 0, data)
    assert ScriptResolver(scripts_dir).resolve(row).script == script.resolve()


def test_no_script_says_what_was_tried(scripts_dir: Path) -> None:
    found = ScriptResolver(scripts_dir).resolve(plan_row())
    assert found.script is None
    assert found.problem == "none of the candidate scripts exists"
    assert found.tried == (f"{FIXED}/dsr1_fp8_mi300x.sh",)


def test_symlink_out_of_the_scripts_folder_is_refused(tmp_path: Path, scripts_dir: Path) -> None:
    outside = write_script(tmp_path / "elsewhere", "evil.sh", "")
    link = scripts_dir / FIXED / "dsr1_fp8_mi300x.sh"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    found = ScriptResolver(scripts_dir).resolve(plan_row())
    assert found.script is None and "outside the scripts folder" in found.problem


def test_symlink_inside_the_folder_is_fine(scripts_dir: Path) -> None:
    target = write_script(scripts_dir, "lib/common.sh", "")
    link = scripts_dir / FIXED / "dsr1_fp8_mi300x.sh"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    assert ScriptResolver(scripts_dir).resolve(plan_row()).script == target.resolve()


def test_custom_table_first_matching_glob_wins(scripts_dir: Path) -> None:
    mine = write_script(scripts_dir, "mi/dsr1-sglang.sh", "")
    table = (("mi*", ("mi/{model}-{framework}.sh",)), ("*", ("x.sh",)))
    assert ScriptResolver(scripts_dir, table).resolve(plan_row()).script == mine.resolve()


@pytest.mark.parametrize(
    "template",
    [
        "{nope}.sh",
        "../{model}.sh",
        "/abs/{model}.sh",
        "{spec=mtp:_m x}.sh",
        "{spec=mtp:../}{model}.sh",
        "{spec=mtp:a/../}{model}.sh",
        "{model",
    ],
)
def test_bad_templates_are_refused(scripts_dir: Path, template: str) -> None:
    with pytest.raises(TemplateError):
        ScriptResolver(scripts_dir, (("*", (template,)),))


def test_render_conditionals() -> None:
    tokens = row_tokens(plan_row(framework="trt"))
    assert render("{model}{framework=trt:_trt}{spec=mtp:_mtp}", tokens) == "dsr1_trt"
