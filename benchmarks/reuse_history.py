"""Merge-time reuse over the real InferenceX history: what would a landed PR rerun?

    .venv/bin/python benchmarks/reuse_history.py [--repo CLONE] [--limit N]

For every PR branch of the shared corpus (`inferencex.bundle`: `main` plus
400 real PR branches `pr/*`) that landed on main, two plans are computed:

* the *sweep plan*: what the PR swept before its last catch-up with main,
  `plan_between(merge-base(sweep head, main before landing), sweep head)`;
  the sweep head is the branch's last commit before its final merge of main
  (the first parent of the newest merge commit on its first-parent line that
  brings in a main commit), or its head when it never merged main;
* the *landed plan*: what the landing commit adds, `plan_between(L^, L)`.

The second population, *catch-ups*, is every PR branch, landed or not,
that merged main after a sweep head: the sweep plan as above (against the
sweep head's fork point), the "landed" plan the branch head's plan against
the main it last merged (what prepare-merge would plan for it then).

Then every row of the landed plan is decided by the reuse core, given every
row of the sweep plan as a succeeded run at the sweep head: *before* with
the `decide` main had before c0b8b0a (governance/sweeps/reuse.py at
`BEFORE`, read with `git show` from this checkout and run as it was:
throughput rows matched on fingerprint + conc, eval rows always rerun),
*after* with today's identity-based `decide` (rows matched on recipe + conc +
harness, eval rows included: an eval row's recipe is its content id). The
harness is the empty mapping on both sides: the corpus holds only the
changelog and configs/, no launch scripts. A landed row is
*identical* to a swept one when both have the same `row_recipe` and
`conc_label`; the check line requires every identical row to be reused after
(exit 1 otherwise, naming the PR and the row).

How a branch is tied to its landing. Main is linear: every PR landed as one
squash commit whose subject ends in "(#N)", there are no merge commits, and
the goldens' `pr-branches.jsonl` gives synthetic PR numbers (100000 + line),
not the real ones. A branch's own PR number is therefore read from the
changelog entries it appends (merge-base with main → branch head): the
branch counts as PR N when every canonical pr-link it adds names the same N
(`XXX` placeholders allowed alongside, like the goldens' `inferred` block).
It landed when main has a commit "(#N)" that is not already in the branch's
history (a branch that merged main after N landed, or re-adds N's entry, is
not N's PR). Several branches may claim one landing (experiments stacked on
the PR's branch carry its entry); those sharing a sweep head with an earlier
branch (file order of `git for-each-ref`) are one measurement and counted
once. Branches that add no link, link several PRs, or link a PR that never
landed are counted and left out. (Matching instead on the appended entry's
text, pr-link aside, finds 7 more branches, all from before #1992 moved the
master configs to configs/, where no plan computes: the bundle has only the
changelog then.) Plans that raise GovError are skipped and counted by
exception type, codes and first finding.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from governance.changelog.appended import appended  # noqa: E402
from governance.core.blockcache import BlockCache  # noqa: E402
from governance.core.diagnostics import FindingsError, GovError  # noqa: E402
from governance.core.settings import Settings  # noqa: E402
from governance.git.repo import GitRepo  # noqa: E402
from governance.matrix.sources import default_cache, plan_between  # noqa: E402
from governance.sweeps.identity import PlanRow, conc_label, plan_rows, row_recipe  # noqa: E402
from governance.sweeps.reuse import ReuseDecision, RunRecord, decide, identified  # noqa: E402

BUNDLE = ROOT / ".." / "shared" / "corpus" / "inferencex.bundle"
CHANGELOG = "perf-changelog.yaml"
LANDED = re.compile(r"\(#(\d+)\)")  # the last one in a squash subject is the PR
PR_LINK = re.compile(r"^\s*(?:-\s*)?pr-link:\s*['\"]?([^'\"\s]+)")
CANONICAL = re.compile(r"https://github\.com/SemiAnalysisAI/Inference(?:X|MAX)/pull/(\d+)")
# main just before c0b8b0a made reuse decide on row identity: what "before" runs
BEFORE = "05a1790b8c12fd15a434f6079b0b85aa52b5f052"
HARNESS: dict[str, str] = {}  # no launch scripts in this corpus: the same (empty) harness


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def clone_corpus(target: Path) -> None:
    """Like tests/harness.py `clone_corpus`: every PR branch becomes a local branch."""
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(target)], check=True)
    git(target, "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")


@dataclass(frozen=True, slots=True)
class Case:
    branch: str
    pr: int | None  # None: a catch-up of a branch, landed or not
    landing: str  # the squash commit on main, or the branch head after its catch-up
    sweep_head: str
    sweep_base: str = ""  # "" = merge-base(sweep head, landing^)
    landed_base: str = ""  # "" = landing^

    def ranges(self, repo: GitRepo) -> tuple[tuple[str, str], tuple[str, str]]:
        landed_base = self.landed_base or f"{self.landing}^"
        sweep_base = self.sweep_base or repo.merge_base(self.sweep_head, landed_base)
        return (sweep_base, self.sweep_head), (landed_base, self.landing)


@dataclass
class Tally:
    landed: int = 0
    reused: int = 0
    rerun: int = 0


def landings(path: Path) -> dict[int, str]:
    """PR number → its squash commit on main."""
    found: dict[int, str] = {}
    for line in git(path, "log", "--first-parent", "--format=%H %s", "main").splitlines():
        sha, subject = line.split(" ", 1)
        numbers = LANDED.findall(subject)
        if numbers:
            found.setdefault(int(numbers[-1]), sha)  # newest first: a later reland wins
    return found


def own_pr(repo: GitRepo, base: str, head: str) -> int | str:
    """The one PR the branch's appended changelog lines link, or why there is none."""
    added = appended(repo.read_blob(base, CHANGELOG), repo.read_blob(head, CHANGELOG))
    links = [m.group(1) for line in added.lines if (m := PR_LINK.match(line))]
    numbers = {int(m.group(1)) for link in links if (m := CANONICAL.fullmatch(link))}
    if not numbers:
        return "adds no pr-link"
    if len(numbers) > 1:
        return "links several PRs"
    return numbers.pop()


