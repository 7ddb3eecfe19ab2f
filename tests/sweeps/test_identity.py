"""Row identity: fingerprints recomputed (never trusted), harnesses traced from
the scripts a row runs, both recorded in the ledger for every launched run."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from governance.core.fingerprint import plan_row_fingerprint, recipe_fingerprint
from governance.sweeps.harness import Tracer, mapping_reader, references
from tests.harness import Repo
from tests.sweeps.conftest import make_row
from tests.sweeps.test_cli_sweeps import append_entry, gov, plan_file

LIB = b"run_benchmark() { :; }\n"


def test_self_relative_sources_are_followed_transitively() -> None:
    files = {
        "benchmarks/single_node/fixed_seq_len/a.sh": (
            b'#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\n'
        ),
        "benchmarks/benchmark_lib.sh": b'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
        b'. "$HERE/utils/env.sh"\n# source "$(dirname "$0")/commented.sh"\n',
        "benchmarks/utils/env.sh": b"export X=1\n",
        "benchmarks/commented.sh": b"",
    }
    harness = Tracer(mapping_reader(files)).trace(["benchmarks/single_node/fixed_seq_len/a.sh"])
    assert [path for path, _ in harness.files] == [
        "benchmarks/benchmark_lib.sh",
        "benchmarks/single_node/fixed_seq_len/a.sh",
        "benchmarks/utils/env.sh",
    ]
    assert harness.unseen == ()


def test_a_changed_helper_changes_the_harness_digest() -> None:
    script = b'source "$(dirname "$0")/lib.sh"\n'
    clean = Tracer(mapping_reader({"b/x.sh": script, "b/lib.sh": LIB})).trace(["b/x.sh"])
    doctored = Tracer(mapping_reader({"b/x.sh": script, "b/lib.sh": LIB + b"sleep 0\n"}))
    changed = doctored.trace(["b/x.sh"])
    assert clean.digest != changed.digest
    assert changed.changed(clean.as_dict()) == ["b/lib.sh"]


def test_container_paths_map_to_repository_files_or_are_listed_as_unseen() -> None:
    files = {
        "benchmarks/m/server.sh": b"source /workspace/benchmarks/benchmark_lib.sh\n"
        b"source $WS_PATH/env.sh\n",
        "benchmarks/benchmark_lib.sh": LIB,
    }
    harness = Tracer(mapping_reader(files)).trace(["benchmarks/m/server.sh"])
    assert "benchmarks/benchmark_lib.sh" in harness.as_dict()
    assert harness.unseen == ("benchmarks/m/server.sh:2: source $WS_PATH/env.sh",)


def test_references_never_climb_above_the_repository() -> None:
    named = references("b/x.sh", 'source "$(dirname "$0")/../../../etc/passwd"\n')
    assert named.paths == ()


def test_harness_inputs_are_part_of_every_harness() -> None:
    files = {"b/x.sh": b"true\n", "utils/bench.py": b"print(1)\n"}
    harness = Tracer(mapping_reader(files), ["utils/bench.py"]).trace(["b/x.sh"])
    assert "utils/bench.py" in harness.as_dict()


@given(image=st.text(min_size=1, max_size=30))
def test_an_edited_row_never_matches_its_fingerprint(image: str) -> None:
    row = make_row()
    given_fp = row["recipe-fingerprint"]
    assert plan_row_fingerprint(row, given_fp) == given_fp
    edited = {**row, "image": row["image"] + image}
    assert plan_row_fingerprint(edited, given_fp) is None


def test_normalised_defaults_still_match() -> None:
    """`gov plan` fills `eval-only: false` after fingerprinting: still the row's."""
    row = make_row()
    fingerprint = recipe_fingerprint({k: v for k, v in row.items() if k != "recipe-fingerprint"})
    assert plan_row_fingerprint({**row, "eval-only": False}, fingerprint) == fingerprint


def test_launch_refuses_an_edited_plan_row(sweep_repo: Repo, tmp_path: Path) -> None:
    base = sweep_repo.git("rev-parse", "HEAD")
    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_file(sweep_repo, base, tmp_path)
    document = json.loads(plan.read_text())
    document["single_node"]["1k1k"][1]["image"] = "evil/image:latest"
    plan.write_text(json.dumps(document))
    run = gov(sweep_repo, "launch", "--plan", str(plan))
    assert run.exit_code == 2, run.stderr
    assert "single_node.1k1k[1]: `recipe-fingerprint`" in run.stderr
    assert "1 row(s) do not match" in run.stderr
    assert not (sweep_repo.path / ".git" / "gov" / "runs.sqlite3").exists()


def test_each_run_records_its_identity_and_harness(sweep_repo: Repo, tmp_path: Path) -> None:
    base = sweep_repo.git("rev-parse", "HEAD")
    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_file(sweep_repo, base, tmp_path)
    ran = gov(sweep_repo, "launch", "--plan", str(plan))
    listed = json.loads(gov(sweep_repo, "runs", "list", "--format", "json").stdout)
    assert listed, ran.stderr
    first = listed[0]
    script = Path(first["script"]).resolve().relative_to(sweep_repo.path.resolve()).as_posix()
    blob = sweep_repo.git("rev-parse", f"HEAD:{script}")
    assert first["harness"][script] == blob  # the git blob id of what ran
    assert first["recipe"] == first["fingerprint"] and len(first["identity"]) == 64
