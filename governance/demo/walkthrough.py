"""`gov demo`: the quickstart's main job on the embedded default.

Builds a throwaway repository from the shipped example (`perf-changelog.yaml`,
`configs/`), opens PR #2194 on the local forge, shows `gov check` rejecting
`pr-link: PLACEHOLDER` at the line with the fix, fixes it, lets main move,
then runs `gov prepare-merge --pr 2194` in-process: merge main into the PR,
resolve the changelog, canonicalize the link, check, plan, squash-merge, and
ends with what #2194 measured beside main's newest results (`gov results compare`).
Nothing is left behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from governance.changelog.modes import CheckMode
from governance.check.render import render_text
from governance.check.service import CheckOptions, run_check
from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.forge.local import LocalForge, pr_open
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.report import render_text as render_report
from governance.merge.sweep_service import sweep_after_merge
from governance.merge.sweep_step import SweepAfterMerge, SweepOptions
from governance.results.render import render_text as render_comparison
from governance.results.service import compare_pr
from governance.sweeps.ledger import Ledger
from governance.sweeps.resolve import sweep_paths
from governance.sweeps.reuse import ReuseMode
from governance.sweeps.runfiles import evidence

EXAMPLE_FILES = (
    "perf-changelog.yaml",
    "configs/amd-master.yaml",
    "configs/nvidia-master.yaml",
    "configs/runners.yaml",
)
PR = 2194
BRINGUP = """
- config-keys:
    - dsv4-fp8-mi300x-vllm
    - dsv4-fp8-mi300x-vllm-mtp
  description:
    - "Raise the MI300X DSv4 FP8 1k1k concurrency ceiling after the AITER MoE fix"
  pr-link: PLACEHOLDER
"""
OTHER = """
- config-keys:
    - dsv4-fp8-h200-vllm
    - dsv4-fp8-mi300x-vllm-mtp
  description:
    - "Move H200 DSv4 FP8 and the MI300X MTP variant to vLLM v0.11.3"
  pr-link: XXX
