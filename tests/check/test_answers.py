"""`gov check` remembers its answer by what the answer depends on (check/answers.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.harness import Repo, run_gov, run_process

ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Retune MI300X DSv4 concurrency"\n  pr-link: {link}\n'
)
HEAVY = ("git", "ruamel.yaml", "pydantic", "httpx", "governance.changelog.document")


def appended(repo: Repo, link: str = "XXX") -> Repo:
    repo.git("checkout", "-q", "-b", "pr-2194")
    text = (repo.path / "perf-changelog.yaml").read_text() + ENTRY.format(link=link)
    repo.write("perf-changelog.yaml", text)
    repo.commit("Retune")
    return repo


def answers(repo: Repo) -> list[Path]:
    folder = repo.path / ".git" / "gov" / "check-cache"
    return [p for p in folder.glob("*.json") if set(json.loads(p.read_text())) >= {"stdout"}]


def test_a_repeated_check_is_answered_from_the_cache(example_repo: Repo) -> None:
    repo = appended(example_repo)
    first = run_gov("check", "--pr", "2194", cwd=repo.path)
    assert first.exit_code == 0, first.stderr
    [stored] = answers(repo)
    # Plant a different answer under the same key: the next run must print it,
    # which proves the answer came from the cache and not from the rules.
    planted = {"stdout": "planted answer\n", "summary": "", "ok": False, "commands": ""}
    stored.write_text(json.dumps(planted))
    again = run_gov("check", "--pr", "2194", cwd=repo.path)
    assert (again.exit_code, again.stdout) == (1, "planted answer\n")
    # Another format, another mode: other keys, real answers.
    assert run_gov("check", "--main", cwd=repo.path).exit_code == 1
    as_json = run_gov("check", "--pr", "2194", "--format", "json", cwd=repo.path)
    assert json.loads(as_json.stdout)["ok"] is True


def test_a_corrupt_answer_is_a_miss(example_repo: Repo) -> None:
    repo = appended(example_repo)
    assert run_gov("check", "--pr", "2194", cwd=repo.path).exit_code == 0
    [stored] = answers(repo)
    stored.write_text("{not json")
    again = run_gov("check", "--pr", "2194", cwd=repo.path)
    assert again.exit_code == 0 and again.stdout.startswith("ok: ")


def test_the_hook_sees_every_edit_of_the_working_tree(example_repo: Repo) -> None:
    """In worktree mode the key holds the bytes on disk: an edit after a
    clean answer is judged afresh, and undoing it gets the first answer back."""
    repo = appended(example_repo)
    clean = run_gov("check", "--worktree", "--pr", "2194", cwd=repo.path)
    assert clean.exit_code == 0, clean.stderr
    path = repo.path / "perf-changelog.yaml"
    good = path.read_bytes()
    path.write_bytes(good.replace(b"pr-link: XXX", b"pr-link: PLACEHOLDER"))
    bad = run_gov("check", "--worktree", "--pr", "2194", cwd=repo.path)
    assert bad.exit_code == 1 and "GOV4" in bad.stdout
    path.write_bytes(good)
    assert run_gov("check", "--worktree", "--pr", "2194", cwd=repo.path).stdout == clean.stdout


def test_a_settings_change_is_a_new_question(example_repo: Repo) -> None:
    repo = appended(example_repo, link="https://github.com/SemiAnalysisAI/InferenceX/pull/2194")
    assert run_gov("check", "--pr", "2194", cwd=repo.path).exit_code == 0
    renamed = run_gov("check", "--pr", "2194", "--repository", "acme/bench", cwd=repo.path)
    assert renamed.exit_code == 1 and "GOV4" in renamed.stdout


def test_a_cached_check_imports_no_engine(example_repo: Repo) -> None:
    """The hot path of a repeated check: no gitpython, YAML parser or pydantic."""
    repo = appended(example_repo)
    probe = (
        "import sys\n"
        "from governance.cli.app import main\n"
        "sys.argv = ['gov', 'check', '--pr', '2194']\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "sys.stderr.write('IMPORTED ' + ' '.join(heavy) + ' EXIT ' + str(code))\n"
    )
    cold = run_process([sys.executable, "-c", probe], cwd=repo.path)
    # A miss runs the rules: the YAML parser, and not pydantic (plain entries).
    assert "IMPORTED ruamel.yaml governance.changelog.document EXIT 0" in cold.stderr
    warm = run_process([sys.executable, "-c", probe], cwd=repo.path)
    assert warm.stderr.endswith("IMPORTED  EXIT 0"), warm.stderr


def test_plan_reads_the_configured_master_configs_and_remembers(example_repo: Repo) -> None:
    """`gov plan` reads the master configs where the settings put them (as
    `gov check` does), and a repeated plan is the same document."""
    repo = example_repo
    (repo.path / "bench").mkdir()
    for name in ("amd-master.yaml", "nvidia-master.yaml", "runners.yaml"):
        repo.git("mv", f"configs/{name}", f"bench/{name}")
    repo.write(
        "pyproject.toml",
        '[tool.gov]\nmaster-configs = ["bench/amd-master.yaml", "bench/nvidia-master.yaml"]\n'
        'runners = "bench/runners.yaml"\n',
    )
    repo.commit("Configs live in bench/")
    appended(repo)
    first = run_gov("plan", "--format", "json", cwd=repo.path)
    assert first.exit_code == 0, first.stderr
    rows = json.loads(first.stdout)["single_node"]
    assert sum(len(bucket) for bucket in rows.values()) > 0
    again = run_gov("plan", "--format", "json", cwd=repo.path)
    assert again.stdout == first.stdout


def _planted(repo: Repo) -> None:
    [stored] = answers(repo)
    stored.write_text(
        json.dumps({"stdout": "planted answer\n", "summary": "", "ok": False, "commands": ""})
    )


def test_no_cache_and_gov_no_cache_compute_the_answer_afresh(example_repo: Repo) -> None:
    repo = appended(example_repo)
    assert run_gov("check", "--pr", "2194", cwd=repo.path).exit_code == 0
    _planted(repo)
    assert run_gov("check", "--pr", "2194", cwd=repo.path).stdout == "planted answer\n"
    fresh = run_gov("check", "--pr", "2194", "--no-cache", cwd=repo.path)
    assert fresh.exit_code == 0 and fresh.stdout.startswith("ok: "), fresh.stdout + fresh.stderr
    _planted(repo)  # --no-cache stored the fresh answer over it
    by_env = run_gov("check", "--pr", "2194", cwd=repo.path, env={"GOV_NO_CACHE": "1"})
    assert by_env.exit_code == 0 and by_env.stdout.startswith("ok: "), by_env.stderr
    assert "GOV_NO_CACHE" not in by_env.stderr  # a known variable, not warned about
    plan = run_gov("plan", "--format", "json", cwd=repo.path)
    for args, env in ((("--no-cache",), {}), ((), {"GOV_NO_CACHE": "1"})):
        for path in answers(repo):
            planted = {"stdout": "planted plan\n", "summary": "", "ok": True, "commands": ""}
            path.write_text(json.dumps(planted))
        again = run_gov("plan", "--format", "json", *args, cwd=repo.path, env=env)
        assert again.stdout == plan.stdout, (args, env)


def test_an_answer_stored_by_other_code_is_not_reused(
    example_repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key held `__version__` only ("0.1.0" for every commit): an answer
    computed by older rules was replayed by newer ones."""
    from governance.check import findings_cache

    repo = appended(example_repo)
    assert run_gov("check", "--pr", "2194", cwd=repo.path).exit_code == 0
    _planted(repo)
    monkeypatch.setattr(findings_cache, "code_digest", lambda: "other code")
    again = run_gov("check", "--pr", "2194", cwd=repo.path)
    assert again.exit_code == 0 and again.stdout.startswith("ok: "), again.stdout


