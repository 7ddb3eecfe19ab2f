"""Editor support: the README's advice keeps history bytes intact, and
`gov schema --check` names what is missing."""

from __future__ import annotations

import json
import re
from fnmatch import fnmatch

from tests.cli.test_cli import APPEND
from tests.harness import PROJECT, Repo, run_gov


def readme_vscode_settings() -> dict:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Editor support") : readme.index("## Layout")]
    (snippet,) = re.findall(r"```json\n(.*?)```", section, re.DOTALL)
    return json.loads(snippet)


def test_first_line_schema_comment_breaks_history(example_repo: Repo) -> None:
    """Why the README does not advise it: the comment changes history bytes."""
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(
        b"# yaml-language-server: $schema=schemas/perf-changelog.schema.json\n"
        + changelog.read_bytes()
        + APPEND.format(link="XXX").encode()
    )
    result = run_gov("check", "--worktree", "--pr", "2194", cwd=example_repo.path)
    assert result.exit_code == 1 and "GOV304" in result.stdout, result.stdout


def test_readme_editor_settings_map_the_written_schema_to_the_changelog(
    example_repo: Repo,
) -> None:
    """The README's `yaml.schemas` names a schema `gov schema --write` writes
    and a pattern that matches the changelog; the changelog stays untouched,
    so the check passes."""
    mapping = readme_vscode_settings()["yaml.schemas"]
    written = run_gov("schema", "--write", cwd=example_repo.path)
    assert written.exit_code == 0, written.stderr
    (schema, pattern), *_ = mapping.items()
    assert (example_repo.path / schema).is_file()
    assert fnmatch("perf-changelog.yaml", pattern)
    assert json.loads((example_repo.path / schema).read_text())["type"] == "array"
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    example_repo.write(".vscode/settings.json", json.dumps({"yaml.schemas": mapping}))
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + APPEND.format(link="XXX").encode())
    result = run_gov("check", "--worktree", "--pr", "2194", cwd=example_repo.path)
    assert result.exit_code == 0, result.stdout


def test_schema_check_says_missing_when_the_folder_is_absent(example_repo: Repo) -> None:
    result = run_gov("schema", "--check", cwd=example_repo.path)
    assert result.exit_code == 1
    assert "schemas: missing (no such folder)" in result.stderr, result.stderr
    assert "gov schema --write" in result.stderr


def test_schema_check_names_missing_and_drifted_files(example_repo: Repo) -> None:
    assert run_gov("schema", "--write", cwd=example_repo.path).exit_code == 0
    (example_repo.path / "schemas" / "matrix-plan.schema.json").unlink()
    (example_repo.path / "schemas" / "perf-changelog.schema.json").write_text("{}\n")
    result = run_gov("schema", "--check", cwd=example_repo.path)
    assert result.exit_code == 1
    assert "matrix-plan.schema.json: missing" in result.stderr
    assert "perf-changelog.schema.json: out of date with the models" in result.stderr
    assert run_gov("schema", "--write", cwd=example_repo.path).exit_code == 0
    assert run_gov("schema", "--check", cwd=example_repo.path).exit_code == 0
