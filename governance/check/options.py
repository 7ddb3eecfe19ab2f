"""What a `gov check` is asked: the options every door (hook, CI, merge tool)
fills in, in a module of their own so the check's parts (the service, the
preflight) share them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from governance.changelog.modes import CheckMode
from governance.check.snapshots import HeadSource


@dataclass(frozen=True, slots=True)
class CheckOptions:
    mode: CheckMode
    base_ref: str | None = None  # default: merge-base of HEAD with the main branch
    head_ref: str | None = None  # default: HEAD
    head_source: HeadSource = HeadSource.REF
    configs: bool = True  # resolve config keys against the master configs at head
    full: bool = False  # validate the whole base too, not only what head appends
    # An explicit base means "where head forked from it" (their merge-base);
    # exact_base compares with the base commit itself (two-dot).
    exact_base: bool = False
    # (commit, label) of a base already resolved (governance.check.trusted).
    resolved_base: tuple[str, str] | None = None
    # Preflight the launch scripts of the triggered rows (None: the
    # `sweep-preflight` setting; "auto" = when the scripts folder exists).
    sweep_preflight: bool | None = None
    # The plan options a sweep's labels turn on (core.sweep_gate.plan_kwargs):
    # the check judges the rows the sweep will run (--labels, --event).
    plan_flags: frozenset[str] = frozenset()
    # Skip the remembered answers (--no-cache, GOV_NO_CACHE=1); not part of any key.
    no_cache: bool = field(default=False, repr=False, compare=False)
    # The scripts folder's identity at head (`check.scripts_folder.scripts_identity`),
    # when the remembered answer's key already took it: the preflight's key
    # reuses it rather than walking the folder again. Not part of any key.
    head_scripts_id: str | None = field(default=None, repr=False, compare=False)
