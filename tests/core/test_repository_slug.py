"""Which repository a changelog belongs to, in a fork clone: the changelog's
own links first, then an `upstream` remote, then `origin` (a fork's), unless
a setting names it; former names are history only."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.core.diagnostics import UsageError
from governance.core.links import LinkKind, LinkPolicy, repository_from_links
from governance.core.settings import load_settings
from tests.conftest import Repo, git
from tests.harness import run_gov

UPSTREAM = "SemiAnalysisAI/InferenceX"
ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Retune"\n  pr-link: https://github.com/{slug}/pull/2300\n'
)


@pytest.fixture
def fork(example_repo: Repo, tmp_path: Path) -> Repo:
    """alice's clone: `origin` is her fork, the changelog links upstream."""
    path = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(example_repo.path), str(path))
    git(path, "remote", "set-url", "origin", "https://github.com/alice/InferenceX.git")
    repo = Repo.__new__(Repo)
    repo.path = path
    return repo


def append(repo: Repo, slug: str) -> None:
    changelog = repo.path / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text() + ENTRY.format(slug=slug))


def test_a_fork_clone_accepts_upstream_links_and_suggests_them(fork: Repo) -> None:
    append(fork, UPSTREAM)
    ok = run_gov("check", "--worktree", "--main", "--no-configs", cwd=fork.path)
    assert ok.exit_code == 0, ok.stdout
    fork.git("checkout", "-q", "--", "perf-changelog.yaml")
    append(fork, "alice/InferenceX")
    bad = run_gov("check", "--worktree", "--main", "--no-configs", cwd=fork.path)
    assert bad.exit_code == 1 and ": GOV402 " in bad.stdout
    assert f"https://github.com/{UPSTREAM}/pull/1234" in bad.stdout
    assert "alice/InferenceX/pull/1234" not in bad.stdout


def test_the_order_links_then_upstream_then_origin_and_a_setting_wins(tmp_path: Path) -> None:
    def slug(data: bytes | None, upstream: str | None = None, **env: str) -> tuple[str, str]:
        settings = load_settings(
            tmp_path,
            remote_url={"origin": "git@github.com:alice/InferenceX.git", "upstream": upstream}.get,
            read_changelog=lambda _path, _main: data,
            environ=env,
        )
        return settings.repository, settings.repository_from

    linked = f"- config-keys: [a]\n  pr-link: https://github.com/{UPSTREAM}/pull/7\n".encode()
    up = "https://github.com/up/Stream"
    assert slug(linked, up) == (UPSTREAM, "perf-changelog.yaml links")
    assert slug(b"[]\n", up) == ("up/Stream", "upstream remote")
    assert slug(None) == ("alice/InferenceX", "origin remote")
    assert slug(linked, up, GOV_REPOSITORY="me/Mine") == (
        "me/Mine",
        "environment (GOV_REPOSITORY)",
    )


def test_links_to_other_projects_do_not_decide_the_repository() -> None:
    data = b"".join(
        b"  pr-link: https://github.com/%s/pull/%d\n" % (slug, n)
        for n, slug in enumerate(
            [b"Org/Main"] * 5 + [b"vllm-project/vllm", b"sgl-project/sglang"], start=1
        )
    )
    assert repository_from_links(data) == "Org/Main"
    assert repository_from_links(b"  pr-link: XXX\n") is None


def test_former_names_are_canonical_only_in_the_history_policy(tmp_path: Path) -> None:
    (tmp_path / ".gov.toml").write_text(
        f'repository = "{UPSTREAM}"\nformer-repositories = ["InferenceMAX/InferenceMAX"]\n'
    )
    settings = load_settings(tmp_path)
    old = "https://github.com/InferenceMAX/InferenceMAX/pull/348"
    assert settings.policy().classify(old) is LinkKind.OTHER
    assert settings.history_policy().classify(old) is LinkKind.CANONICAL
    assert settings.history_policy().number(old) == 348
    assert LinkPolicy(UPSTREAM).number(f"https://github.com/{UPSTREAM}/pull/9") == 9


def test_former_name_is_refused_for_a_new_entry(fork: Repo) -> None:
    fork.write(".gov.toml", 'former-repositories = ["InferenceMAX/InferenceMAX"]\n')
    append(fork, "InferenceMAX/InferenceMAX")
    result = run_gov("check", "--worktree", "--main", "--no-configs", cwd=fork.path)
    assert result.exit_code == 1 and ": GOV402 " in result.stdout


def test_a_malformed_former_name_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".gov.toml").write_text('former-repositories = ["InferenceMAX"]\n')
    with pytest.raises(UsageError, match="is not ORG/NAME"):
        load_settings(tmp_path)