def test_the_code_digest_follows_the_installed_files(tmp_path: Path) -> None:
    import shutil

    import governance

    copy = tmp_path / "site" / "governance"
    shutil.copytree(Path(governance.__file__).parent, copy)
    probe = "from governance.check.findings_cache import code_digest; print(code_digest())"

    def digest_of() -> str:
        done = run_process(
            [sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(copy.parent)}
        )
        assert done.exit_code == 0, done.stderr
        return str(done.stdout).strip()

    first = digest_of()
    assert digest_of() == first
    rules = copy / "core" / "codes.py"
    rules.write_text(rules.read_text() + "\n# an edit\n")
    assert digest_of() != first


def test_the_scripts_stamp_lists_what_rglob_finds(tmp_path: Path) -> None:
    """The files whose size, time stamp and mode stamp the scripts folder:
    every file `Path.rglob` finds (a symlink to a file included, a symlinked
    folder not entered, a broken link and a fifo left out), in one stat each."""
    from governance.check.scripts_folder import file_stats

    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "a.sh").write_text("a")
    (real / "sub" / "b.sh").write_text("b")
    (real / "link.sh").symlink_to("a.sh")
    (real / "subdir").symlink_to("sub")
    (real / "broken").symlink_to("nowhere")
    os.mkfifo(real / "fifo")
    expected = sorted(
        f"{path}:{info.st_size}:{info.st_mtime_ns}:{info.st_mode:o}"
        for path in real.rglob("*")
        if (info := path.lstat()) and path.is_file()
    )
    assert sorted(file_stats(str(real))) == expected
    assert len(expected) == 3
