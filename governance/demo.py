"""`gov demo`: the quickstart's main job on the embedded default.

Builds a throwaway repository from the shipped example (`perf-changelog.yaml`,
`configs/`), opens PR #2194 on the local forge, shows `gov check` rejecting
`pr-link: PLACEHOLDER` at the line with the fix, fixes it, lets main move,
then runs `gov prepare-merge --pr 2194` in-process: merge main into the PR,
resolve the changelog, canonicalize the link, check, plan, squash-merge.
Nothing is left behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from governance.changelog.rules import CheckMode
from governance.checking import CheckOptions, run_check
from governance.diagnostics import UsageError
from governance.forge.local import LocalForge, pr_open
from governance.gitrepo import GitRepo
from governance.merging.prepare import PrepareOptions, prepare_merge
from governance.merging.report import render_text as render_report
from governance.report import render_text
from governance.settings import Settings

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
  description:
    - "Retune H200 DSv4 FP8 with vLLM v0.11.2 chunked prefill"
  pr-link: XXX
"""


def example_root() -> Path:
    root = Path(__file__).resolve().parents[1]
    if not all((root / name).is_file() for name in EXAMPLE_FILES):
        raise UsageError(
            f"the example repository state is not next to the package ({root})",
            "run gov demo from a source checkout installed with `pip install -e .`",
        )
    return root


def _append(repo: GitRepo, text: str) -> None:
    path = repo.root / "perf-changelog.yaml"
    path.write_bytes(path.read_bytes() + text.encode())


def run_demo(say: Callable[[str], None]) -> bool:
    source = example_root()
    workdir = Path(tempfile.mkdtemp(prefix="gov-demo-"))
    try:
        return _demo(source, workdir, say)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _demo(source: Path, workdir: Path, say: Callable[[str], None]) -> bool:
    settings = Settings()
    repo = GitRepo.init(workdir)
    for name in EXAMPLE_FILES:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, workdir / name)
    repo.commit_all("Example benchmark repository")
    forge = LocalForge(repo, main_branch="main", repository_slug=settings.repository)
    say(f"== throwaway repository {workdir} (local forge, no token, no cluster)")

    # 1. The bring-up PR appends its entry with a made-up placeholder.
    repo.checkout("dsv4-mi300x-bringup", create_from="main")
    _append(repo, BRINGUP)
    repo.commit_all("Raise MI300X DSv4 concurrency")
    pr_open(forge, PR, "dsv4-mi300x-bringup", title="Raise MI300X DSv4 FP8 concurrency")
    say(f"== PR #{PR} opened; `gov check --pr {PR}` (the hook and the CI job run the same):")
    result = run_check(repo, settings, CheckOptions(CheckMode.pr_mode(PR)))
    say(render_text(result))
    if result.verdict.ok:
        return False  # the demo's point is the rejection

    # 2. The author follows the hint.
    path = repo.root / "perf-changelog.yaml"
    path.write_bytes(path.read_bytes().replace(b"pr-link: PLACEHOLDER", b"pr-link: XXX"))
    repo.commit_all("Use the XXX placeholder")
    result = run_check(repo, settings, CheckOptions(CheckMode.pr_mode(PR)))
    say("== after `pr-link: XXX`:")
    say(render_text(result))

    # 3. Main moves: another PR lands first (through the same merge tool).
    repo.checkout("h200-retune", create_from="main")
    _append(repo, OTHER)
    repo.commit_all("Retune H200 DSv4")
    pr_open(forge, 2195, "h200-retune", title="Retune H200 DSv4 FP8")
    repo.checkout("main")
    first = prepare_merge(repo, settings, forge, PrepareOptions(2195, poll_interval=0.01))
    if not first.ok:
        say(render_report(first))
        return False
    say(
        f"== PR #2195 landed on main first ({first.merge_commit[:10]}): the changelogs now conflict"
    )

    # 4. `gov prepare-merge --pr 2194`: merge main, resolve, canonicalize, check, plan, merge.
    say(f"== gov prepare-merge --pr {PR}:")
    report = prepare_merge(repo, settings, forge, PrepareOptions(PR, poll_interval=0.01))
    say(render_report(report))
    if not report.ok:
        return False
    tail = (repo.read_blob("main", "perf-changelog.yaml") or b"").decode().rstrip("\n")
    say(f"== PR #{PR} squash-merged as {report.merge_commit[:10]}; main's changelog now ends with:")
    say("\n".join(tail.splitlines()[-14:]))
    return True
