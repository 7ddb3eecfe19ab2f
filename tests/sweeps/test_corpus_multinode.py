"""Every multi-node row of InferenceX's whole plan, resolved by `gov launch --dry-run`.

The scripts bundle (`inferencex-scripts.bundle`, branch `main`) holds the real
`benchmarks/` folder: single-node and multi-node scripts and the srt-slurm
recipes kept in the repository. The whole plan is what an entry with
`config-keys: ["*"]` appended to its changelog triggers: every config of both
master files. Counts measured at that `main` (1058 multi-node rows: 648
throughput, 410 eval):

* 106 resolve in the repository: 82 to a script (75 mi355x disaggregated,
  5 gb200 llm-d, 2 b200 tilert) and 24 to an srt-slurm recipe under
  `benchmarks/multi_node/srt-slurm-recipes/` (gb300);
* 952 name a recipe of the srt-slurm checkout (`CONFIG_FILE=recipes/…`): external;
* none is unresolvable.

The 16 rows that do not resolve are single-node (15 throughput and 1 eval row
of an H100 agentic config whose script `single_node/agentic/qwen3.5_fp8_h100.sh`
is not in the repository).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from governance.core import yamlsafe
from governance.sweeps.identity import plan_rows
from governance.sweeps.multinode import node_count
from governance.sweeps.naming import hardware_token
from tests.harness import CORPUS, plan_everything, run_gov

pytestmark = pytest.mark.corpus

BUNDLE = CORPUS / "inferencex-scripts.bundle"


@pytest.fixture(scope="module")
def whole_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    clone, document = plan_everything(BUNDLE, tmp_path_factory, "scripts")
    return clone, json.loads(document)


def test_every_multi_node_row_resolves_or_is_external(
    whole_plan: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    clone, document = whole_plan
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(document))
    dry = run_gov("-C", str(clone), "launch", "--plan", str(plan), "--dry-run")
    lines = dry.stdout.splitlines()
    assert (
        "multi-node rows: 1058: 106 resolved (82 script, 24 repository recipe), "
        "952 external recipe, 0 unresolvable"
    ) in lines, lines[-4:]
    failing = [line for line in lines if " !! " in line]
    assert Counter(line.split("[")[0] for line in failing) == {
        "single_node.agentic": 15,
        "agentic_evals": 1,
    }
    assert dry.stdout.count("      tried single_node/agentic/qwen3.5_fp8_h100.sh\n") == 16
    assert dry.exit_code == 1  # those 16 single-node rows
    scripts = Counter(
        m.group(1) for line in lines if (m := re.search(r"-> (multi_node/[^ ]+\.sh)$", line))
    )
    assert scripts == {
        "multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh": 14,
        "multi_node/dsr1_fp4_mi355x_sglang-disagg.sh": 31,
        "multi_node/dsr1_fp8_mi355x_sglang-disagg.sh": 12,
        "multi_node/dsv4_fp4_gb200_llmd-vllm-disagg.sh": 5,
        "multi_node/dsv4_fp4_mi355x_atom-disagg.sh": 4,
        "multi_node/dsv4_fp4_mi355x_sglang-disagg.sh": 10,
        "multi_node/glm5.1_fp8_b200_tilert-disagg.sh": 2,
        "multi_node/qwen3.5_fp4_mi355x_sglang-disagg.sh": 2,
        "multi_node/qwen3.5_fp8_mi355x_sglang-disagg.sh": 2,
    }
    # The srt-slurm launchers' rows name their recipe runner, which InferenceX
    # keeps in its launchers, not in benchmarks/: selected, not launchable here.
    assert "  note: 976 recipe rows run through multi_node/srt-slurm.sh" in dry.stdout


def test_node_counts_agree_with_the_repository_recipes(
    whole_plan: tuple[Path, dict[str, object]],
) -> None:
    """For every row that runs a recipe of the repository, the nodes gov asks
    Slurm for are the recipe's own `resources` (prefill + decode, or agg)."""
    clone, document = whole_plan
    checked = 0
    for row in plan_rows(document):
        settings = row.data["prefill"].get("additional-settings", []) if row.is_multinode else []
        config = next((s[12:] for s in settings if s.startswith("CONFIG_FILE=benchmarks/")), None)
        if config is None:
            continue
        resources = yamlsafe.load((clone / config).read_text())["resources"]
        wanted = (
            resources.get("agg_nodes") or resources["prefill_nodes"] + resources["decode_nodes"]
        )
        assert node_count(row, hardware_token(row.data["runner"])) == wanted, (config, resources)
        checked += 1
    assert checked == 24
