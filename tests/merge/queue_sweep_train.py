"""Six PRs forked from one main of the example repository (launch scripts
included), each swept at its head by `gov launch` as its own CI would, for
the queue's end-to-end tests with the local launcher:

* 201, 202, 203: one SKU each (B200, H200, MI300X); 203 also bumps the image
  of `dsv4-fp8-mi300x-vllm`, so every row of that config gets a new recipe;
* 204 changes the same config's 8k/1k search space (TP 8 -> 4) and also
  reruns `dsr1-fp8-mi300x-sglang`: after 203 lands, its 1k/1k rows are what
  203 measured, its 8k/1k rows are new, its sglang rows are its own;
* 205's MTP launch script exits 1 (its sweep failed, and fails again);
* 206 bumps the same image line as 203 to another tag: a `configs/` conflict
  once 203 has landed;
* 207 (built on request: the PR landed by hand mid-run) raises the H200
  config's concurrency ceiling to 128: 202's rows gain a conc-128 row, the
  others keep their identity.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from governance.core.settings import Settings
from governance.core.state import StateLayout
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from governance.sweeps.ledger import Ledger, LedgerRun
from tests.harness import Repo, run_gov

AMD = "configs/amd-master.yaml"
NVIDIA = "configs/nvidia-master.yaml"
MTP_SCRIPT = "launch/benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x_mtp.sh"
IMAGE = "image: vllm/vllm-openai-rocm:v0.11.2"
SEARCH_8K = "- { tp: 8, conc-start: 4, conc-end: 64 }"
ENTRY = '\n- config-keys:\n{keys}  description:\n    - "PR {pr}"\n  pr-link: XXX\n'

# What each PR appends to the changelog.
KEYS = {
    201: ("dsr1-fp4-b200-sglang",),
    202: ("dsv4-fp8-h200-vllm",),
    203: ("dsv4-fp8-mi300x-vllm",),
    204: ("dsv4-fp8-mi300x-vllm", "dsr1-fp8-mi300x-sglang"),
    205: ("dsv4-fp8-mi300x-vllm-mtp",),
    206: ("dsv4-fp8-mi300x-vllm",),
    207: ("dsv4-fp8-h200-vllm",),
}
SIX = (201, 202, 203, 204, 205, 206)


def _first_after(text: str, anchor: str, old: str, new: str) -> str:
    """`text` with the first `old` after `anchor` replaced by `new`."""
    head, mark, tail = text.partition(anchor)
    assert mark and old in tail, (anchor, old)
    return head + mark + tail.replace(old, new, 1)


def _edits(pr: int, repo: Repo) -> dict[str, str]:
    """The files a PR changes besides the changelog."""
    amd = (repo.path / AMD).read_text()
    if pr == 203:
        return {AMD: _first_after(amd, "dsv4-fp8-mi300x-vllm:", IMAGE, IMAGE[:-6] + "v0.12.0")}
    if pr == 206:
        return {AMD: _first_after(amd, "dsv4-fp8-mi300x-vllm:", IMAGE, IMAGE[:-6] + "v0.13.0")}
    if pr == 204:
        return {
            AMD: _first_after(
                amd, "dsv4-fp8-mi300x-vllm:", SEARCH_8K, SEARCH_8K.replace("8", "4", 1)
            )
        }
    if pr == 207:
        nvidia = (repo.path / NVIDIA).read_text()
        return {
            NVIDIA: _first_after(nvidia, "dsv4-fp8-h200-vllm:", "conc-end: 64", "conc-end: 128")
        }
    if pr == 205:
        return {MTP_SCRIPT: "#!/bin/sh\necho 'no GPU answers' >&2\nexit 1\n"}
    return {}


@dataclass
class SweptTrain:
    repo: Repo
    base: str  # main's tip before any car
    heads: dict[int, str]  # each PR's head

    @property
    def path(self) -> Path:
        return self.repo.path

    def git(self, *args: str) -> str:
        return self.repo.git(*args)

    def gitrepo(self) -> GitRepo:
        return GitRepo(self.path)

    def runs(self) -> list[LedgerRun]:
        """Every run the ledger holds, oldest first."""
        with Ledger(StateLayout(self.gitrepo().git_dir).runs_db) as ledger:
            return ledger.runs()

    def landed(self) -> list[str]:
        """Main's first-parent commits since the train started, oldest first."""
        out = self.git("rev-list", "--first-parent", "--reverse", f"{self.base}..main")
        return out.split()

    def subjects(self) -> list[str]:
        return [self.git("log", "-1", "--format=%s", sha) for sha in self.landed()]

    def measured(self) -> dict[str, int]:
        """Each row identity the ledger holds a succeeded run of, with that run's PR."""
        return {
            r.identity: r.pr or 0 for r in self.runs() if r.identity and r.status == "succeeded"
        }


def sweep_head(repo: Repo, pr: int, base: str, plan: Path) -> None:
    """The PR's own sweep: `gov launch` of its head plan from its checkout."""
    head = repo.sha("HEAD")
    document = plan_between(GitRepo(repo.path), base, head, layout=Settings().layout()).document
    plan.write_text(json.dumps(document))
    ran = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--pr", str(pr))
    expected = 1 if pr == 205 else 0  # 205's script exits 1
    assert ran.exit_code == expected, ran.stdout + ran.stderr


def build_swept_train(repo: Repo, scratch: Path, prs: tuple[int, ...] = SIX) -> SweptTrain:
    """The PRs of the module docstring, opened on the local forge and swept."""
    repo.configure_identity()
    base = repo.sha("main")
    heads = {}
    for pr in prs:
        keys = KEYS[pr]
        repo.git("checkout", "-q", "-b", f"pr-{pr}", base)
        files = _edits(pr, repo)
        text = (repo.path / "perf-changelog.yaml").read_text()
        files["perf-changelog.yaml"] = text + ENTRY.format(
            keys="".join(f"    - {k}\n" for k in keys), pr=pr
        )
        for name, data in files.items():
            repo.write(name, data)
        heads[pr] = repo.commit(f"PR {pr}")
        opened = run_gov(
            "-C", str(repo.path), "pr", "open", "--number", str(pr), "--branch", f"pr-{pr}"
        )
        assert opened.exit_code == 0, opened.stderr
        sweep_head(repo, pr, base, scratch / f"plan-{pr}.json")
    repo.git("checkout", "-q", "main")
    return SweptTrain(repo, base, heads)
