"""A local-forge title with a line break cannot push `(#N)` out of the squash
subject (where `gov audit` reads the PR number)."""

from __future__ import annotations

import pytest

from tests.harness import Repo, run_gov

ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n    - d\n"
    "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/31\n"
)


@pytest.mark.parametrize("title", ["Retune\nMI300X", "Retune\r\n\r\nbody", "Retune\u2028x", "\n"])
def test_a_multiline_title_keeps_the_number_in_the_subject(example_repo: Repo, title: str) -> None:
    repo = example_repo
    repo.configure_identity()
    log = repo.path / "perf-changelog.yaml"
    text = log.read_text() + ENTRY
    repo.branch("pr-31")
    repo.commit_on("pr-31", {"perf-changelog.yaml": text}, "retune")
    assert (
        run_gov(
            "pr", "open", "--number", "31", "--branch", "pr-31", "--title", title, cwd=repo.path
        ).exit_code
        == 0
    )
    from governance.forge.local import LocalForge

    forge = LocalForge(repo.gitrepo(), repository_slug="SemiAnalysisAI/InferenceX")
    forge.merge_pull(31, repo.sha("pr-31"))
    subject = repo.git("log", "-1", "--format=%s", "main")
    body = repo.git("log", "-1", "--format=%b", "main")
    assert subject.endswith("(#31)") and body == "", (subject, body)
    audit = run_gov("audit", "--format", "jsonl", "--no-configs", "--max-count", "1", cwd=repo.path)
    assert '"pr": 31' in audit.stdout, audit.stdout
