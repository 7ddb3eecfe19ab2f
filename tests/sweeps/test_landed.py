"""The run ledger records what landed: for the prepared and the merged commit
of a real prepare-merge (the demo's, on the local forge), which run stands for
each row, measured for the merge or reused from the PR's head."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.demo.walkthrough import _demo, example_root
from governance.git.repo import GitRepo
from governance.sweeps.ledger import CommitRow, Ledger, NewRun
from tests.harness import run_gov


@pytest.fixture(scope="module")
def landed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    workdir = tmp_path_factory.mktemp("landed") / "repo"
    workdir.mkdir()
    said: list[str] = []
    assert _demo(example_root(), workdir, said.append), "\n".join(said)
    return workdir, said


def commit_rows(repo: Path, commit: str) -> list[dict[str, object]]:
    out = run_gov("-C", str(repo), "runs", "list", "--commit", commit, "--format", "json")
    assert out.exit_code == 0, out.stderr
    rows: list[dict[str, object]] = json.loads(out.stdout)
    return rows


def test_merged_commit_lists_each_rows_folder_measured_or_reused(
    landed: tuple[Path, list[str]],
) -> None:
    repo, said = landed
    git = GitRepo(repo)
    merged = git.resolve("main")
    rows = commit_rows(repo, "main")
    assert len(rows) == 18
    reused = [r for r in rows if r["origin"] == "reused"]
    measured = [r for r in rows if r["origin"] == "measured"]
    assert (len(measured), len(reused)) == (5, 13)  # the eval rows are reused too
    # Reused rows stand on the PR head's runs; measured ones ran on the prepared commit.
    heads = {r["commit_sha"] for r in reused}
    prepared = {r["commit_sha"] for r in measured}
    assert len(heads) == 1 and len(prepared) == 1 and heads != prepared
    assert merged not in heads | prepared  # a squash-merge is a new commit
    assert all(r["status"] == "succeeded" and Path(str(r["result_path"])).is_dir() for r in rows)
    assert len({r["job_key"] for r in rows}) == 18
    # The prepared commit stands on exactly the same runs.
    (prepared_sha,) = prepared
    again = commit_rows(repo, str(prepared_sha))
    assert sorted((r["job_key"], r["id"], r["origin"]) for r in again) == sorted(
        (r["job_key"], r["id"], r["origin"]) for r in rows
    )
    text = run_gov("-C", str(repo), "runs", "list", "--commit", "main")
    assert text.stdout.splitlines()[-1] == f"{merged[:12]}: 18 row(s), 5 measured, 13 reused"
    assert any("reused   run " in line and " at " in line for line in text.stdout.splitlines())
    assert any(
        line.startswith(f"== `gov runs list --commit {merged[:10]}`: 18 result rows")
        and line.endswith("; 18 with their files verified")
        for line in said
    )
    # Each row's own folder, verified: the reused rows' files are the PR head's runs'.
    assert all(r["verified"] and r["evidence"] == "" for r in rows)
    assert all(Path(str(r["result_path"])).parts[-3] == "runs" for r in rows)


def test_a_commit_without_records_is_a_finding(
    landed: tuple[Path, list[str]],
) -> None:
    repo, _said = landed
    first = GitRepo(repo).resolve("main~2")  # the example repository, before any PR
    out = run_gov("-C", str(repo), "runs", "list", "--commit", first)
    assert out.exit_code == 1 and "no result of commit" in out.stderr
    bad = run_gov("-C", str(repo), "runs", "list", "--commit", "no-such-ref")
    assert bad.exit_code == 2 and "unknown git revision" in bad.stderr


def new_run(key: str, conc: str, commit: str) -> NewRun:
    return NewRun(
        "f" * 64, key, conc, commit, 1, "local", "t0", "t1", "succeeded", 0, "", f"/r/{conc}"
    )


def test_attribute_replaces_and_carry_copies(tmp_path: Path) -> None:
    with Ledger(tmp_path / "runs.sqlite3") as ledger:
        ids = ledger.add(
            [new_run("ffff-conc4", "4", "a" * 40), new_run("ffff-conc8", "8", "b" * 40)]
        )
        ledger.attribute("p" * 40, 1, [CommitRow("ffff-conc4", ids[1], "measured")])
        ledger.attribute(  # a second sweep of the same commit replaces the first
            "p" * 40,
            1,
            [
                CommitRow("ffff-conc4", ids[0], "reused"),
                CommitRow("ffff-conc8", ids[1], "measured"),
            ],
        )
        assert ledger.carry("p" * 40, "m" * 40) == 2
        got = ledger.for_commit("m" * 40)
        assert [(o, r.id, r.result_path) for o, r in got] == [
            ("reused", ids[0], "/r/4"),
            ("measured", ids[1], "/r/8"),
        ]
        # A commit with no records but launches: those runs, measured.
        assert [(o, r.id) for o, r in ledger.for_commit("b" * 40)] == [("measured", ids[1])]
        assert ledger.for_commit("c" * 40) == []
