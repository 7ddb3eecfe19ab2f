"""`gov audit` replays each commit under the configuration it had: master
configs where they lived then, former repository names; bounded by ranges,
--max-count and --since; streamed, with a progress bar on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.check.audit import audit, changelog_commits
from governance.core.settings import load_settings
from governance.git.repo import GitRepo
from tests.conftest import PROJECT, Repo, git
from tests.harness import run_gov

LINK = "https://github.com/{slug}/pull/{n}"
ENTRY = '\n- config-keys:\n    - {key}\n  description:\n    - "Change {n}"\n  pr-link: {link}\n'
UPSTREAM = "SemiAnalysisAI/InferenceX"
CONFIGS = ("amd-master.yaml", "nvidia-master.yaml", "runners.yaml")


def land(repo: Repo, n: int, key: str = "dsv4-fp8-mi300x-vllm", slug: str = UPSTREAM) -> str:
    changelog = repo.path / "perf-changelog.yaml"
    link = LINK.format(slug=slug, n=n)
    changelog.write_text(changelog.read_text() + ENTRY.format(key=key, n=n, link=link))
    return repo.commit(f"Change {n} (#{n})")


@pytest.fixture
def history(make_repo) -> Repo:  # type: ignore[no-untyped-def]
    """A changelog older than its master configs, configs that lived in
    .github/configs/ and moved to configs/, and a repository rename."""
    repo = make_repo("history")
    repo.write("perf-changelog.yaml", (PROJECT / "perf-changelog.yaml").read_bytes())
    repo.commit("Start the changelog")
    land(repo, 11)  # no master config exists yet
    for name in CONFIGS:
        repo.write(f".github/configs/{name}", (PROJECT / "configs" / name).read_bytes())
    repo.commit("Add the master configs")
    land(repo, 12)
    repo.git("mv", ".github/configs", "configs")
    repo.commit("chore: move configs to root level (#20)")
    land(repo, 13, key="dsv4-fp8-mi300x-sglang")  # a real fault: no such config
    repo.write(".gov.toml", 'former-repositories = ["InferenceMAX/InferenceMAX"]\n')
    repo.commit("Remember the former name")
    land(repo, 14, slug="InferenceMAX/InferenceMAX")  # landed before the rename
    return repo


def rows(repo: Repo, rev: str = "HEAD", **bounds: object) -> list:  # type: ignore[type-arg]
    git_repo = GitRepo(repo.path)
    settings = load_settings(git_repo.root)
    commits = changelog_commits(git_repo, settings, rev, **bounds)  # type: ignore[arg-type]
    return list(audit(git_repo, settings, commits, configs=True))


def test_each_commit_is_checked_with_the_configs_it_had(history: Repo) -> None:
    found = {row.pr: row for row in rows(history)}
    assert sorted(found) == [11, 12, 13, 14]
    assert found[11].configs == "absent" and found[11].main.ok  # not a GOV510
    assert found[12].configs == "checked" and found[12].main.ok
    assert found[12].master_configs == (
        ".github/configs/amd-master.yaml",
        ".github/configs/nvidia-master.yaml",
    )
    assert found[13].master_configs == ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
    assert [v.code for v in found[13].main.violations] == ["GOV501"]  # a real fault stays
    assert found[14].main.ok, found[14].main.violations  # the former name, in history


def test_the_replay_holds_a_bounded_number_of_blobs(history: Repo) -> None:
    git_repo = GitRepo(history.path)
    for n in range(15, 100):
        land(history, n)
    settings = load_settings(git_repo.root)
    commits = changelog_commits(git_repo, settings, "HEAD")
    assert all(row.main.ok for row in audit(git_repo, settings, commits[3:], configs=True))
    assert len(git_repo._blob_cache) <= 64 < len(commits) * 2


def test_ranges_max_count_and_since_bound_the_replay(history: Repo) -> None:
    assert [row.pr for row in rows(history, "HEAD~3..HEAD")] == [13, 14]
    assert [row.pr for row in rows(history, max_count=2)] == [13, 14]
    assert rows(history, since="2099-01-01") == []
    assert len(rows(history, since="2000-01-01")) == 4


def test_cli_range_progress_and_bad_revisions(history: Repo) -> None:
    result = run_gov("audit", "HEAD~3..HEAD", "--progress", cwd=history.path)
    assert result.exit_code == 1  # #13 names a config that does not exist
    assert "2 changelog commits checked: 1 fail main mode" in result.stdout
    assert "auditing" in result.stderr  # the progress bar goes to stderr
    quiet = run_gov("audit", "--max-count", "1", "--format", "jsonl", cwd=history.path)
    assert quiet.exit_code == 0 and quiet.stderr == ""
    (row,) = [json.loads(line) for line in quiet.stdout.splitlines()]
    assert row["pr"] == 14 and row["configs"] == "checked"
    full = run_gov("audit", cwd=history.path)
    assert "1 commit(s) had no master config yet" in full.stdout
    for bad in ("HEAD~3..nope", "nope", "HEAD~1...HEAD"):
        refused = run_gov("audit", bad, cwd=history.path)
        assert refused.exit_code == 2, (bad, refused.stderr)


def test_corpus_main_audit_with_configs_reports_only_real_violations(
    corpus_clone: Path,
) -> None:
    """The whole corpus main, configs on: the master configs appeared in
    #1992, so earlier commits are replayed without key resolution instead of
    failing GOV510; the GOV402s left are placeholders and foreign links that
    really landed on main."""
    repo = GitRepo(corpus_clone)
    settings = load_settings(repo.root)
    commits = changelog_commits(repo, settings, "main")
    codes: dict[str, int] = {}
    absent = 0
    for row in audit(repo, settings, commits, configs=True):
        absent += row.configs == "absent"
        for code in {v.code for v in row.main.violations}:
            codes[code] = codes.get(code, 0) + 1
    assert "GOV510" not in codes
    assert codes.get("GOV402") == 22
    assert (
        absent
        == len(
            git(
                corpus_clone,
                "log",
                "--first-parent",
                "--format=%H",
                "de20ba0^",
                "--",
                "perf-changelog.yaml",
            ).split()
        )
        - 1
    )