def sweep_head(path: Path, branch: str, on_main: set[str]) -> str:
    """The branch's last commit before its final merge of main (else its head)."""
    lines = git(path, "rev-list", "--first-parent", "--parents", branch).splitlines()
    for line in lines:
        sha, *parents = line.split()
        if sha in on_main:  # down at the fork point: no merge of main above it
            break
        if any(p in on_main for p in parents[1:]):
            return parents[0]
    return lines[0].split()[0]


def find_cases(path: Path, repo: GitRepo, left_out: Counter[str]) -> list[Case]:
    main = repo.resolve("main")
    on_main = set(git(path, "rev-list", "main").split())
    landed = landings(path)
    cases: list[Case] = []
    seen: set[tuple[str, str]] = set()
    refs = git(path, "for-each-ref", "--format=%(refname:short)", "refs/heads/pr/")
    for branch in refs.split():
        head = repo.resolve(branch)
        pr = own_pr(repo, repo.merge_base(head, main), head)
        if isinstance(pr, str):
            left_out[pr] += 1
        elif pr not in landed:
            left_out["its PR never landed"] += 1
        elif repo.is_ancestor(landed[pr], head):
            left_out["its PR's landing is in its history"] += 1
        else:
            case = Case(branch, pr, landed[pr], sweep_head(path, branch, on_main))
            # Branches stacked on the PR's branch often share its last sweep:
            # the same (sweep head, landing) is one measurement, not several.
            if (case.sweep_head, case.landing) in seen:
                left_out["same sweep head and landing as a branch before it"] += 1
                continue
            seen.add((case.sweep_head, case.landing))
            cases.append(case)
    return cases


