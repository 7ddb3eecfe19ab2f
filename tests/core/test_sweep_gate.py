"""The sweep gate against an oracle written from InferenceX's run-sweep.yml.

`oracle` is a literal transcription of the workflow's `on:` filter and the
`if:` conditions of its jobs `check-changelog`, `reuse-sweep-gate`, `setup`
and `canary-select` (and the `TRIM_CONC`/`ALL_EVALS`/`EVALS_ONLY` and
strategy `fail-fast` expressions), kept apart from `core.sweep_gate`'s own
rule table. The test walks every combination of event, action (the label of
a label event included), draft, fork, skip marker and label set, and the
corpus test below checks the oracle's label lists against the real file.
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governance.core.diagnostics import UsageError
from governance.core.gate_event import event_from_payload, read_event
from governance.core.settings import Settings
from governance.core.sweep_gate import GateRules, decide, labels_option, modifiers
from tests.harness import CORPUS

REPO = "SemiAnalysisAI/InferenceX"
SHA = "a" * 40
# run-sweep.yml, transcribed (the corpus test checks them against the file).
PRIMARY = (
    "sweep-enabled",
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
)
RELEVANT = (
    *PRIMARY,
    "all-evals",
    "evals-only",
    "agentx-fast",
    "skip_queue",
    "ci-patchwork",
    "engine-patch",
    "ci-patchwork-waived",
    "ci-checklist-complete",
)
PR_TYPES = ("ready_for_review", "synchronize", "labeled", "unlabeled")
MODIFIER_LABELS = ("evals-only", "all-evals", "agentx-fast")
OTHER_ACTIONS = ("opened", "reopened", "synchronize", "ready_for_review", "edited", "closed")
OTHER_ACTIONS += ("converted_to_draft",)
EVENT_LABELS = (*RELEVANT, "documentation")  # the label of a label event: each, and one other


def oracle(
    name: str, ref: str, action: str, label: str | None, draft: bool, fork: bool, skip: bool,
    labels: tuple[str, ...],
) -> dict[str, Any]:  # fmt: skip
    """What run-sweep.yml does: does `setup` run, does `check-changelog` fail,
    and the modifiers the sweep's jobs receive."""
    pr = name == "pull_request"
    if name == "push":
        triggered = ref == "refs/heads/main"  # on.push.branches
    else:  # on.pull_request.branches (the base) and types
        triggered = pr and ref == "main" and action in PR_TYPES
    if not triggered:
        return {"sweeps": False, "failed": False, "checks": False}
    label_event = action in ("labeled", "unlabeled")
    check_runs = pr and not draft and (not label_event or label in RELEVANT)
    check, skip_output = "skipped", ""
    if check_runs:
        count = len([x for x in labels if x in PRIMARY])  # the jq select ... | length
        check = "failure" if count > 1 else "success"
        skip_output = ("true" if skip else "false") if check == "success" else ""
    reuse_runs = (
        check == "success"
        and pr
        and action == "synchronize"
        and not draft
        and "evals-only" not in labels
        and "agentx-fast" not in labels
        and any(x in labels for x in PRIMARY[1:])
    )
    # Without a /reuse-sweep-run authorization the gate's skip-pr-sweep is false.
    setup = (
        check in ("success", "skipped")
        # reuse-sweep-gate: skipped, or success with skip-pr-sweep != "true" (always here)
        and (
            (
                pr
                and not draft
                and not fork
                and skip_output != "true"
                and any(x in labels for x in PRIMARY)
                and (not label_event or label in RELEVANT)
            )
            or name == "push"
        )
    )
    return {
        "sweeps": setup,
        "failed": check == "failure",
        "checks": check_runs,
        "reuse": reuse_runs,
        "trim-conc": pr and "sweep-enabled" in labels,
        "all-evals": pr and "all-evals" in labels,
        "evals-only": pr and "evals-only" in labels,
        "canary": pr and ("full-sweep-enabled" in labels or "full-sweep-fail-fast" in labels),
        "fail-fast": "full-sweep-fail-fast" in labels or "full-sweep-fail-fast-no-canary" in labels,
        "agentx-fast": "agentx-fast" in labels,
    }


