"""Every settings value is validated when read: a bad one is exit 2 naming the
file, the key and why (it used to be exit 3, or a check that silently passed)."""

from __future__ import annotations

import pytest

from tests.harness import Repo, run_gov


@pytest.mark.parametrize(
    ("line", "key", "why"),
    [
        ('link-template = "{0}{number}"', "link-template", "{0}"),
        ('link-template = "{foo}{number}"', "link-template", "{foo}"),
        ('link-template = "https://x/{number}/{number}"', "link-template", "exactly once"),
        ('link-template = "https://x/{number:>5}"', "link-template", "formats"),
        ('placeholders = ["{x}"]', "placeholders", "{x}"),
        ('pr-subject-pattern = "("', "pr-subject-pattern", "not a regular expression"),
        ('pr-subject-pattern = "(.*)"', "pr-subject-pattern", "exactly one group"),
        ('pr-subject-pattern = "#(\\\\d+)-(\\\\d+)"', "pr-subject-pattern", "exactly one group"),
        ('changelog = "/etc/passwd"', "changelog", "absolute"),
        ('changelog = "a\\u0000b"', "changelog", "control character"),
        ('changelog = "../outside.yaml"', "changelog", "leaves the repository"),
        ('master-configs = ["configs/a.yaml", "/proc/self/environ"]', "master-configs", "absolute"),
        ('runners = "C:\\\\x"', "runners", "backslash"),
        ('main-branch = "--upload-pack=x"', "main-branch", "not a branch name"),
        ('repository = "not a slug"', "repository", "ORG/NAME"),
    ],
)
def test_bad_setting_is_exit_2_naming_file_key_and_why(
    example_repo: Repo, line: str, key: str, why: str
) -> None:
    example_repo.commit("settings", **{".gov.toml": line + "\n"})  # on the base
    result = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert ".gov.toml" in result.stderr
    assert f"`{key}`" in result.stderr
    assert why in result.stderr


def test_good_settings_still_load(example_repo: Repo) -> None:
    example_repo.write(
        ".gov.toml",
        'link-template = "https://github.com/{repository}/pull/{number}"\n'
        'placeholders = ["XXX", "https://github.com/{repository}/pull/XXX"]\n'
        'pr-subject-pattern = "\\\\(#(?P<n>[0-9]+)\\\\)"\n'
        'results = "/tmp/gov-results"\n',
    )
    example_repo.commit("settings")
    result = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 0, result.stdout + result.stderr


def test_env_setting_is_validated_too(example_repo: Repo) -> None:
    result = run_gov(
        "check", "--no-configs", cwd=example_repo.path, env={"GOV_CHANGELOG": "/etc/passwd"}
    )
    assert result.exit_code == 2
    assert "environment (GOV_*)" in result.stderr and "`changelog`" in result.stderr