def find_catchups(path: Path, repo: GitRepo, left_out: Counter[str]) -> list[Case]:
    """Every PR branch that merged main after a sweep head, landed or not:
    its sweep plan against the sweep head's fork point, and the plan of its
    head against the main it last merged (what prepare-merge would plan)."""
    main = repo.resolve("main")
    on_main = set(git(path, "rev-list", "main").split())
    cases: list[Case] = []
    seen: set[str] = set()
    refs = git(path, "for-each-ref", "--format=%(refname:short)", "refs/heads/pr/")
    for branch in refs.split():
        head = repo.resolve(branch)
        swept = sweep_head(path, branch, on_main)
        if swept == head:
            left_out["never merged main"] += 1
        elif head in seen:
            left_out["same head as a branch before it"] += 1
        else:
            seen.add(head)
            fork = repo.merge_base(swept, main)
            cases.append(Case(branch, None, head, swept, fork, repo.merge_base(head, main)))
    return cases


def skip_reason(which: str, exc: GovError) -> str:
    """Exception type and codes, plus the first finding (what it was about)."""
    found = exc.violations if isinstance(exc, FindingsError) else []
    codes = "/".join(sorted({v.code for v in found}))
    first = found[0].message if found else str(exc)
    return f"{which} plan: {type(exc).__name__} {codes} ({first[:90]})"


def point(row: PlanRow) -> tuple[str, str]:
    """What "identical" means here: same recipe (eval rows: content id), same conc."""
    return row_recipe(row), conc_label(row)


def reuse_before() -> ModuleType:
    """governance/sweeps/reuse.py as main had it before identity-based reuse:
    the "before" column runs that code itself, not a re-creation of it."""
    source = git(ROOT, "show", f"{BEFORE}:governance/sweeps/reuse.py")
    module = ModuleType("reuse_before")
    sys.modules[module.__name__] = module  # dataclasses look up their class's module
    exec(compile(source, f"{BEFORE[:12]}:governance/sweeps/reuse.py", "exec"), module.__dict__)
    return module


def before(old: ModuleType, landed: Sequence[PlanRow], swept: Sequence[PlanRow], head: str) -> Any:
    """The old decide (its ReuseDecision has the same fields): rows matched on
    fingerprint + conc, so only the throughput rows' runs can be reused."""
    runs = [
        old.RunRecord(i, row.fingerprint, conc_label(row), head, "succeeded")
        for i, row in enumerate(swept)
        if row.fingerprint
    ]
    return old.decide(landed, runs, {head}, pr_head_rows=swept)


def after(landed: Sequence[PlanRow], swept: Sequence[PlanRow], head: str) -> ReuseDecision:
    """The identity-based decide: every swept row, evals included, is a run,
    recorded with the recipe gov computes and the (empty) harness."""
    runs = [
        RunRecord(
            i,
            row.fingerprint,
            conc_label(row),
            head,
            "succeeded",
            recipe=row_recipe(row),
            harness=HARNESS,
        )
        for i, row in enumerate(swept)
    ]
    rows = [identified(row, HARNESS) for row in landed]
    return decide(rows, runs, {head}, pr_head_rows=swept)


def count(decision: ReuseDecision, throughput: Tally, evals: Tally) -> None:
    for item in decision.rows:
        tally = evals if item.row.is_eval else throughput
        tally.landed += 1
        if item.reused:
            tally.reused += 1
        else:
            tally.rerun += 1


