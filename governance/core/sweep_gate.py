"""The sweep gate (pure): a GitHub event and the gate rules -> does the PR
sweep, why, and with which modifiers (docs/sweeps.md, 'The sweep gate').

The rules are the setting `sweep-gate` with InferenceX's `run-sweep.yml` as
defaults: which pull-request actions start a sweep, which of them only for a
sweep label (`labeled`/`unlabeled`), the branches, drafts, forks, the skip
marker of the head commit's message, and the label table (label -> its
modifier words). `modifiers(labels, rules)` is the one place labels become
plan options: `gov sweep-gate`, `gov check --labels`, `gov plan --labels`
and prepare-merge all go through it. Everything in the payload is untrusted:
`gate_event.read_event` bounds and type-checks it and raises `UsageError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from governance.core.diagnostics import UsageError
from governance.core.gate_event import Event

# Modifier words a label may carry. `sweep`: a primary sweep label (one is
# needed to sweep, two conflict); the next three change the plan's rows.
WORDS = ("sweep", "trim-conc", "evals-only", "all-evals", "canary", "fail-fast", "agentx-fast")
PLAN_WORDS = ("trim-conc", "evals-only", "all-evals")
DEFAULT_LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sweep-enabled", ("sweep", "trim-conc")),
    ("full-sweep-enabled", ("sweep", "canary")),
    ("non-canary-full-sweep-enabled", ("sweep",)),
    ("full-sweep-fail-fast", ("sweep", "canary", "fail-fast")),
    ("full-sweep-fail-fast-no-canary", ("sweep", "fail-fast")),
    ("all-evals", ("all-evals",)),
    ("evals-only", ("evals-only",)),
    ("agentx-fast", ("agentx-fast",)),
    # Relevant only: (un)labelling them restarts the sweep, they change nothing.
    ("skip_queue", ()),
    ("ci-patchwork", ()),
    ("engine-patch", ()),
    ("ci-patchwork-waived", ()),
    ("ci-checklist-complete", ()),
)
DEFAULT_RULES: dict[str, tuple[str, ...]] = {
    "pull-request-actions": ("ready_for_review", "synchronize", "labeled", "unlabeled"),
    "label-actions": ("labeled", "unlabeled"),
    "pull-request-branches": (),  # empty: the `main-branch` setting
    "push-branches": (),
    "drafts": ("skip",),
    "forks": ("skip",),
    "skip-markers": ("[skip-sweep]",),
}
LABEL_PREFIX = "labels."  # a label's row in the flattened setting: "labels.<name>"
MAX_NAME = 1024  # characters of a label name


@dataclass(frozen=True, slots=True)
class GateRules:
    pull_request_actions: tuple[str, ...]
    label_actions: tuple[str, ...]
    pull_request_branches: tuple[str, ...]
    push_branches: tuple[str, ...]
    drafts_sweep: bool
    forks_sweep: bool
    skip_markers: tuple[str, ...]
    labels: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def from_setting(
        cls, table: Sequence[tuple[str, Sequence[str]]] = (), main_branch: str = "main"
    ) -> GateRules:
        """The rules of the setting `sweep-gate` (flattened rows, empty: the
        defaults). Each rule given replaces its default; a `labels` table given
        replaces the whole default label table; the branches default to main.
        ValueError says what is wrong."""
        rules = dict(DEFAULT_RULES)
        labels: dict[str, tuple[str, ...]] = {}
        for key, values in table:
            values = tuple(values)
            if key.startswith(LABEL_PREFIX):
                name = key[len(LABEL_PREFIX) :]
                if not _plain_label(name):
                    raise ValueError(f"label '{name}' must be printable, without ',' or newline")
                unknown = [v for v in values if v not in WORDS]
                if unknown:
                    raise ValueError(
                        f"label '{name}': unknown modifier {unknown[0]!r} (known: "
                        + ", ".join(WORDS)
                        + ")"
                    )
                labels[name] = values
            elif key in DEFAULT_RULES:
                rules[key] = values
            else:
                known = ", ".join([*DEFAULT_RULES, "labels"])
                raise ValueError(f"unknown rule `{key}` (known: {known})")
        for key in ("drafts", "forks"):
            if rules[key] not in (("skip",), ("sweep",)):
                raise ValueError(f'`{key}` must be ["skip"] or ["sweep"]')
        return cls(
            rules["pull-request-actions"],
            rules["label-actions"],
            rules["pull-request-branches"] or (main_branch,),
            rules["push-branches"] or (main_branch,),
            rules["drafts"] == ("sweep",),
            rules["forks"] == ("sweep",),
            tuple(m for m in rules["skip-markers"] if m),
            tuple(labels.items()) if labels else DEFAULT_LABELS,
        )

    def words_of(self, label: str) -> tuple[str, ...] | None:
        """The modifier words of a gate label; None for a label the gate ignores."""
        for name, words in self.labels:
            if name == label:
                return words
        return None


def _plain_label(name: str) -> bool:
    return (
        0 < len(name) <= MAX_NAME
        and name.isprintable()
        and "," not in name
        and name == name.strip()
    )


@dataclass(frozen=True, slots=True)
class Modifiers:
    """What a PR's labels change in its sweep."""

    labels: tuple[str, ...] = ()  # the gate labels present, in the table's order
    sweep_labels: tuple[str, ...] = ()  # the primary ones (more than one: a conflict)
    words: frozenset[str] = frozenset()

    @property
    def plan_flags(self) -> frozenset[str]:
        """The plan options these modifiers turn on (`gov plan`'s option names)."""
        return frozenset(w for w in PLAN_WORDS if w in self.words)

    @property
    def conflict(self) -> bool:
        return len(self.sweep_labels) > 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"labels": list(self.labels)}
        out["sweep-label"] = self.sweep_labels[0] if len(self.sweep_labels) == 1 else ""
        out.update({word: word in self.words for word in WORDS if word != "sweep"})
        return out


