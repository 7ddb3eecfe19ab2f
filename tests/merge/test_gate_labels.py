"""prepare-merge reads the PR's labels through the sweep gate: its check of
the prepared commit judges the rows the PR's own sweep runs (the labels'
modifiers, GOV533 for an append-only entry under `evals-only`), its
post-merge plan is main's push sweep (no label modifiers, as run-sweep.yml),
and two sweep labels stop it before anything is written."""

from __future__ import annotations

from tests.merge.conftest import PR, Setup
from tests.merge.test_rollback import findings, refused

AMD = "configs/amd-master.yaml"


def make_append_only(setup: Setup) -> None:
    setup.git("checkout", "-q", "bringup")
    amd = setup.path / AMD
    amd.write_text(
        amd.read_text().replace("conc-start: 4, conc-end: 128", "conc-start: 4, conc-end: 256", 1)
    )
    log = setup.path / "perf-changelog.yaml"
    log.write_bytes(log.read_bytes() + b"  append-only: true\n")
    setup.repo.commit("Make the entry append-only: conc 256 only")
    setup.git("checkout", "-q", "main")


def test_evals_only_refuses_an_append_only_entry_at_check(pr_setup: Setup) -> None:
    make_append_only(pr_setup)
    assert pr_setup.run(push=False, dry_run=True).ok  # without the label it plans
    pr_setup.forge().add_label(PR, "evals-only")
    report = refused(pr_setup, "check")
    (finding,) = findings(report)
    assert finding.code == "GOV533" and finding.path == "perf-changelog.yaml", finding
    assert "evals-only" in finding.message and finding.line > 0


def test_the_post_merge_plan_is_main_s_push_sweep(pr_setup: Setup) -> None:
    plain = pr_setup.run(push=False, dry_run=True)
    pr_setup.forge().add_label(PR, "evals-only")
    pr_setup.forge().add_label(PR, "sweep-enabled")
    labelled = pr_setup.run(push=False, dry_run=True)
    assert plain.ok and labelled.ok
    assert labelled.plan_rows == plain.plan_rows
    assert any(row.startswith("single_node[") for row in labelled.plan_rows)  # throughput kept


def test_two_sweep_labels_stop_prepare_merge(pr_setup: Setup) -> None:
    pr_setup.forge().add_label(PR, "sweep-enabled")
    pr_setup.forge().add_label(PR, "full-sweep-fail-fast")
    report = refused(pr_setup, "preflight")
    (finding,) = findings(report)
    assert finding.code == "GOV615" and "conflicting sweep labels" in finding.message
