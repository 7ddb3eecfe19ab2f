"""Every command on a repository that keeps nothing where the defaults say.

The changelog is `bench/changes.yaml`, the master configs and the runner file
live under `matrices/` with names of their own, the launch scripts under
`harness/scripts`, and main is called `trunk`; all of it said once, in
`.gov.toml`. If any door kept a path default of its own (the friction of
issue 23: `gov matrix` and prepare-merge did), it would read a file this
repository does not have. The walk records every command it ran and ends by
comparing that set with the commands `gov` registers, so a new command
without a walk here fails the test.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import typer.main

from governance.cli.app import app
from tests.forge.test_github import FakeGitHub, serve
from tests.harness import PROJECT, Repo, Result, run_gov, run_process, start_process

CHANGELOG = "bench/changes.yaml"
AMD, NVIDIA, RUNNERS = "matrices/amd.yaml", "matrices/nvidia.yaml", "matrices/nodes.yaml"
SCRIPTS = "harness/scripts"
MAIN = "trunk"
KEY = "dsr1-fp8-mi300x-sglang"
PR = 7
SETTINGS = f"""\
changelog = "{CHANGELOG}"
master-configs = ["{AMD}", "{NVIDIA}"]
runners = "{RUNNERS}"
scripts = "{SCRIPTS}"
main-branch = "{MAIN}"
[sweep-gate.labels]
bench = ["sweep", "trim-conc"]
"""
ENTRY = (
    f"\n- config-keys:\n    - {KEY}\n  description:\n"
    '    - "Walk every door on a custom layout"\n  pr-link: XXX\n'
)
# Commands with nothing repository-specific to read: the walk skips them.
NOT_REPOSITORY_COMMANDS = {
    "demo",  # runs on its own embedded example repository
    "schema",  # gov's own schemas/ folder, not the repository's layout
    "version",
}


class Walk:
    """Runs gov in the repository and remembers which commands it ran."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.ran: set[str] = set()

    def __call__(self, *args: str, expect: int | tuple[int, ...] = 0) -> Result:
        done = run_gov(*args, cwd=self.repo.path)
        self.ran.add(args[0] if args[0] not in GROUPS else f"{args[0]} {args[1]}")
        codes = expect if isinstance(expect, tuple) else (expect,)
        assert done.exit_code in codes, f"gov {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        # No door may fall back to a default path this repository lacks.
        for default in ("perf-changelog.yaml", "configs/amd-master.yaml", "configs/runners.yaml"):
            assert default not in done.stdout + done.stderr, (args, default)
        return done


def registered_commands() -> set[str]:
    """`gov`'s commands as the user types them (groups as "group sub")."""
    group = typer.main.get_group(app)
    names: set[str] = set()
    for name, command in group.commands.items():
        subcommands = getattr(command, "commands", None)
        names.update(f"{name} {sub}" for sub in subcommands or ()) if subcommands else names.add(
            name
        )
    return names


GROUPS = {name.split()[0] for name in registered_commands() if " " in name}


def custom_repo(make_repo: Callable[..., Repo]) -> Repo:
    repo = make_repo("custom")
    repo.configure_identity()
    for source, target in (
        ("perf-changelog.yaml", CHANGELOG),
        ("configs/amd-master.yaml", AMD),
        ("configs/nvidia-master.yaml", NVIDIA),
        ("configs/runners.yaml", RUNNERS),
    ):
        (repo.path / target).parent.mkdir(parents=True, exist_ok=True)
        repo.write(target, (PROJECT / source).read_bytes())
    shutil.copytree(PROJECT / "launch" / "benchmarks", repo.path / SCRIPTS, symlinks=True)
    repo.write(".gov.toml", SETTINGS)
    repo.commit("A benchmark repository with a layout of its own")
    repo.git("branch", "-m", MAIN)
    return repo


def append(repo: Repo, text: str, message: str) -> str:
    repo.write(CHANGELOG, (repo.path / CHANGELOG).read_text() + text)
    return repo.commit(message)