"""
NEW_IMAGE = ("v0.11.2", "v0.11.3")


def example_root() -> Path:
    """The example repository state shipped as package data (in a source
    checkout, symbolic links to this repository's own example files)."""
    root = Path(str(resources.files("governance.resources") / "example"))
    if not all((root / name).is_file() for name in EXAMPLE_FILES):
        raise UsageError(
            f"the example repository is missing from the installed package ({root})",
            "reinstall gov: pip install --force-reinstall gov",
        )
    return root


def _sweep(repo: GitRepo, settings: Settings) -> SweepAfterMerge:
    return SweepAfterMerge(repo, settings, SweepOptions(parallel=4, progress=False))


def _append(repo: GitRepo, text: str) -> None:
    path = repo.root / "perf-changelog.yaml"
    path.write_bytes(path.read_bytes() + text.encode())


def _bump_image(config: Path, key: str) -> None:
    """Main's PR moves config `key` to the new vLLM image (its first image line)."""
    old, new = NEW_IMAGE
    head, found, block = config.read_text().partition(f"\n{key}:\n")
    assert found, f"{key} is not in {config}"
    config.write_text(head + found + block.replace(old, new, 1))


def run_demo(say: Callable[[str], None], keep: Path | None = None) -> bool:
    """The walkthrough in a throwaway repository, or in `keep` (a new or empty
    folder), which is left in place so its last hint can be followed."""
    source = example_root()
    if keep is None:
        workdir = Path(tempfile.mkdtemp(prefix="gov-demo-"))
        try:
            return _demo(source, workdir, say)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise UsageError(
            f"--keep {keep}: not an empty folder", "name a new folder (gov demo creates it)"
        )
    keep.mkdir(parents=True, exist_ok=True)
    ok = _demo(source, keep.resolve(), say)
    say(
        f"== kept in {keep}: try `gov -C {keep} results compare --pr {PR}`, "
        f"`gov -C {keep} runs list --commit main`, `gov -C {keep} log dsv4-fp8-mi300x-vllm`"
    )
    return ok


def _demo(source: Path, workdir: Path, say: Callable[[str], None]) -> bool:
    settings = Settings()
    repo = GitRepo.init(workdir)
    for name in EXAMPLE_FILES:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, workdir / name)
    # The example's launch scripts, where the default `scripts` setting looks.
    shutil.copytree(source / "benchmarks", workdir / settings.scripts)
    repo.worktree.commit_all("Example benchmark repository")
    forge = LocalForge(repo, main_branch="main", repository_slug=settings.repository)
    say(f"== throwaway repository {workdir} (local forge, no token, no cluster)")

    # 1. The bring-up PR appends its entry with a made-up placeholder.
    repo.worktree.checkout("dsv4-mi300x-bringup", create_from="main")
    _append(repo, BRINGUP)
    repo.worktree.commit_all("Raise MI300X DSv4 concurrency")
    pr_open(forge, PR, "dsv4-mi300x-bringup", title="Raise MI300X DSv4 FP8 concurrency")
    say(f"== PR #{PR} opened; `gov check --pr {PR}` (the hook and the CI job run the same):")
    result = run_check(repo, settings, CheckOptions(CheckMode.pr_mode(PR)))
    say(render_text(result))
    if result.verdict.ok:
        return False  # the demo's point is the rejection

    # 2. The author follows the hint.
    path = repo.root / "perf-changelog.yaml"
    path.write_bytes(path.read_bytes().replace(b"pr-link: PLACEHOLDER", b"pr-link: XXX"))
    repo.worktree.commit_all("Use the XXX placeholder")
    result = run_check(repo, settings, CheckOptions(CheckMode.pr_mode(PR)))
    say("== after `pr-link: XXX`:")
    say(render_text(result))

    # 3. The PR's sweep: every row of its plan runs on this machine.
    pr_head = repo.worktree.head_sha()
    head_plan = plan_between(repo, "main", pr_head, layout=settings.layout())
    swept = sweep_after_merge(
        repo,
        settings,
        head_plan.document,
        PR,
        [pr_head],
        "local",
        ReuseMode.RERUN_ALL,
        parallel=4,
        progress=False,
    )
    say(f"== PR #{PR}'s sweep ran {len(swept.decision.rerun)} row(s) on its head (local launcher)")
    if not swept.ok:
        say(swept.render_text())
        return False

    # 4. Main moves: another PR lands first (through the same merge tool) and
    # changes the image of one of #2194's configs.
    repo.worktree.checkout("vllm-bump", create_from="main")
    _append(repo, OTHER)
    _bump_image(repo.root / "configs/amd-master.yaml", "dsv4-fp8-mi300x-vllm-mtp")
    _bump_image(repo.root / "configs/nvidia-master.yaml", "dsv4-fp8-h200-vllm")
    repo.worktree.commit_all("Move DSv4 FP8 to vLLM v0.11.3")
    pr_open(forge, 2195, "vllm-bump", title="Move DSv4 FP8 to vLLM v0.11.3")
    repo.worktree.checkout("main")
    first = prepare_merge(
        repo,
        settings,
        forge,
        PrepareOptions(2195, poll_interval=0.01),
        sweep=_sweep(repo, settings),
    )
    if not first.ok:
        say(render_report(first))
        return False
    say(
        f"== PR #2195 landed on main first ({first.merge_commit[:10]}): the changelogs now "
        "conflict, and the MI300X MTP recipe changed under #2194"
    )

    # 5. `gov prepare-merge --pr 2194`: merge main, resolve, canonicalize, check,
    # plan, reuse what #2194's sweep measured, rerun the rest, merge.
    say(f"== gov prepare-merge --pr {PR}:")
    report = prepare_merge(
        repo, settings, forge, PrepareOptions(PR, poll_interval=0.01), sweep=_sweep(repo, settings)
    )
    say(render_report(report))
    if not report.ok:
        return False
    with Ledger(sweep_paths(repo.root, repo.git_dir, settings).ledger) as ledger:
        landed = ledger.for_commit(report.merge_commit)
        checked = evidence(ledger, [run for _origin, run in landed])
    reused = sum(1 for origin, _run in landed if origin == "reused")
    verified = sum(1 for why in checked.values() if not why)
    say(
        f"== `gov runs list --commit {report.merge_commit[:10]}`: {len(landed)} result rows, "
        f"{len(landed) - reused} measured for the merge, {reused} reused from PR #{PR}'s head; "
        f"{verified} with their files verified"
    )
    tail = (repo.read_blob("main", "perf-changelog.yaml") or b"").decode().rstrip("\n")
    say(f"== PR #{PR} squash-merged as {report.merge_commit[:10]}; main's changelog now ends with:")
    say("\n".join(tail.splitlines()[-14:]))

    # 6. What #2194 measured, beside main's newest result of each config.
    say(f"== gov results compare --pr {PR} (--format markdown|json|html for the PR comment):")
    say(render_comparison(compare_pr(repo, settings, PR)))
    return True