class PlanKwargs(TypedDict):
    trim_conc: bool
    evals_only: bool
    all_evals: bool


def plan_kwargs(flags: Iterable[str]) -> PlanKwargs:
    """Plan options (`PlanOptions` / `plan_between` keywords) of plan flags."""
    on = set(flags)
    return PlanKwargs(
        trim_conc="trim-conc" in on, evals_only="evals-only" in on, all_evals="all-evals" in on
    )


def modifiers(labels: Iterable[str], rules: GateRules, *, pull_request: bool = True) -> Modifiers:
    """The modifiers `labels` give (the one mapping from labels to plan
    options). Outside a pull request (a push to main) there are none:
    run-sweep.yml passes --trim-conc/--evals-only/--all-evals only to PR runs."""
    if not pull_request:
        return Modifiers()
    present = set(labels)
    known = [(name, words) for name, words in rules.labels if name in present]
    return Modifiers(
        tuple(name for name, _ in known),
        tuple(name for name, words in known if "sweep" in words),
        frozenset(word for _, words in known for word in words),
    )


def labels_option(text: str, rules: GateRules) -> Modifiers:
    """`--labels a,b`: the modifiers of those labels; two sweep labels are a
    usage error, as run-sweep.yml fails the PR's check on them."""
    found = modifiers([part.strip() for part in text.split(",") if part.strip()], rules)
    if found.conflict:
        raise UsageError(
            "conflicting sweep labels: " + ", ".join(found.sweep_labels),
            "a PR carries exactly one sweep label; keep one of them",
        )
    return found


@dataclass(frozen=True, slots=True)
class Decision:
    sweeps: bool
    reason: str
    event: Event
    modifiers: Modifiers = field(default_factory=Modifiers)
    # run-sweep.yml validates the changelog on this event (its check-changelog job runs).
    checks: bool = False
    # Two or more sweep labels: run-sweep.yml fails the check (exit 1 here).
    conflict: bool = False
    # A /reuse-sweep-run authorization (comments gov does not read) could
    # still skip this sweep: run-sweep.yml's reuse-sweep-gate job runs.
    reuse_gate: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweeps": self.sweeps,
            "reason": self.reason,
            "event": self.event.name,
            "action": self.event.action,
            "checks": self.checks,
            "conflict": self.conflict,
            "reuse-gate": self.reuse_gate,
            **self.modifiers.to_dict(),
            "plan-flags": sorted(self.modifiers.plan_flags),
        }


def decide(event: Event, rules: GateRules, head_message: str | None = None) -> Decision:
    """run-sweep.yml's jobs `check-changelog`, `reuse-sweep-gate` and `setup`,
    as one decision. `head_message` is the head commit's message (the skip
    marker is read from it; None when it could not be read: no marker)."""
    if event.name == "push":
        branch = event.ref.removeprefix("refs/heads/")
        if not event.ref.startswith("refs/heads/") or branch not in rules.push_branches:
            return Decision(False, f"a push to {event.ref or '?'}: no sweep", event)
        return Decision(True, f"a push to {branch} always sweeps (no modifiers)", event)
    if event.name != "pull_request":
        return Decision(False, f"the {event.name} event does not sweep", event)
    if event.base_branch not in rules.pull_request_branches:
        return Decision(False, f"the PR targets {event.base_branch}: no sweep", event)
    if event.action not in rules.pull_request_actions:
        return Decision(False, f"a PR {event.action or '?'} event does not sweep", event)
    mods = modifiers(event.labels, rules)
    if event.action in rules.label_actions and (
        event.label is None or rules.words_of(event.label) is None
    ):
        return Decision(False, f"{event.action} '{event.label}': not a sweep label", event, mods)
    if event.draft and not rules.drafts_sweep:
        return Decision(False, "the PR is a draft", event, mods)
    if mods.conflict:
        why = "conflicting sweep labels: " + ", ".join(mods.sweep_labels) + "; keep exactly one"
        return Decision(False, why, event, mods, checks=True, conflict=True)
    if event.fork and not rules.forks_sweep:
        return Decision(False, "the PR comes from a fork", event, mods, checks=True)
    marker = next((m for m in rules.skip_markers if m in (head_message or "")), None)
    if marker is not None:
        return Decision(False, f"the head commit says {marker}", event, mods, checks=True)
    if not mods.sweep_labels:
        names = [name for name, words in rules.labels if "sweep" in words]
        return Decision(False, "no sweep label (" + ", ".join(names) + ")", event, mods, True)
    reuse = (
        event.action == "synchronize"
        and "trim-conc" not in mods.words
        and not {"evals-only", "agentx-fast"} & mods.words
    )
    label = mods.sweep_labels[0]
    return Decision(True, f"{event.action} with {label}", event, mods, True, reuse_gate=reuse)
