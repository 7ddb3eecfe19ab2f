"""A result a launched script wrote is data, never a crash: a landed PR whose
runs left a 5,001-digit integer, 100,000-deep nesting or a 200 MiB row file
is an unreadable or unverifiable entry of its own comparison, and the PRs
after it compare (exit 0) through `gov results compare` and prepare-merge's
sweep step."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from governance.core import jsonsafe
from governance.core.settings import load_settings
from governance.merge.sweep_step import SweepAfterMerge, SweepOptions
from governance.sweeps import runfiles
from tests.harness import PROJECT, Repo, run_gov
from tests.results.test_cli_results import SCRIPT, append, launch

# The script reads what to leave from a file outside the repository, so both
# PRs run the same script (the same recipe) and only the first is hostile.
BENCH = """#!/bin/sh
set -eu
mode=$(cat {knob})
if [ "${{EVAL_ONLY:-false}}" = true ]; then
  printf '{{"results": {{"gsm8k": {{"em": 0.9}}}}}}' > "$RESULT_DIR/results_$RESULT_FILENAME.json"
  exit 0
fi
out="$RESULT_DIR/$RESULT_FILENAME.json"
case "$mode" in
digits) python3 -c 'print("{{\\"total_token_throughput\\": " + "9" * 5001 + "}}")' > "$out" ;;
float) python3 -c 'print("{{\\"total_token_throughput\\": " + "9" * 400 + "}}")' > "$out" ;;
deep) python3 -c 'print("[" * 100000 + "]" * 100000)' > "$out" ;;
bigrow)
  printf '{{"total_token_throughput": 5}}' > "$out"
  python3 -c 'import os, sys; os.truncate(sys.argv[1], 200 * 1024 * 1024)' "$GOV_ROW_JSON" ;;
*) printf '{{"total_token_throughput": 1000, "median_ttft_ms": 1, "median_tpot_ms": 1}}' > "$out" ;;
esac
"""
MODES = ("digits", "float", "deep", "bigrow")


def landed_then_clean(root: Path, mode: str) -> Repo:
    """PR 6 launches with `mode` and lands on main; PR 7 launches clean."""
    knob = root / "mode"
    repo = Repo(root / "repo")
    repo.configure_identity()
    shutil.copyfile(PROJECT / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    shutil.copytree(PROJECT / "configs", repo.path / "configs")
    repo.write(SCRIPT, BENCH.format(knob=knob)).chmod(0o755)
    repo.commit("example")
    repo.git("checkout", "-q", "-b", "pr6")
    append(repo, "Measure (hostile results)")
    repo.commit("measure")
    knob.write_text(mode)
    launch(repo, 6)
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "pr6")
    repo.git("commit", "-q", "-m", "Measure (#6)")
    repo.git("checkout", "-q", "-b", "pr7")
    append(repo, "Measure again")
    repo.commit("again")
    knob.write_text("ok")
    launch(repo, 7)
    return repo


@pytest.fixture(scope="module", params=MODES)
def hostile(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return landed_then_clean(tmp_path_factory.mktemp(f"hostile-{request.param}"), request.param)


def compare(repo: Repo, pr: int) -> dict:
    done = run_gov("results", "compare", "--pr", str(pr), "--format", "json", cwd=repo.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_later_pr_compares_and_the_hostile_one_says_why(
    hostile: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[int] = []
    real_read = os.read

    def counting(fd: int, size: int) -> bytes:
        chunk = real_read(fd, size)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(runfiles.os, "read", counting)
    later = compare(hostile, 7)
    assert later["unreadable"] == [] and later["unverifiable"] == []
    assert later["comparisons"]  # its evals at least have main's to compare with
    own = compare(hostile, 6)
    entries = own["unreadable"] + own["unverifiable"]
    assert entries
    assert all(
        "digits" in e or "deeper" in e or "cannot be read" in e or "too large" in e for e in entries
    ), entries
    assert max(read) <= 1024 * 1024  # read in chunks, never the 200 MiB file at once
    settings = load_settings(hostile.gitrepo().root)
    text, data = SweepAfterMerge(hostile.gitrepo(), settings, SweepOptions())._results(7)
    assert data is not None and text


def test_a_file_past_the_keep_limit_is_recorded_unhashed_and_never_read(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    with open(folder / "gov-row.json", "wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: no disk
    [recorded] = runfiles.record(folder)
    assert recorded.sha256 is None and recorded.size == 200 * 1024 * 1024
    with pytest.raises(runfiles.FileUnverifiable, match="too large"):
        runfiles.read_verified(folder, recorded)
    assert runfiles.verify(folder, [recorded]) == "result file too large: gov-row.json"


def test_a_result_past_the_read_cap_is_too_large_and_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governance.results import service
    from governance.results.reader import MAX_RESULT_BYTES

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "r.json").write_bytes(b"[" + b"1," * (MAX_RESULT_BYTES // 2) + b"1]")
    [recorded] = runfiles.record(folder)
    assert recorded.sha256 is not None  # under the keep limit: digested, verifies
    assert runfiles.verify(folder, [recorded]) == ""
    monkeypatch.setattr(runfiles.os, "read", lambda *_: pytest.fail("read"))
    with pytest.raises(service.Unverifiable, match=r"too large: r\.json"):
        service._read(folder, recorded)


@pytest.mark.parametrize(
    ("data", "why", "line", "column"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "deeper than 64", 1, 65),
        (b'{"a": [\n  ' + b"9" * 5001 + b"]}", "more than 64 digits", 2, 3),
        (b'{"a": -' + b"1" * 65 + b"}", "more than 64 digits", 1, 7),
        (b'{"a": 1,}', "not JSON", 1, 9),
        (b'{"a": "\xff"}', "not UTF-8", 1, 8),
    ],
)
def test_bounded_json_says_where_and_why(data: bytes, why: str, line: int, column: int) -> None:
    with pytest.raises(jsonsafe.JsonBoundError) as caught:
        jsonsafe.loads(data)
    assert why in caught.value.reason
    assert (caught.value.line, caught.value.column) == (line, column)


def test_bounded_json_reads_what_real_results_hold() -> None:
    text = (
        '{"s": "' + "9" * 5001 + '[[[[", "n": ' + "9" * 64 + ', "d": ' + "[" * 63 + "]" * 63 + "}"
    )
    assert jsonsafe.loads(text.encode())["n"] == int("9" * 64)
