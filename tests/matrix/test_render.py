"""Renderers: JSON is the reference's bytes; text/markdown show every row."""

from __future__ import annotations

import json
import textwrap

from governance.matrix.catalog import Catalog
from governance.matrix.expand import EvalMode, generate
from governance.matrix.plan import PlanOptions, build_plan
from governance.matrix.render import plan_json, plan_markdown, plan_text, rows_json, rows_text

from .corpus import catalog_from_texts

MASTER = textwrap.dedent(
    """\
    demo-fp8-h200-vllm:
      image: vllm/vllm-openai:v0.1
      model: org/Demo
      model-prefix: demo
      precision: fp8
      framework: vllm
      runner: h200
      multinode: false
      scenarios:
        fixed-seq-len:
        - isl: 1024
          osl: 8192
          search-space:
          - { tp: 8, conc-list: [4] }
        - isl: 8192
          osl: 1024
          search-space:
          - { tp: 4, conc-start: 8, conc-end: 48 }
    """
)
CHANGELOG = (
    b"- config-keys:\n"
    b"    - demo-*\n"
    b'  description: ["Example | change"]\n'
    b"  pr-link: https://example.invalid/pull/1\n"
)


def catalog() -> Catalog:
    return catalog_from_texts(
        {
            "configs/amd-master.yaml": MASTER,
            "configs/nvidia-master.yaml": "{}\n",
            "configs/runners.yaml": "labels:\n  h200: [h200_0]\n",
        }
    )


def test_rows_json_and_text() -> None:
    rows = generate(catalog(), ["demo-fp8-h200-vllm"], EvalMode.DEFAULT)
    assert json.loads(rows_json(rows)) == rows
    text = rows_text(rows)
    assert text.count("\n") == len(rows) + 3  # header, rule, rows, count
    assert "8192/1024" in text and "eval" in text
    assert rows_text([]) == "no rows\n"


def test_plan_renderers_and_unrun_sequence_length_warning() -> None:
    result = build_plan(
        (None, CHANGELOG),
        catalog(),
        PlanOptions(base_ref="B", head_ref="H", changelog_path="perf-changelog.yaml"),
    )
    assert list(result.document["single_node"]) == ["1024_8192", "8k1k"]
    assert [w.code for w in result.warnings] == ["GOV550"]
    assert "1024_8192" in result.warnings[0].message
    assert json.loads(plan_json(result)) == result.document
    text = plan_text(result)
    assert "single_node[8k1k]: 4 row(s)" in text and "warning GOV550" in text
    markdown = plan_markdown(result)
    assert "| single_node[1024_8192] | 1 |" in markdown
    assert "> **Warning:**" in markdown