def pr_payload(
    action: str, label: str | None, base: str, draft: bool, fork: bool, labels: tuple[str, ...]
) -> dict[str, Any]:
    head_repo = "alice/InferenceX" if fork else REPO
    payload: dict[str, Any] = {
        "action": action,
        "number": 7,
        "pull_request": {
            "number": 7,
            "draft": draft,
            "labels": [{"name": x, "color": "ededed"} for x in labels],
            "head": {"sha": SHA, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"ref": base, "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO},
    }
    if label is not None:
        payload["label"] = {"name": label}
    return payload


def label_sets() -> list[tuple[str, ...]]:
    names = (*PRIMARY, *MODIFIER_LABELS)
    return [
        tuple(n for n, on in zip(names, mask, strict=True) if on)
        for mask in itertools.product((False, True), repeat=len(names))
    ]


def pr_cases() -> list[tuple[str, str | None]]:
    return [(a, None) for a in OTHER_ACTIONS] + [
        (a, x) for a in ("labeled", "unlabeled") for x in EVENT_LABELS
    ]


def test_every_combination_agrees_with_run_sweep_yml() -> None:
    rules = GateRules.from_setting()
    checked = 0
    outcomes: dict[bool, int] = {True: 0, False: 0}
    sets = label_sets()
    assert len(sets) == 2**8
    for base, (action, label), draft, fork, skip, labels in itertools.product(
        ("main", "release"), pr_cases(), (False, True), (False, True), (False, True), sets
    ):
        event = event_from_payload(pr_payload(action, label, base, draft, fork, labels), None)
        message = "bump image [skip-sweep]\n" if skip else "bump image\n"
        got = decide(event, rules, message)
        want = oracle("pull_request", base, action, label, draft, fork, skip, labels)
        where = (base, action, label, draft, fork, skip, labels)
        assert got.sweeps == want["sweeps"], (where, got.reason)
        assert got.conflict == want["failed"], (where, got.reason)
        assert got.checks == want["checks"], (where, got.reason)
        if got.sweeps:
            words = got.modifiers.words
            for word in ("trim-conc", "all-evals", "evals-only", "canary", "fail-fast"):
                assert (word in words) == want[word], (where, word)
            assert ("agentx-fast" in words) == want["agentx-fast"], where
            assert got.reuse_gate == want["reuse"], where
            assert got.modifiers.plan_flags == {
                w for w in ("trim-conc", "evals-only", "all-evals") if want[w]
            }
        outcomes[got.sweeps] += 1
        checked += 1
    for name, ref, skip in itertools.product(
        ("push", "workflow_dispatch", "pull_request_target"),
        ("refs/heads/main", "refs/heads/feature", "refs/tags/v1"),
        (False, True),
    ):
        payload = {"ref": ref, "head_commit": {"message": "x [skip-sweep]" if skip else "x"}}
        got = decide(event_from_payload(payload, name), rules, None)
        want = oracle(name, ref, "", None, False, False, skip, ())
        assert (got.sweeps, got.conflict) == (want["sweeps"], want["failed"]), (name, ref)
        assert not got.modifiers.plan_flags  # a push runs no modifiers
        checked += 1
    # 2 bases x 35 actions x 2 drafts x 2 forks x 2 markers x 256 label sets, + 18 others
    assert checked == 2 * 35 * 2 * 2 * 2 * 256 + 18 == 143_378
    assert outcomes[True] and outcomes[False]  # both answers occur


def test_the_rules_are_settings() -> None:
    """Each rule is a setting: drafts and forks may sweep, another marker skips."""
    rules = GateRules.from_setting(
        [
            ("drafts", ("sweep",)),
            ("forks", ("sweep",)),
            ("skip-markers", ("[no-bench]",)),
            ("labels.bench", ("sweep", "evals-only")),
        ]
    )
    payload = pr_payload("synchronize", None, "main", True, True, ("bench", "sweep-enabled"))
    got = decide(event_from_payload(payload, None), rules, "x [skip-sweep]")
    assert got.sweeps, got.reason
    assert got.modifiers.labels == ("bench",)  # the label table was replaced
    assert got.modifiers.plan_flags == {"evals-only"}
    assert not decide(event_from_payload(payload, None), rules, "x [no-bench]").sweeps


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"drafts": ["maybe"]}, '`drafts` must be ["skip"] or ["sweep"]'),
        ({"labels": {"x": ["turbo"]}}, "unknown modifier 'turbo'"),
        ({"pull-requests": []}, "unknown rule `pull-requests`"),
        ({"labels": {"a,b": ["sweep"]}}, "without ',' or newline"),
        ({"skip-markers": "no"}, "must be a list of strings"),
    ],
)
def test_a_bad_gate_setting_is_a_usage_error(table: dict[str, Any], message: str) -> None:
    from governance.core.settings import value_fault

    fault = value_fault("sweep-gate", table)
    assert fault is not None and message in str(fault), fault


def test_the_setting_loads_from_a_file_and_a_variable(tmp_path: Path) -> None:
    from governance.core.settings import load_settings

    (tmp_path / ".gov.toml").write_text(
        '[sweep-gate]\nforks = ["sweep"]\n[sweep-gate.labels]\nrun = ["sweep", "trim-conc"]\n'
    )
    settings = load_settings(tmp_path, environ={})
    assert settings.gate_rules().forks_sweep
    assert settings.gate_rules().labels == (("run", ("sweep", "trim-conc")),)
    env = {"GOV_SWEEP_GATE": '{"labels": {"go": ["sweep", "all-evals"]}}'}
    assert load_settings(tmp_path, environ=env).gate_rules().labels == (
        ("go", ("sweep", "all-evals")),
    )
    assert Settings().gate_rules() == GateRules.from_setting()


