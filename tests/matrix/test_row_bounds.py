"""Row explosion: a small master config that stands for hundreds of thousands of
rows is a located finding, not minutes and gigabytes. 99 aliases of one
3,000-value `conc-list` (18 KB) and of a 10,000-value one (60 KB) are refused
by the YAML expansion bound; a literal list past the per-config bound and a
change past the per-plan bound are GOV524 at the search-space entry."""

from __future__ import annotations

import json
import shutil

import pytest

from governance.core import yamlsafe
from governance.matrix.errors import MatrixError
from governance.matrix.expand import EvalMode, generate
from governance.matrix.rowbounds import MAX_CONFIG_ROWS
from tests.harness import PROJECT, Repo, run_gov

from .corpus import catalog_from_texts

HEAD = """
{key}:
  image: vllm/vllm-openai-rocm:v0.11.2
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: mi300x
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
"""


def aliased(values: int, copies: int = 99, key: str = "bomb-fp8-mi300x-vllm") -> str:
    """One search-space entry anchoring `values` concurrencies, `copies` aliasing it."""
    listed = ", ".join(str(i) for i in range(1, values + 1))
    first = f"      - {{ tp: 8, conc-list: &c [{listed}] }}\n"
    return HEAD.format(key=key) + first + "      - { tp: 8, conc-list: *c }\n" * copies


def literal(values: int, entries: int = 1, key: str = "wide-fp8-mi300x-vllm") -> str:
    listed = ", ".join(str(i) for i in range(1, values + 1))
    return HEAD.format(key=key) + f"      - {{ tp: 8, conc-list: [{listed}] }}\n" * entries


def checked(tmp_path_factory: pytest.TempPathFactory, config: str, key: str) -> tuple[int, dict]:
    """`gov check` of a PR that adds `config` to the AMD master and appends an entry for `key`."""
    repo = Repo(tmp_path_factory.mktemp("rows") / "repo")
    shutil.copyfile(PROJECT / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    shutil.copytree(PROJECT / "configs", repo.path / "configs")
    repo.commit("example")
    repo.git("checkout", "-q", "-b", "pr")
    master = repo.path / "configs/amd-master.yaml"
    master.write_text(master.read_text() + config)
    log = repo.path / "perf-changelog.yaml"
    entry = f'\n- config-keys:\n    - {key}\n  description:\n    - "x"\n  pr-link: XXX\n'
    log.write_bytes(log.read_bytes() + entry.encode())
    repo.commit("pr")
    done = run_gov("check", "--base-ref", "main", "--pr", "7", "--format", "json", cwd=repo.path)
    assert done.exit_code in (0, 1), done.stdout + done.stderr
    return done.exit_code, json.loads(done.stdout)


def master_line(config: str, needle: str) -> int:
    """The line of `needle` in the AMD master once `config` is appended."""
    text = (PROJECT / "configs/amd-master.yaml").read_text() + config
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("values", [3_000, 10_000])  # the 18 KB and the 60 KB master config
def test_aliases_expanding_past_the_bound_are_refused_at_the_alias(
    tmp_path_factory: pytest.TempPathFactory, values: int
) -> None:
    config = aliased(values)
    code, out = checked(tmp_path_factory, config, "bomb-fp8-mi300x-vllm")
    assert code == 1  # the key is also unknown (GOV501): its file could not be read
    [finding] = [v for v in out["violations"] if v["code"] == "GOV510"]
    assert finding["path"] == "configs/amd-master.yaml"
    assert "expand this document to more than 200,000 nodes" in finding["message"]
    text = (PROJECT / "configs/amd-master.yaml").read_text() + config
    lines = text.splitlines()
    # the first alias whose expansion crosses the bound: the file's own nodes,
    # then each alias adds the anchored list (values + 1 nodes)
    assert "*c" in lines[finding["line"] - 1]
    aliases_before = finding["line"] - master_line(config, "*c")
    assert aliases_before * (values + 1) < yamlsafe.MAX_EXPANDED_NODES
    assert (aliases_before + 2) * (values + 1) > yamlsafe.MAX_EXPANDED_NODES
    assert finding["column"] == lines[-1].index("*c") + 1


def test_a_few_aliases_of_a_short_list_still_read() -> None:
    text = aliased(10, copies=5)
    assert yamlsafe.prescan(text) is None
    rows = generate(
        catalog_from_texts({"configs/amd-master.yaml": text, **RUNNERS}),
        ["bomb-fp8-mi300x-vllm"],
        EvalMode.NO_EVALS,
    )
    assert len(rows) == 60


def test_billion_laughs_is_refused_by_what_it_expands_to() -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
    )
    problem = yamlsafe.prescan(text)
    assert problem is not None and problem.kind == "yaml-alias" and problem.line == 6


def test_a_config_past_the_row_bound_is_gov524_at_its_search_space_entry(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    config = literal(MAX_CONFIG_ROWS // 2 + 1, entries=2)  # 1,002 rows, no alias
    code, out = checked(tmp_path_factory, config, "wide-fp8-mi300x-vllm")
    assert code == 1
    [finding] = out["violations"]
    assert finding["code"] == "GOV524" and finding["path"] == "configs/amd-master.yaml"
    assert "generates 1,002 rows" in finding["message"] and "at most 1,000" in finding["message"]
    second_entry = master_line(config, "conc-list") + 1
    assert (finding["line"], finding["column"]) == (second_entry, 9)


RUNNERS = {
    path: (PROJECT / path).read_text()
    for path in ("configs/runners.yaml", "configs/nvidia-master.yaml")
}


def test_a_config_at_the_bound_generates_every_row() -> None:
    catalog = catalog_from_texts({"configs/amd-master.yaml": literal(MAX_CONFIG_ROWS), **RUNNERS})
    rows = generate(catalog, ["wide-fp8-mi300x-vllm"], EvalMode.NO_EVALS)
    assert len(rows) == MAX_CONFIG_ROWS


def test_the_plan_budget_stops_before_building_past_it() -> None:
    text = literal(300, key="one-fp8-mi300x-vllm") + literal(300, key="two-fp8-mi300x-vllm")
    catalog = catalog_from_texts({"configs/amd-master.yaml": text, **RUNNERS})
    keys = ["one-fp8-mi300x-vllm", "two-fp8-mi300x-vllm"]
    assert len(generate(catalog, keys, EvalMode.NO_EVALS, max_rows=600)) == 600
    with pytest.raises(MatrixError) as caught:
        generate(catalog, keys, EvalMode.NO_EVALS, max_rows=599)
    [finding] = caught.value.violations
    assert finding.code == "GOV524" and "a plan has at most 20,000" in finding.message
    assert "'two-fp8-mi300x-vllm'" in finding.message