def test_every_command_reads_the_configured_layout(
    make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    repo = custom_repo(make_repo)
    gov = Walk(repo)

    # -- adoption and authoring, on the PR branch --------------------------------
    detected = gov("init")
    assert CHANGELOG in detected.stdout and AMD in detected.stdout, detected.stdout
    repo.git("checkout", "-q", "-b", "pr", MAIN)
    gov("add", "--config-key", KEY, "--description", "Walk every door on a custom layout")
    assert (repo.path / CHANGELOG).read_text().endswith("  pr-link: XXX\n")
    assert not (repo.path / "perf-changelog.yaml").exists()
    checked = gov("check", "--worktree", "--pr", str(PR))
    assert "1 config key(s)" in checked.stdout, checked.stdout
    repo.git("add", CHANGELOG)
    hooked = run_process([hook_exe()], cwd=repo.path)
    assert hooked.exit_code == 0 and "1 config key(s)" in hooked.stdout, hooked.stderr
    pr_head = repo.commit("Append an entry")
    annotated = gov("check", "--base-ref", MAIN, "--head-ref", pr_head, "--pr", str(PR),
                    "--format", "github")  # fmt: skip
    assert "::error" not in annotated.stdout
    planned = gov("plan", "--format", "json")
    plan = json.loads(planned.stdout)
    rows_planned = [row for bucket in plan["single_node"].values() for row in bucket]
    assert rows_planned, planned.stdout
    event = tmp_path / "event.json"
    pull = {
        "number": PR,
        "draft": False,
        "labels": [{"name": "bench"}],
        "head": {"sha": pr_head, "repo": {"full_name": "o/r"}},
        "base": {"ref": MAIN},
    }
    event.write_text(json.dumps({"action": "synchronize", "pull_request": pull,
                                 "repository": {"full_name": "o/r"}}))  # fmt: skip
    gate = json.loads(gov("sweep-gate", "--event", str(event), "--format", "json").stdout)
    assert gate["sweeps"] and gate["sweep-label"] == "bench" and gate["trim-conc"], gate
    trimmed = json.loads(gov("plan", "--event", str(event), "--format", "json").stdout)
    assert 0 < len(trimmed["single_node"]["1k1k"]) < len(plan["single_node"]["1k1k"])
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(planned.stdout)
    rows = gov("matrix", "--config-key", KEY)
    assert json.loads(rows.stdout), rows.stdout
    logged = gov("log", KEY)
    assert "Walk every door" in logged.stdout, logged.stdout
    audited = gov("audit", "--max-count", "5", expect=1)  # the branch's XXX fails main mode
    assert "1 changelog commits checked: 1 fail main mode" in audited.stdout, audited.stdout
    gov("canonicalize", "--pr", str(PR))
    assert (repo.path / CHANGELOG).read_text().endswith(f"/pull/{PR}\n")
    repo.git("checkout", "-q", "--", CHANGELOG)  # the link is written at merge, not now

    # -- the sweep doors ---------------------------------------------------------
    dry = gov("launch", "--plan", str(plan_path), "--dry-run")
    assert f"10 of 10 rows resolve to a script or recipe under {repo.path / SCRIPTS}" in dry.stdout
    first = rows_planned[0]["recipe-fingerprint"][:12]
    gov("launch", "--plan", str(plan_path), "--pr", str(PR), "--only", first)
    listed = gov("runs", "list", "--format", "json")
    runs = json.loads(listed.stdout)
    assert runs and {run["status"] for run in runs} == {"succeeded"}, listed.stdout
    gov("runs", "show", first)
    download = repo.path.parent / "download"  # a run that measured nothing: planned, mapped, none
    download.mkdir()
    imported = gov("runs", "import", "--artifacts", str(download), "--commit", "HEAD", "--dry-run")
    assert "would record 0 run(s)" in imported.stdout, imported.stdout
    compared = gov("results", "compare", "--pr", str(PR))
    assert f"PR #{PR} vs {MAIN}@" in compared.stdout and "5 point(s)" in compared.stdout

    # -- the forge and the merge doors -------------------------------------------
    gov("pr", "open", "--number", str(PR), "--branch", "pr")
    assert str(PR) in gov("pr", "list").stdout
    gov("pr", "check", str(PR), "--name", "check-changelog", "--conclusion", "success")
    gov("pr", "show", str(PR))
    repo.git("checkout", "-q", MAIN)
    other = ENTRY.replace(KEY, "dsr1-fp8-h200-sglang").replace("XXX", f"https://x/pull/{PR + 1}")
    append(repo, other.replace("https://x", "https://github.com/SemiAnalysisAI/InferenceX"), "M1")
    repo.git("checkout", "-q", "pr")
    merged = repo.git("merge", "-q", MAIN, "-m", "Merge trunk", check=False)
    assert "CONFLICT" in merged and CHANGELOG in merged, merged
    resolved = gov("resolve-conflict", "--pr", str(PR))
    assert CHANGELOG in resolved.stdout + resolved.stderr, resolved.stdout
    repo.git("add", CHANGELOG)
    repo.git("commit", "-q", "--no-edit")
    gov("install-merge-driver", "--command", gov_exe())
    assert CHANGELOG in (repo.path / ".git" / "info" / "attributes").read_text()
    repo.git("checkout", "-q", MAIN)
    append(repo, other.replace(str(PR + 1), str(PR + 2)), "M2")
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", MAIN, "-m", "Merge trunk again")  # the driver resolves it
    gov.ran.add("merge-driver")  # git ran it; the merge would conflict otherwise
    driven = (repo.path / CHANGELOG).read_text()
    assert "<<<<<<<" not in driven and driven.index(f"/pull/{PR + 2}") < driven.rindex(KEY)
    repo.git("checkout", "-q", MAIN)
    gov("queue", "add", "--pr", str(PR), "--priority", "high")
    gov("queue", "pause")
    paused = gov("queue", "run", "--once")
    assert "paused" in paused.stdout, paused.stdout
    gov("queue", "resume")
    dry_queue = gov("queue", "run", "--dry-run", "--no-sweep")
    assert f"PR #{PR} would" in dry_queue.stdout, dry_queue.stdout
    queued = json.loads(gov("queue", "status", "--format", "json").stdout)
    assert [(car["pr"], car["state"]) for car in queued["cars"]] == [(PR, "queued")], queued
    # --ahead builds the car's candidate (validate, merge, check, plan on this layout);
    # killed once it is held, the car still waits and its candidate is listed.
    ahead = [gov_exe(), "queue", "run", "--no-sweep", "--ahead", "1"]
    built = run_process(ahead, cwd=repo.path, env={"GOV_TEST_CRASH_AFTER": "queue-candidate"})
    assert built.exit_code == -signal.SIGKILL, built.stdout + built.stderr
    held = gov("queue", "status").stdout
    assert f"PR #{PR}" in held and "queued" in held and "candidate " in held, held
    gov("queue", "remove", "--pr", str(PR))
    gov("queue", "run", "--ahead", "1")  # nothing waits: it only lets the candidate go
    assert repo.git("for-each-ref", "refs/gov/queue") == ""
    green = gov("queue", "add", "--all-green", "--head-prefix", "pr", "--yes")
    assert f"skip     PR #{PR}" in green.stdout and "nothing to add" in green.stdout, green.stdout
    watch = start_process([gov_exe(), "queue", "run", "--watch", "0.01"], cwd=repo.path)
    assert watch.stdout is not None and watch.stderr is not None
    first_pass = watch.stdout.readline()  # a hang would be the bug: no fixed sleep here
    watch.send_signal(signal.SIGINT)
    assert watch.wait(timeout=60) == 130 and "nothing to do (pass 1;" in first_pass, first_pass
    watched = first_pass + watch.stdout.read() + watch.stderr.read()
    assert "perf-changelog.yaml" not in watched and "gov: interrupted" in watched, watched
    report = json.loads(gov("queue", "report", "--format", "json").stdout)
    assert report["landed"] == [] and report["first_refused"] is None, report
    gov("prepare-merge", "--pr", str(PR), "--dry-run")
    landed = gov("prepare-merge", "--pr", str(PR))
    assert "refused" not in landed.stdout, landed.stdout
    final = repo.show(MAIN, CHANGELOG).decode()
    assert final.endswith(f"/pull/{PR}\n") and KEY in final.rsplit("- config-keys:", 1)[1]
    # Landed without a sweep: the ledger (in the configured results folder) has no runs for it.
    unpublished = gov("results", "publish", "--commit", MAIN, expect=2)
    assert "records no results" in unpublished.stderr, unpublished.stderr

    # The queue on GitHub reads main's settings from the remote's trunk (fetched).
    repo.git("clone", "-q", "--bare", str(repo.path), str(tmp_path / "origin.git"))
    repo.git("remote", "add", "origin", str(tmp_path / "origin.git"))
    with serve(FakeGitHub()) as hub:
        env = {"GITHUB_API_URL": hub.base_url, "GH_TOKEN": "t", "GOV_REPOSITORY": "acme/bench"}
        synced = run_gov("queue", "sync", "--format", "json", cwd=repo.path, env=env)
    assert synced.exit_code == 0, synced.stdout + synced.stderr
    assert json.loads(synced.stdout) == {"enqueued": [], "refused": [], "dequeued": []}
    assert ("GET", "/repos/acme/bench/pulls") in {(s.method, s.path) for s in hub.seen}
    gov.ran.add("queue sync")

    missing = registered_commands() - gov.ran - NOT_REPOSITORY_COMMANDS
    assert not missing, f"commands this walk never ran: {sorted(missing)}"


def gov_exe() -> str:
    exe = shutil.which("gov", path=str(Path(sys.executable).parent))
    assert exe, "gov is not installed (pip install -e .)"
    return exe


def hook_exe() -> str:
    exe = shutil.which("gov-pre-commit", path=str(Path(sys.executable).parent))
    assert exe, "gov-pre-commit is not installed (pip install -e .)"
    return exe