def reasons(decisions: Iterable[ReuseDecision]) -> Counter[str]:
    return Counter(str(d.reason) for decision in decisions for d in decision.rerun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="existing clone of the corpus bundle")
    parser.add_argument("--limit", type=int, help="measure only the first N cases")
    parser.add_argument(
        "--population",
        nargs="+",
        choices=("landed", "catch-ups"),
        default=["landed", "catch-ups"],
        help="landed PRs (default: both), and/or every branch that merged main after a sweep",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.repo
        if path is None:
            if not BUNDLE.is_file():
                raise SystemExit(f"corpus bundle not found at {BUNDLE}")
            path = Path(scratch) / "corpus"
            clone_corpus(path)
        failed = False
        for population in args.population:
            try:
                measure(path, args.limit, population)
            except SystemExit as exc:
                failed = failed or bool(exc.code)
        if failed:
            raise SystemExit(1)


def measure(path: Path, limit: int | None, population: str) -> None:
    started = time.monotonic()
    repo = GitRepo(path)
    cache: BlockCache = default_cache(repo)  # parsed master-config blocks, shared by all plans
    reuse_old = reuse_before()
    left_out: Counter[str] = Counter()
    branches = len(git(path, "for-each-ref", "refs/heads/pr/").splitlines())
    if population == "landed":
        cases = find_cases(path, repo, left_out)[:limit]
        print(
            f"== landed PRs. corpus main {repo.resolve('main')[:12]}: {branches} PR branches, "
            f"{len(cases)} sweeps of a landed PR ({len({c.landing for c in cases})} distinct "
            "landings)"
        )
    else:
        cases = find_catchups(path, repo, left_out)[:limit]
        print(
            f"== catch-ups. corpus main {repo.resolve('main')[:12]}: {branches} PR branches, "
            f"{len(cases)} merged main after a sweep head (landed plan: the head's plan "
            "against the main it merged)"
        )
    for why, n in left_out.most_common():
        print(f"  left out {n}: {why}")
    print("harness: {} on both sides (the corpus has no launch scripts, only configs/)")

    skipped: Counter[str] = Counter()
    tallies = {side: (Tally(), Tally()) for side in ("before", "after")}
    decisions: dict[str, list[ReuseDecision]] = {"before": [], "after": []}
    identical = reused_identical = 0
    missed: list[str] = []
    for case in cases:
        sweep_range, landed_range = case.ranges(repo)
        plans = []
        for which, (base_ref, head_ref) in (("sweep", sweep_range), ("landed", landed_range)):
            try:
                result = plan_between(
                    repo, base_ref, head_ref, layout=Settings().layout(), cache=cache
                )
            except GovError as exc:
                skipped[skip_reason(which, exc)] += 1
                break
            plans.append(plan_rows(result.document))
        if len(plans) < 2:
            continue
        swept, landed = plans
        swept_points = {point(row) for row in swept}
        old = before(reuse_old, landed, swept, case.sweep_head)
        new = after(landed, swept, case.sweep_head)
        for side, decision in (("before", old), ("after", new)):
            count(decision, *tallies[side])
            decisions[side].append(decision)
        same = [d for d in new.rows if point(d.row) in swept_points]
        identical += len(same)
        reused_identical += sum(d.reused for d in same)
        label = f"#{case.pr}" if case.pr is not None else "catch-up"
        missed += [
            f"{case.branch} ({label}) {d.row.where} {d.key}: {d.reason} {d.detail}"
            for d in same
            if not d.reused
        ]
        if len(cases) <= 30:  # a few landed PRs: one line each; the catch-ups: totals only
            print(
                f"  {case.branch} {label} sweep {case.sweep_head[:10]}: swept {len(swept)}, "
                f"landed {len(landed)}, identical {len(same)}, reused before → after "
                f"{len(old.reused)} → {len(new.reused)}"
            )

    measured = len(decisions["after"])
    print(f"PRs measured: {measured}   PRs skipped: {sum(skipped.values())}")
    for why, n in sorted(skipped.items()):
        print(f"  skipped {n}: {why}")
    print(f"{'':<16}{'landed':>8}{'reused':>10}{'rerun':>8}{'reused':>10}{'rerun':>8}")
    print(f"{'':<16}{'':>8}{'before':>14}{'':>4}{'after':>14}")
    for index, kind in enumerate(("throughput", "eval")):
        was, now = tallies["before"][index], tallies["after"][index]
        print(
            f"{kind + ' rows':<16}{now.landed:>8}{was.reused:>10}{was.rerun:>8}"
            f"{now.reused:>10}{now.rerun:>8}"
        )
    for side in ("before", "after"):
        print(f"rerun reasons {side}: {dict(reasons(decisions[side]).most_common())}")
    print(
        f"landed rows identical to a swept row (same recipe+conc): {identical}; "
        f"reused after: {reused_identical}"
    )
    print(f"({time.monotonic() - started:.1f} s)")
    if missed:
        print("identical rows not reused:")
        for line in missed:
            print(f"  {line}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
