"""`gov check` preflights the scripts a PR's rows run: real repositories, real bash."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import PROJECT, Repo, run_gov

ENTRY = """
- config-keys:
    - dsv4-fp8-mi300x-vllm
  description:
    - "Preflight test"
  pr-link: XXX
"""
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x.sh"
VLLM = '#!/usr/bin/env bash\nvllm serve "$MODEL" --quantization fp8 --dtype auto\n'
SGLANG = "#!/usr/bin/env bash\nsglang serve --model-path x \\\n  --quantization sgl_fp8\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """The example repository on main, plus one vLLM and one SGLang script."""
    repo = Repo(tmp_path / "repo")
    for name in ("perf-changelog.yaml", "configs"):
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, repo.path / name)
        else:
            shutil.copyfile(source, repo.path / name)
    shutil.copytree(PROJECT / "launch" / "benchmarks", repo.path / "benchmarks", symlinks=True)
    repo.write("benchmarks/single_node/fixed_seq_len/other_vllm.sh", VLLM)
    repo.write("benchmarks/single_node/fixed_seq_len/other_sglang.sh", SGLANG)
    repo.commit("example")
    repo.git("checkout", "-q", "-b", "pr")
    log = repo.path / "perf-changelog.yaml"
    log.write_bytes(log.read_bytes() + ENTRY.encode())
    return repo


def check(repo: Repo, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    done = run_gov(
        "check",
        "--base-ref",
        "main",
        "--pr",
        "7",
        "--format",
        "json",
        *extra,
        cwd=repo.path,
        env=env,
    )
    assert done.exit_code in (0, 1), done.stderr
    return done.exit_code, json.loads(done.stdout)


def test_clean_scripts_pass_and_the_preflight_says_what_it_checked(repo: Repo) -> None:
    repo.commit("entry")
    code, out = check(repo)
    assert code == 0 and out["warnings"] == []
    assert out["preflight"]["scripts"] == [SCRIPT]
    assert out["preflight"]["rows"] > 0 and out["preflight"]["scanned"] >= 3
    text = run_gov("check", "--base-ref", "main", "--pr", "7", cwd=repo.path).stdout
    assert "sweep preflight:" in text
    off = run_gov("check", "--base-ref", "main", "--pr", "7", "--no-sweep-preflight", cwd=repo.path)
    assert off.exit_code == 0 and "sweep preflight" not in off.stdout


def test_a_value_only_the_other_engine_uses_is_a_located_warning(repo: Repo) -> None:
    repo.commit(
        "entry",
        **{SCRIPT.replace("/", "__"): "#!/bin/sh\nvllm serve m \\\n    --quantization sgl_fp8\n"},
    )
    code, out = check(repo)
    assert code == 0 and out["ok"]
    [warning] = out["warnings"]
    assert (warning["code"], warning["path"], warning["line"], warning["column"]) == (
        "GOV713",
        SCRIPT,
        3,
        20,
    )
    assert "other_sglang.sh:3:18" in warning["message"] and "fp8" in warning["hint"]
    text = run_gov("check", "--base-ref", "main", "--pr", "7", cwd=repo.path).stdout
    assert f"{SCRIPT}:3:20: warning: GOV713" in text and "    --quantization sgl_fp8" in text
    code, out = check(repo, env={"GOV_PREFLIGHT_WARNINGS_FAIL": "true"})
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV713"]


def test_syntax_errors_fail_at_their_line(repo: Repo) -> None:
    repo.commit("entry", **{SCRIPT.replace("/", "__"): "#!/bin/bash\necho ok\nif true; then\n"})
    code, out = check(repo)
    assert code == 1
    codes = [(v["code"], v["path"]) for v in out["violations"]]
    assert codes == [("GOV711", SCRIPT)]
    assert out["violations"][0]["line"] == 4  # bash reports the unexpected end of file


def test_an_executable_script_without_a_shebang_cannot_be_executed(repo: Repo) -> None:
    (repo.path / SCRIPT).write_text("echo no shebang\n")  # keeps its executable bit
    repo.commit("entry")
    code, out = check(repo)
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV712"]
    repo.git("update-index", "--chmod=-x", SCRIPT)
    repo.git("commit", "-q", "-m", "not executable: run through bash")
    assert check(repo)[0] == 0


def test_a_row_without_a_script_is_found_at_pr_time(repo: Repo) -> None:
    repo.git("rm", "-q", SCRIPT)
    repo.commit("entry")
    code, out = check(repo)
    assert code == 1
    [finding] = out["violations"]
    assert finding["code"] == "GOV702" and finding["path"] == SCRIPT
    assert "more row(s)" in finding["message"]


def test_the_head_ref_is_judged_not_the_working_tree(repo: Repo) -> None:
    head = repo.commit("entry", **{SCRIPT.replace("/", "__"): "#!/bin/bash\nif\n"})
    (repo.path / SCRIPT).write_text("#!/bin/sh\necho fixed in the worktree only\n")
    done = run_gov("check", "--base-ref", "main", "--head-ref", head, "--pr", "7", cwd=repo.path)
    assert done.exit_code == 1 and "GOV711" in done.stdout
    assert run_gov("check", "--worktree", "--pr", "7", cwd=repo.path).exit_code == 0


def test_the_setting_turns_it_on_without_a_scripts_folder_and_refuses_bad_values(
    repo: Repo,
) -> None:
    repo.git("rm", "-r", "-q", "benchmarks")
    repo.commit("entry, and no scripts at all")
    code, out = check(repo)
    assert code == 0 and out["preflight"] is None  # auto: no scripts folder, no preflight
    code, out = check(repo, env={"GOV_SWEEP_PREFLIGHT": "true"})
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV702"]
    assert "does not exist" in out["violations"][0]["message"]
    bad = run_gov("check", "--pr", "7", cwd=repo.path, env={"GOV_SWEEP_PREFLIGHT": "sometimes"})
    assert bad.exit_code == 2 and "auto, true or false" in bad.stderr


def test_a_scripts_folder_outside_the_repository_is_read_from_disk(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    shutil.copytree(repo.path / "benchmarks", outside, symlinks=True)
    (outside / SCRIPT.removeprefix("benchmarks/")).write_text("#!/bin/bash\nif\n")
    repo.commit("entry")
    code, out = check(repo, env={"GOV_SCRIPTS": str(outside)})
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV711"]
    assert out["violations"][0]["path"].startswith(str(outside))


def test_only_the_reached_scripts_are_written_yet_findings_stay_the_same(repo: Repo) -> None:
    """The folder is looked up in the commit's listing and only the reached
    scripts are written; a symlink in the folder (the listing cannot answer
    for it) or a template with a `./` (materialized on demand) take the full
    write. The findings are the same on every path."""
    broken = "#!/usr/bin/env bash\nif true; then\n"
    repo.commit("entry", **{SCRIPT.replace("/", "__"): broken})
    looked_up = check(repo)
    assert looked_up[0] == 1 and [v["code"] for v in looked_up[1]["violations"]] == ["GOV711"]
    assert looked_up[1]["preflight"]["scripts"] == [SCRIPT]

    (repo.path / "benchmarks" / "alias.sh").symlink_to("single_node/fixed_seq_len/other_vllm.sh")
    repo.commit("a symlink in the scripts folder")
    linked = check(repo)
    for key in ("violations", "warnings", "preflight"):
        assert linked[1][key] == looked_up[1][key], key

    (repo.path / "benchmarks" / "alias.sh").unlink()
    repo.commit("no symlink")
    dotted_names = {"*": ["./{node}/{scenario}/{model}_{precision}_{hw}.sh"]}
    dotted = check(repo, env={"GOV_SCRIPT_NAMES": json.dumps(dotted_names)})
    assert dotted[0] == 1 and [v["code"] for v in dotted[1]["violations"]] == ["GOV711"]
    assert dotted[1]["violations"] == looked_up[1]["violations"]


def test_the_flag_uses_of_unchanged_scripts_are_remembered_by_their_bytes(repo: Repo) -> None:
    """After an edit of another script (the preflight's answer is not
    remembered then) the unchanged scripts' flag uses come from
    `.git/gov/shell-cache`: a planted entry for the SGLang script's bytes
    shows in the warning; `--no-cache` lexes them afresh."""
    from governance.check.findings_cache import digest
    from governance.core.blockcache import BlockPack

    repo.commit(
        "entry",
        **{SCRIPT.replace("/", "__"): "#!/bin/sh\nvllm serve m \\\n    --quantization sgl_fp8\n"},
    )
    _code, out = check(repo)
    assert "other_sglang.sh:3:18" in out["warnings"][0]["message"]
    pack = BlockPack(repo.path / ".git" / "gov" / "shell-cache")
    key = digest(["flag-uses", SGLANG.encode()])
    model = ["sglang", "model-path", "--model-path", "x", 2, 27]
    assert pack.get(key) == [model, ["sglang", "quantization", "--quantization", "sgl_fp8", 3, 18]]
    pack.put(key, [model, ["sglang", "quantization", "--quantization", "sgl_fp8", 9, 99]])

    repo.write("benchmarks/single_node/fixed_seq_len/other_vllm.sh", VLLM + "# edited\n")
    repo.commit("a new edit")  # another question: the remembered answers do not apply
    _code, out = check(repo)
    assert "other_sglang.sh:9:99" in out["warnings"][0]["message"]
    _code, out = check(repo, "--no-cache")
    assert "other_sglang.sh:3:18" in out["warnings"][0]["message"]


def test_the_working_tree_folder_is_read_as_the_pathlib_walk_read_it(tmp_path: Path) -> None:
    """The hook reads the working tree's scripts with one `scandir` per
    folder; the files, their order and their executable bits are what the
    sorted `rglob` walk gave: symlinked files and folders skipped, `a-b/`
    sorted after `a/` (by path parts, not by string)."""
    import os

    from governance.check.scripts_folder import _working_tree_files

    root = tmp_path / "benchmarks"
    for name, text in {
        "a/x.sh": "1",
        "a-b/x.sh": "2",
        "a.sh": "3",
        "single_node/fixed_seq_len/m_fp8_h100.sh": "4",
        "z/deep/er/y.py": "5",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "a" / "x.sh").chmod(0o755)
    (root / "link.sh").symlink_to("a.sh")
    (root / "linked-folder").symlink_to("z", target_is_directory=True)
    (root / "empty").mkdir()

    expected_files, expected_modes = {}, {}
    for file in sorted(root.rglob("*")):
        if file.is_file() and not file.is_symlink():
            path = f"benchmarks/{file.relative_to(root).as_posix()}"
            expected_files[path] = file.read_bytes()
            expected_modes[path] = os.access(file, os.X_OK)

    files, modes = _working_tree_files(root, "benchmarks")
    assert list(files.items()) == list(expected_files.items())
    assert modes == expected_modes and modes["benchmarks/a/x.sh"] is True
    assert list(files)[:3] == ["benchmarks/a/x.sh", "benchmarks/a-b/x.sh", "benchmarks/a.sh"]
    assert _working_tree_files(tmp_path / "absent", "benchmarks") == ({}, {})


def _preflight_records(repo: Repo) -> list[Path]:
    folder = repo.path / ".git" / "gov" / "check-cache"
    found = []
    for path in folder.rglob("*.json"):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and {"files", "scanned", "skipped_multinode"} <= set(data):
            found.append(path)
    return found


def _mark_remembered(repo: Repo, scanned: int) -> None:
    """Plant a recognisable figure in every remembered preflight answer."""
    records = _preflight_records(repo)
    assert records
    for path in records:
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "scanned": scanned}))


def test_the_preflight_is_remembered_while_its_rows_and_scripts_stay(repo: Repo) -> None:
    """The hook after a description edit: the same rows, the same scripts,
    so the remembered answer (a planted figure shows it was read) stands.
    A script's bytes, its mode (chmod changes no time stamp), the rows
    (another config key) or `--no-cache` each ask the question afresh. Every
    step rewords the description, so no rendered answer of `gov check`
    (`check.answers`, in front of this one) applies."""
    log = repo.path / "perf-changelog.yaml"
    script = repo.path / SCRIPT
    script.write_text("echo no shebang: run through bash\n")
    script.chmod(0o644)
    code, fresh = check(repo, "--worktree")
    assert code == 0 and fresh["preflight"]["scripts"] == [SCRIPT]
    scanned = fresh["preflight"]["scanned"]
    edits = iter(range(1, 100))

    def reworded(*extra: str) -> tuple[int, dict]:
        text = re.sub(r"Preflight test[^\"]*", f"Preflight test {next(edits)}", log.read_text())
        log.write_text(text)
        return check(repo, "--worktree", *extra)

    _mark_remembered(repo, 4242)
    assert reworded()[1]["preflight"]["scanned"] == 4242
    assert reworded("--no-cache")[1]["preflight"]["scanned"] == scanned

    _mark_remembered(repo, 4242)
    script.chmod(0o755)  # executable without a `#!` line: the launcher cannot exec it
    code, out = reworded()
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV712"]
    script.chmod(0o644)
    assert reworded()[1]["preflight"]["scanned"] == 4242  # as it was: remembered again

    script.write_text("echo edited: run through bash\n")
    assert reworded()[1]["preflight"]["scanned"] == scanned

    _mark_remembered(repo, 4242)
    two_keys = "    - dsv4-fp8-mi300x-vllm\n    - dsv4-fp8-mi300x-vllm-mtp\n"
    history, _, appended = log.read_text().rpartition("    - dsv4-fp8-mi300x-vllm\n")
    log.write_text(history + two_keys + appended)  # the appended entry's keys only
    code, out = check(repo, "--worktree")
    assert code == 0 and out["preflight"]["scanned"] == scanned
    assert out["preflight"]["rows"] > fresh["preflight"]["rows"]


def test_a_chmod_alone_is_a_new_question_for_the_remembered_check(repo: Repo) -> None:
    """`gov check`'s rendered answer is keyed by the scripts on disk too: a
    `chmod +x` (no time stamp or size changes) is seen, not answered from
    the cache."""
    script = repo.path / SCRIPT
    script.write_text("echo no shebang: run through bash\n")
    script.chmod(0o644)
    assert check(repo, "--worktree")[0] == 0
    script.chmod(0o755)
    code, out = check(repo, "--worktree")
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV712"]


@given(st.dictionaries(st.text(min_size=1), st.binary(), max_size=4))
def test_a_remembered_preflight_keeps_the_scripts_bytes_exactly(files: dict[str, bytes]) -> None:
    """The record goes through JSON (the cache's format): every byte of the
    checked scripts comes back, and the findings with them."""
    from governance.check.preflight import Preflight
    from governance.core.codes import violation

    warning = violation("GOV713", "a flag", "benchmarks/a.sh", 3, 7, "a hint")
    found = Preflight([], [warning], 5, 2, sorted(files), 40, files)
    assert Preflight.from_record(json.loads(json.dumps(found.to_record()))) == found
    assert Preflight.from_record({"files": {"a": "\u0100"}}) is None  # not a record: a miss


def test_a_symlinked_script_on_disk_is_judged_by_what_it_runs(repo: Repo) -> None:
    """In the working tree a row's symlinked script resolves to its target,
    the file the launcher runs: the finding is located there, and an edit of
    the target alone is a new question for every remembered answer."""
    script = repo.path / SCRIPT
    target = script.with_name("real_target.sh")
    target.write_text("#!/usr/bin/env bash\nif true; then\n")  # a syntax error
    script.unlink()
    script.symlink_to(target.name)
    code, out = check(repo, "--worktree")
    assert code == 1 and [(v["code"], v["path"]) for v in out["violations"]] == [
        ("GOV711", SCRIPT.replace("dsv4_fp8_mi300x.sh", "real_target.sh"))
    ]
    target.write_text("#!/usr/bin/env bash\nif true; then echo ok; fi\n")
    assert check(repo, "--worktree")[0] == 0
    target.write_text("#!/usr/bin/env bash\nif true; then\n")
    assert check(repo, "--worktree")[0] == 1


def test_a_scripts_folder_outside_the_repository_is_stamped_from_disk(
    repo: Repo, tmp_path: Path
) -> None:
    """With `scripts` outside the repository, a check of a commit still runs
    the scripts on disk, so the remembered answers are keyed by them: an
    edit there is seen by the next check of the same commit."""
    outside = tmp_path / "elsewhere"
    shutil.copytree(repo.path / "benchmarks", outside, symlinks=True)
    repo.commit("entry")
    env = {"GOV_SCRIPTS": str(outside)}
    assert check(repo, env=env)[0] == 0
    (outside / SCRIPT.removeprefix("benchmarks/")).write_text("#!/bin/bash\nif\n")
    code, out = check(repo, env=env)
    assert code == 1 and [v["code"] for v in out["violations"]] == ["GOV711"]
