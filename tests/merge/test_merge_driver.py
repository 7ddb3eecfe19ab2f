"""The changelog merge driver through real `git merge` / `git rebase` in
temporary repositories, after `gov install-merge-driver`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.git.repo import GitRepo
from governance.merge.driver import (
    MainSide,
    attributes_line,
    driver_command,
    run_driver,
    write_atomically,
)
from tests.changelog.test_edit import BASE, POLICY, entry, link, log
from tests.harness import Repo, Result, git, run_gov, run_process

LOG = "perf-changelog.yaml"


def gov(cwd: Path, exe: str, *args: str) -> Result:
    """The installed console script: install-merge-driver records the path of
    the gov that runs it, which git then invokes at merge time."""
    return run_process([exe, *args], cwd=cwd)


def git_run(repo: Repo, *args: str) -> Result:
    """git with the test identity, keeping the exit status and stderr (git
    itself runs the installed driver as a process)."""
    return run_process(["git", "-c", "commit.gpgsign=false", *args], cwd=repo.path)


def changelog(repo: Repo) -> bytes:
    return (repo.path / LOG).read_bytes()


def commit_on(repo: Repo, branch: str, data: bytes, message: str, *, start: str = "main") -> str:
    if repo.git("branch", "--list", branch):
        repo.git("checkout", "-q", branch)
    else:
        repo.git("checkout", "-q", "-b", branch, start)
    return repo.commit(message, **{LOG: data})


@pytest.fixture
def driven(make_repo: Callable[..., Repo], gov_exe: str) -> Repo:
    """A repository on `main` with the driver installed and .gitattributes committed."""
    repo = make_repo("driven")
    repo.commit("history", **{LOG: BASE, "notes.txt": "one\ntwo\nthree\nfour\nfive\n"})
    # In process, naming the installed script that git will run at merge time
    # (recording the running gov's own path is tested through the script below).
    done = run_gov("install-merge-driver", "--command", gov_exe, cwd=repo.path)
    assert done.exit_code == 0, done.stderr
    assert repo.git("config", "merge.gov.driver") == driver_command(gov_exe)
    repo.commit("route the changelog to the gov merge driver")
    return repo


# -- install ------------------------------------------------------------------------


def test_install_is_idempotent_and_check_reports(make_repo, gov_exe: str) -> None:
    repo = make_repo()
    repo.commit("history", **{LOG: BASE})
    before = gov(repo.path, gov_exe, "install-merge-driver", "--check")
    assert before.exit_code == 1
    assert "missing: would set git config merge.gov.driver" in before.stdout
    assert not (repo.path / ".gitattributes").exists()  # --check writes nothing
    assert repo.git("config", "--local", "--get", "merge.gov.driver", check=False) == ""

    first = gov(repo.path, gov_exe, "install-merge-driver")
    assert first.exit_code == 0, first.stderr
    assert "merge driver installed" in first.stdout
    # The absolute path of the gov that ran, so git finds the same gov at merge time.
    assert repo.git("config", "--local", "merge.gov.driver") == driver_command(gov_exe)
    assert os.path.isabs(gov_exe) and repo.git("config", "merge.gov.driver").startswith(gov_exe)
    assert repo.git("config", "--local", "merge.gov.name").startswith("gov:")
    attributes = (repo.path / ".gitattributes").read_bytes()
    assert attributes == b"/perf-changelog.yaml merge=gov\n"
    assert repo.git("check-attr", "merge", "--", LOG) == f"{LOG}: merge: gov"

    second = gov(repo.path, gov_exe, "install-merge-driver")
    assert second.exit_code == 0
    assert "nothing changed" in second.stdout
    assert (repo.path / ".gitattributes").read_bytes() == attributes
    assert gov(repo.path, gov_exe, "install-merge-driver", "--check").exit_code == 0


def test_install_into_info_attributes_and_existing_files(make_repo) -> None:
    repo = make_repo()
    repo.commit("history", **{LOG: BASE, ".gitattributes": "*.png binary"})  # no final newline
    done = run_gov("install-merge-driver", "--attributes", "info", cwd=repo.path)
    assert done.exit_code == 0, done.stderr
    assert (repo.path / ".gitattributes").read_text() == "*.png binary"  # untouched
    info = repo.path / ".git" / "info" / "attributes"
    assert info.read_text().endswith("/perf-changelog.yaml merge=gov\n")
    assert repo.git("check-attr", "merge", "--", LOG) == f"{LOG}: merge: gov"
    # Already routed (by info/attributes): asking for .gitattributes adds nothing.
    again = run_gov("install-merge-driver", cwd=repo.path)
    assert "nothing changed" in again.stdout
    assert (repo.path / ".gitattributes").read_text() == "*.png binary"

    other = make_repo()
    other.commit("history", **{LOG: BASE, ".gitattributes": "*.png binary"})
    assert run_gov("install-merge-driver", cwd=other.path).exit_code == 0
    assert (other.path / ".gitattributes").read_text() == (
        "*.png binary\n/perf-changelog.yaml merge=gov\n"
    )


def test_a_branch_forked_before_gitattributes_merges_main_with_the_driver(
    make_repo, gov_exe: str
) -> None:
    """Adoption day: PRs open before `.gitattributes` landed. Git reads the
    attribute from the branch merged into (the PR's, without the line), so
    only `.git/info/attributes`, which install also writes, routes it."""
    repo = make_repo()
    repo.commit("history", **{LOG: BASE})
    commit_on(repo, "pr", log(BASE, entry("pr")), "PR appends")
    repo.git("checkout", "-q", "main")
    done = gov(repo.path, gov_exe, "install-merge-driver")
    assert done.exit_code == 0, done.stderr
    assert "to .git/info/attributes (git reads it on every branch" in done.stdout
    repo.commit("route the changelog to the gov merge driver")
    main_bytes = log(BASE, entry("main"))
    commit_on(repo, "main", main_bytes, "main appends")
    repo.git("checkout", "-q", "pr")
    assert not (repo.path / ".gitattributes").exists()
    merged = git_run(repo, "merge", "--no-edit", "main")
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    assert changelog(repo) == log(main_bytes, entry("pr"))  # main verbatim, then the PR's
    again = gov(repo.path, gov_exe, "install-merge-driver")
    assert "nothing changed" in again.stdout
    info = (repo.path / ".git" / "info" / "attributes").read_text()
    assert info.count("/perf-changelog.yaml merge=gov") == 1
    # Without the info line, the same merge is git's text merge: a conflict.
    (repo.path / ".git" / "info" / "attributes").write_text("")
    repo.git("reset", "-q", "--hard", "HEAD~1")
    assert git_run(repo, "merge", "--no-edit", "main").exit_code != 0


def test_install_with_plain_command_and_quoting(make_repo) -> None:
    repo = make_repo()
    repo.commit("history", **{LOG: BASE})
    assert run_gov("install-merge-driver", "--command", "gov", cwd=repo.path).exit_code == 0
    assert repo.git("config", "merge.gov.driver") == "gov merge-driver %O %A %B %P"
    assert driver_command("/opt/my tools/gov") == "'/opt/my tools/gov' merge-driver %O %A %B %P"
    assert attributes_line("logs/perf changelog.yaml") == '"/logs/perf changelog.yaml" merge=gov'


# -- merges through git ---------------------------------------------------------------


def test_two_prs_appending_at_once_both_merge_cleanly(driven: Repo) -> None:
    commit_on(driven, "pr-a", log(BASE, entry("pa")), "PR a")
    commit_on(driven, "pr-b", log(BASE, entry("pb")), "PR b")
    driven.git("checkout", "-q", "main")
    first = git_run(driven, "merge", "--no-ff", "--no-edit", "pr-a")
    assert first.exit_code == 0, first.stderr
    main_bytes = changelog(driven)
    second = git_run(driven, "merge", "--no-ff", "--no-edit", "pr-b")
    assert second.exit_code == 0, second.stdout + second.stderr
    merged = changelog(driven)
    assert merged.startswith(main_bytes)  # main's bytes kept, whitespace and all
    assert merged == log(BASE, entry("pa"), entry("pb"))  # one empty line between entries
    assert driven.git("status", "--porcelain") == ""


def test_merging_main_into_a_pr_branch_puts_main_first(driven: Repo) -> None:
    commit_on(driven, "pr-b", log(BASE, entry("pb")), "PR b")
    main_bytes = log(BASE, entry("landed", link(7)))
    commit_on(driven, "main", main_bytes, "PR 7 landed (#7)")
    driven.git("checkout", "-q", "pr-b")
    done = git_run(driven, "merge", "--no-edit", "main")
    assert done.exit_code == 0, done.stderr
    assert changelog(driven) == main_bytes + b"\n" + entry("pb")  # placeholder kept


def test_rebasing_a_pr_onto_main_keeps_main_first(driven: Repo) -> None:
    commit_on(driven, "pr-b", log(BASE, entry("pb")), "PR b")
    main_bytes = log(BASE, entry("landed", link(7)))
    commit_on(driven, "main", main_bytes, "PR 7 landed (#7)")
    driven.git("checkout", "-q", "pr-b")
    done = git_run(driven, "rebase", "main")
    assert done.exit_code == 0, done.stderr
    assert changelog(driven) == main_bytes + b"\n" + entry("pb")


def test_merge_tree_finds_main_by_content(driven: Repo) -> None:
    """`git merge-tree PR main` with main checked out: ours is the PR here,
    and the driver tells so from the bytes (they are main's tip changelog)."""
    commit_on(driven, "pr-b", log(BASE, entry("pb")), "PR b")
    main_bytes = log(BASE, entry("landed", link(7)))
    commit_on(driven, "main", main_bytes, "PR 7 landed (#7)")
    for ours, theirs in (("pr-b", "main"), ("main", "pr-b")):
        tree = driven.git("merge-tree", "--write-tree", ours, theirs)
        merged = driven.git("cat-file", "-p", f"{tree}:{LOG}")
        assert merged.encode() + b"\n" == main_bytes + b"\n" + entry("pb"), (ours, theirs)


def test_when_main_moved_on_the_situation_decides(driven: Repo) -> None:
    """Merging an older main commit into a PR: neither side is main's tip
    changelog, so the checked-out branch decides (a PR branch: main is theirs)."""
    commit_on(driven, "pr-b", log(BASE, entry("pb")), "PR b")
    older = log(BASE, entry("m1", link(7)))
    commit_on(driven, "main", older, "PR 7 (#7)")
    commit_on(driven, "main", log(older, entry("m2", link(8))), "PR 8 (#8)")
    driven.git("checkout", "-q", "pr-b")
    done = git_run(driven, "merge", "--no-edit", "main~1")
    assert done.exit_code == 0, done.stderr
    assert changelog(driven) == older + b"\n" + entry("pb")


def test_without_the_driver_config_the_same_appends_conflict(driven: Repo) -> None:
    """The control case: .gitattributes alone does nothing (git ignores an
    undefined driver), and git's text merge stops on two appends."""
    driven.git("config", "--local", "--remove-section", "merge.gov")
    commit_on(driven, "pr-a", log(BASE, entry("pa")), "PR a")
    commit_on(driven, "main", log(BASE, entry("m")), "main")
    done = git_run(driven, "merge", "--no-edit", "pr-a")
    assert done.exit_code != 0
    assert "gov" not in done.stderr
    assert b"<<<<<<< HEAD" in changelog(driven)


def test_pr_correcting_a_link_while_main_appends(driven: Repo) -> None:
    corrected = BASE.replace(link(1).encode(), link(11).encode())
    commit_on(driven, "fix-link", corrected, "correct entry 1's link")
    commit_on(driven, "main", log(BASE, entry("m", link(8))), "PR 8 (#8)")
    done = git_run(driven, "merge", "--no-ff", "--no-edit", "fix-link")
    assert done.exit_code == 0, done.stderr
    # Not an append: gov says why and hands over to git's text merge, which is clean.
    assert f"{LOG}:5:1 (PR side): GOV610" in done.stderr
    assert "merged it cleanly" in done.stderr
    assert changelog(driven) == log(corrected, entry("m", link(8)))


def test_correcting_the_last_link_while_main_appends_is_a_conflict(driven: Repo) -> None:
    """The text merge sees two changes at the end of the file; the user gets
    git's conflict and `gov resolve-conflict` carries the correction over."""
    corrected = BASE.replace(link(2).encode(), link(22).encode())
    commit_on(driven, "fix-link", corrected, "correct entry 2's link")
    commit_on(driven, "main", log(BASE, entry("m", link(8))), "PR 8 (#8)")
    driven.git("checkout", "-q", "fix-link")
    done = git_run(driven, "merge", "--no-edit", "main")
    assert done.exit_code != 0
    assert f"{LOG}:11:1 (PR side): GOV610" in done.stderr
    assert "gov resolve-conflict" in done.stderr
    assert b"<<<<<<< ours\n" in changelog(driven)


def test_pr_whose_entry_already_landed_on_main(driven: Repo) -> None:
    commit_on(driven, "pr-9", log(BASE, entry("p")), "PR 9")
    landed = log(BASE, entry("p", link(9)))  # squash-merged with the canonical link
    commit_on(driven, "main", landed, "PR 9 (#9)")
    driven.git("checkout", "-q", "pr-9")
    done = git_run(driven, "merge", "--no-edit", "main")
    assert done.exit_code == 0, done.stderr
    assert changelog(driven) == landed  # not appended twice
    assert "PR entry 3 is already on main (main entry 3)" in done.stderr


def test_refused_merge_degrades_to_an_ordinary_conflict(driven: Repo) -> None:
    ours = BASE.replace(b"change a", b"change a on main")
    theirs = log(BASE.replace(b"change a", b"change a in the PR"), entry("p"))
    commit_on(driven, "pr-x", theirs, "PR x rewrites history")
    commit_on(driven, "main", ours, "main rewrites history")
    done = git_run(driven, "merge", "--no-edit", "pr-x")
    assert done.exit_code != 0
    assert f"CONFLICT (content): Merge conflict in {LOG}" in done.stdout
    # Located reasons from gov, then git's usual conflict.
    assert f"{LOG}:4:1 (main side): GOV610 the main side changed" in done.stderr
    assert f"{LOG}:4:1 (PR side): GOV610 the PR side changed" in done.stderr
    assert "gov resolve-conflict" in done.stderr
    text = changelog(driven).decode()
    assert "<<<<<<< ours\n" in text and "=======\n" in text and ">>>>>>> theirs\n" in text
    assert '    - "change a on main"\n' in text and '    - "change a in the PR"\n' in text
    stages = driven.git("ls-files", "-u", "--", LOG).splitlines()
    assert sorted(line.split()[2] for line in stages) == ["1", "2", "3"]


def test_unrelated_files_still_merge_normally(driven: Repo) -> None:
    driven.git("checkout", "-q", "-b", "pr-n", "main")
    driven.commit(
        "PR n", **{LOG: log(BASE, entry("pn")), "notes.txt": "ONE\ntwo\nthree\nfour\nfive\n"}
    )
    driven.git("checkout", "-q", "main")
    driven.commit(
        "main", **{LOG: log(BASE, entry("m")), "notes.txt": "one\ntwo\nthree\nfour\nFIVE\n"}
    )
    done = git_run(driven, "merge", "--no-edit", "pr-n")
    assert done.exit_code == 0, done.stderr
    assert (driven.path / "notes.txt").read_text() == "ONE\ntwo\nthree\nfour\nFIVE\n"
    assert changelog(driven) == log(BASE, entry("m"), entry("pn"))

    driven.git("checkout", "-q", "-b", "pr-o", "main")
    driven.commit("PR o", **{"notes.txt": "ONE\ntwo\nthree\nfour\nfive?\n"})
    driven.git("checkout", "-q", "main")
    driven.commit("main o", **{"notes.txt": "ONE\ntwo\nthree\nfour\nfive!\n"})
    clash = git_run(driven, "merge", "--no-edit", "pr-o")
    assert clash.exit_code != 0
    assert "CONFLICT (content): Merge conflict in notes.txt" in clash.stdout
    assert "<<<<<<< HEAD" in (driven.path / "notes.txt").read_text()  # git's own markers


# -- the driver command on files -------------------------------------------------------


def sides(tmp: Path, base: bytes, ours: bytes, theirs: bytes) -> tuple[Path, Path, Path]:
    paths = []
    for name, data in (("O", base), ("A", ours), ("B", theirs)):
        file = tmp / f".merge_file_{name}"
        file.write_bytes(data)
        paths.append(file)
    return paths[0], paths[1], paths[2]


def test_driver_command_writes_the_pr_link_with_pr(driven: Repo) -> None:
    main_bytes = log(BASE, entry("m", link(3)))
    o, a, b = sides(driven.path, BASE, log(BASE, entry("p")), main_bytes)
    done = run_gov(
        "merge-driver", "--pr", "42", "--main-side", "theirs", str(o), str(a), str(b), LOG,
        cwd=driven.path,
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert a.read_bytes() == main_bytes + b"\n" + entry("p", link(42))
    assert b.read_bytes() == main_bytes and o.read_bytes() == BASE  # only %A changes


def test_driver_command_explicit_main_side(driven: Repo) -> None:
    pr_bytes, main_bytes = log(BASE, entry("p")), log(BASE, entry("m", link(3)))
    o, a, b = sides(driven.path, BASE, main_bytes, pr_bytes)
    done = run_gov("merge-driver", "--main-side", "ours", str(o), str(a), str(b), cwd=driven.path)
    assert done.exit_code == 0, done.stderr
    assert a.read_bytes() == main_bytes + b"\n" + entry("p")


def test_missing_input_leaves_ours_untouched(driven: Repo) -> None:
    ours = log(BASE, entry("p"))
    o, a, b = sides(driven.path, BASE, ours, log(BASE, entry("m")))
    o.unlink()
    done = run_gov("merge-driver", str(o), str(a), str(b), LOG, cwd=driven.path)
    assert done.exit_code == 2
    assert "cannot read" in done.stderr and "Traceback" not in done.stderr
    assert a.read_bytes() == ours


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_crash_while_writing_never_truncates_ours(
    driven: Repo, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """Fault injection at the two steps of the atomic write: %A keeps its
    original bytes and no temporary file is left behind, on the clean path
    and on the refused (text-merge) path alike."""
    ours = log(BASE, entry("p"))
    cases = {
        "clean": (ours, log(BASE, entry("m"))),
        "refused": (ours.replace(b"change a", b"changed"), log(BASE, entry("m"))),
    }

    def boom(*_args: object) -> None:
        raise OSError("disk on fire")

    repo = GitRepo(driven.path)
    for name, (mine, main) in cases.items():
        work = driven.path / name
        work.mkdir()
        o, a, b = sides(work, BASE, mine, main)
        with monkeypatch.context() as patch:
            patch.setattr(os, failing, boom)
            with pytest.raises(OSError, match="disk on fire"):
                run_driver(repo, o, a, b, path=LOG, policy=POLICY, main_side=MainSide.theirs)
        assert a.read_bytes() == mine, name
        assert sorted(p.name for p in work.iterdir()) == [
            ".merge_file_A",
            ".merge_file_B",
            ".merge_file_O",
        ]


def test_write_atomically_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o777 == 0o640


# -- property: independent appends ----------------------------------------------------

KEY = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .,-", min_size=1, max_size=20)


@pytest.fixture(scope="module")
def scratch_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    path = tmp_path_factory.mktemp("scratch")
    git(path, "init", "-q")
    return GitRepo(path)


@settings(max_examples=40, deadline=None)
@given(
    history=st.lists(st.tuples(KEY, TEXT), min_size=1, max_size=4, unique_by=lambda t: t[0]),
    main_new=st.lists(st.tuples(KEY, TEXT), min_size=1, max_size=3, unique_by=lambda t: t[0]),
    pr_new=st.lists(st.tuples(KEY, TEXT), min_size=1, max_size=3, unique_by=lambda t: t[0]),
    main_is_ours=st.booleans(),
)
def test_property_result_is_main_then_each_pr_entry_once(
    scratch_repo: GitRepo,
    history: list[tuple[str, str]],
    main_new: list[tuple[str, str]],
    pr_new: list[tuple[str, str]],
    main_is_ours: bool,
) -> None:
    base = log(
        *(entry("h-" + k, link(i + 1), t.strip() or "x") for i, (k, t) in enumerate(history))
    )
    main_entries = [
        entry("m-" + k, link(100 + i), t.strip() or "x") for i, (k, t) in enumerate(main_new)
    ]
    pr_entries = [entry("p-" + k, "XXX", t.strip() or "x") for k, t in pr_new]
    main, pr_side = log(base, *main_entries), log(base, *pr_entries)
    ours, theirs = (main, pr_side) if main_is_ours else (pr_side, main)
    with tempfile.TemporaryDirectory(dir=scratch_repo.root) as tmp:
        o, a, b = sides(Path(tmp), base, ours, theirs)
        side = MainSide.ours if main_is_ours else MainSide.theirs
        outcome = run_driver(scratch_repo, o, a, b, path=LOG, policy=POLICY, main_side=side)
        result = a.read_bytes()
    assert outcome.clean and outcome.merged_by == "gov" and outcome.main_is_ours == main_is_ours
    assert result.startswith(main)
    for block in main_entries + pr_entries:
        assert result.count(block) == 1
    assert result == main + b"\n" + log(*pr_entries)