def test_labels_option_refuses_two_sweep_labels() -> None:
    rules = GateRules.from_setting()
    assert labels_option(" evals-only , sweep-enabled", rules).plan_flags == {
        "evals-only",
        "trim-conc",
    }
    with pytest.raises(UsageError, match="sweep-enabled, full-sweep-enabled"):
        labels_option("sweep-enabled,full-sweep-enabled", rules)
    assert modifiers(["evals-only"], rules, pull_request=False).plan_flags == frozenset()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[]", "not a JSON object"),
        (b"{", "not JSON gov reads"),
        (b"[" * 100_000, "not JSON gov reads"),
        (b'{"n": ' + b"9" * 5000 + b"}", "not JSON gov reads"),
        (b'{"pull_request": 5}', "`pull_request` must be an object, not a number"),
        (
            b'{"action": "synchronize", "repository": {"full_name": "a/b"}, "pull_request": '
            b'{"draft": "false", "labels": [], "head": {}, "base": {"ref": "main"}}}',
            "`pull_request.draft` must be true or false, not a string",
        ),
        (
            b'{"action": "labeled", "repository": {"full_name": "a/b"}, "pull_request": '
            b'{"labels": [{"name": 7}], "head": {}, "base": {"ref": "main"}}}',
            "`pull_request.labels[0].name` must be a string, not a number",
        ),
        (
            b'{"action": "labeled", "repository": {"full_name": "a/b"}, "pull_request": '
            b'{"labels": "sweep-enabled", "head": {}, "base": {"ref": "main"}}}',
            "`pull_request.labels` must be an array, not a string",
        ),
        (
            b'{"action": "x", "repository": {"full_name": "a/b"}, "pull_request": '
            b'{"labels": [], "head": {"sha": "$(reboot)"}, "base": {"ref": "main"}}}',
            "`pull_request.head.sha` must be a commit id",
        ),
        (b'{"ref": "' + b"r" * 2000 + b'"}', "over 1024 characters"),
        (b'{"zen": "hi"}', "event name unknown"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_a_hostile_payload_is_a_clear_usage_error(data: bytes, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_event(data, None)
    assert message in str(caught.value), caught.value


def test_too_many_labels_and_too_many_bytes_are_refused() -> None:
    from governance.core.gate_event import MAX_EVENT_BYTES

    labels = [{"name": f"l{i}"} for i in range(1001)]
    payload = pr_payload("synchronize", None, "main", False, False, ())
    payload["pull_request"]["labels"] = labels
    with pytest.raises(UsageError, match="1001 items"):
        event_from_payload(payload, None)
    with pytest.raises(UsageError, match="bytes, over"):
        read_event(b" " * (MAX_EVENT_BYTES + 1), None)


@pytest.mark.corpus
def test_the_oracle_lists_are_run_sweep_yml_s(tmp_path: Path) -> None:
    """The label lists the oracle transcribes are the ones in the real file."""
    bundle = CORPUS / "inferencex-runners.bundle"
    if not bundle.is_file():
        pytest.skip(f"{bundle} is absent")
    clone = tmp_path / "runners"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "main"], check=True)
    text = (clone / ".github/workflows/run-sweep.yml").read_text()
    jobs = re.split(r"\n    (?=[a-z-]+:\n)", text)
    check = next(job for job in jobs if job.startswith("check-changelog:"))
    condition = check[: check.index("outputs:")]
    assert tuple(re.findall(r"github\.event\.label\.name == '([^']+)'", condition)) == RELEVANT
    conflict = check[check.index("Reject conflicting") : check.index("Checkout code")]
    assert tuple(re.findall(r'\. == "([^"]+)"', conflict)) == PRIMARY
    triggers = text.split("pull_request:")[1].split("types:")[1].split("paths:")[0]
    assert tuple(re.findall(r"- (\w+)", triggers)) == PR_TYPES
    assert re.search(r"push:\n +branches:\n +- main\n", text)
    setup = next(job for job in jobs if job.startswith("setup:"))
    setup_if = setup[: setup.index("outputs:")]
    assert tuple(re.findall(r"github\.event\.label\.name == '([^']+)'", setup_if)) == RELEVANT
    assert "github.event.pull_request.head.repo.full_name == github.repository" in setup_if
    assert "grep -Fq '[skip-sweep]'" in check
    # and the gate's defaults say the same
    rules = GateRules.from_setting()
    assert tuple(name for name, _ in rules.labels) == RELEVANT
    assert tuple(name for name, words in rules.labels if "sweep" in words) == PRIMARY
    assert rules.pull_request_actions == PR_TYPES
