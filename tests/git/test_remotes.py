"""Remote URLs, read for every remote in one `git config` call: the same
answer as `git config --get remote.NAME.url` for each name."""

from __future__ import annotations

from collections.abc import Callable

from governance.git.repo import GitRepo
from tests.harness import Repo


def test_each_remote_url_is_what_git_config_get_says(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    repo.git("remote", "add", "origin", "https://example.com/a.git")
    repo.git("config", "--add", "remote.origin.url", "https://example.com/b.git")  # last wins
    repo.git("remote", "add", "my.fork", "git@host:me/bench.git")  # a dotted name
    repo.git("config", "remote.Upper.url", "https://example.com/upper.git")  # case kept
    opened = GitRepo(repo.path)
    for name in ("origin", "my.fork", "Upper", "upstream", "upper"):
        expected = repo.git("config", "--get", f"remote.{name}.url", check=False) or None
        assert opened.remotes.url(name) == expected, name
    assert opened.remotes.url("upstream") is None
