"""The doors as users meet them, cold: what a CI runner, a hook after a new
edit, the Action and a maintainer's prepare-merge cost (issue 24's table).

    .venv/bin/python benchmarks/bench_realistic_doors.py [--runs N] [--prs K] [--reference SCRIPT]
                                                         [--before BIN_DIR]

Cases, each a whole process (or the Action's two), median of N runs:

* **CI check, cold**: `gov check --base-ref B --head-ref SHA --pr N --format github` (N: the
  PR number the branch's own entries link; draft mode while they say XXX) with no
  `.git/gov` (a fresh checkout has none), on PR #2194's first commit of
  `inferencex-scripts.bundle` (its real `benchmarks/`, so the preflight runs) and on the K
  newest PR branches of `inferencex.bundle` with the runners bundle's `benchmarks/` laid beside
  the clone (`GOV_SCRIPTS`, an absolute path: read from disk).
* **the Action's steps**: as action.yml runs them, cold: the check with `--summary-plan` (one
  process), or, with a gov that lacks the flag (an older one, for a before/after table), that
  check, then `gov plan --format markdown --empty-ok`.
* **the hook on a new edit**: `gov-pre-commit` with a newly staged entry each run (its
  description changes, so no remembered answer of the check applies; the rows stay, so the
  preflight's does), `.git/gov` kept as a developer has it; and the same with an edit of a
  script the rows run each time (the preflight's answer never applies then).
* **`gov plan`, cold** on the same PRs.
* **`gov prepare-merge --pr N --dry-run`**, local forge, no sweep, on PR #2194 (merge, resolve,
  canonicalize, check and plan; nothing lands, so every run does the same work), cold.
* **the floor**: `python -c pass`, the interpreter alone: how fast the machine was during
  the run (a shared machine's load moves every figure; compare runs by it).
* **warm repeats** (labelled): the same CI check with `.git/gov` kept, which the
  remembered-answer cache answers; no user meets this in CI.

The reference (`--reference SCRIPT`, or `GOV_REFERENCE`) is any executable taking the
repository path, the base and the head: its row is printed beside gov's when given.

`--before BIN_DIR` (the `bin/` of another gov's virtualenv, e.g. an older commit installed
with `pip install -e`) measures that gov too, run for run interleaved with this one on the
same setups (so both meet the same load), and prints both medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_doors import BIN, GOV, HOOK, Figure, measure, run_once

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
SCRIPTS = CORPUS / "inferencex-scripts.bundle"
HISTORY = CORPUS / "inferencex.bundle"
RUNNERS = CORPUS / "inferencex-runners.bundle"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def clone(bundle: Path, dest: Path, branch: str | None = None) -> Path:
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)
    if branch:
        git(dest, "checkout", "-q", branch)
    return dest


def forget(repo: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(repo / ".git" / "gov", ignore_errors=True)


class Case:
    """One PR: where it lives, its base and head, its number."""

    def __init__(
        self, name: str, repo: Path, base: str, head: str, pr: int | None, env: dict[str, str]
    ):
        self.name, self.repo, self.base, self.head, self.pr, self.env = (
            name,
            repo,
            base,
            head,
            pr,
            env,
        )

    def check(self) -> list[str]:
        number = ["--pr", str(self.pr)] if self.pr is not None else []  # None: draft mode
        return [GOV, "check", "--base-ref", self.base, "--head-ref", self.head, *number,
                "--format", "github"]  # fmt: skip

    def plan(self) -> list[str]:
        return [GOV, "plan", "--base-ref", self.base, "--head-ref", self.head,
                "--format", "markdown", "--empty-ok"]  # fmt: skip


def newest_prs(repo: Path, count: int) -> list[str]:
    refs = git(repo, "for-each-ref", "--sort=-committerdate", "--format=%(refname:short)",
               "refs/remotes/origin/pr")  # fmt: skip
    return refs.splitlines()[:count]


def own_pr(repo: Path, ref: str, env: dict[str, str]) -> int | None:
    """The PR number the branch's own appended entries link (a draft check
    reads them), None when they still say XXX (the check then runs in draft mode)."""
    done = subprocess.run(
        with_env(env, [GOV, "check", "--base-ref", "origin/main", "--head-ref", ref,
                       "--format", "json", "--no-sweep-preflight"]),
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    try:
        links = [a["pr-link"] for a in json.loads(done.stdout).get("additions", [])]
    except (ValueError, AttributeError):
        return None
    numbers = {link.rstrip("/").rsplit("/", 1)[-1] for link in links if "/pull/" in link}
    return int(numbers.pop()) if len(numbers) == 1 and next(iter(numbers)).isdigit() else None


def with_env(env: dict[str, str], argv: list[str]) -> list[str]:
    return ["env", *(f"{k}={v}" for k, v in env.items()), *argv]


def one_process() -> bool:
    """Does this gov write the plan summary from its check (`--summary-plan`)?"""
    done = subprocess.run([GOV, "check", "--help"], capture_output=True, text=True, check=False)
    return "--summary-plan" in done.stdout


def action(case: Case, summary: Path) -> list[str]:
    steps = [[*case.check(), "--summary-plan"]] if one_process() else [case.check(), case.plan()]
    script = " && ".join(" ".join(map(_quote, with_env(case.env, argv))) for argv in steps)
    env = f"GITHUB_STEP_SUMMARY={_quote(str(summary))}"
    return ["sh", "-c", f"export {env}; {script} >/dev/null; exit 0"]


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def measure_pair(
    name: str,
    argv: list[str],
    cwd: Path,
    runs: int,
    before: Callable[[], None] | None,
    other_bin: str,
) -> tuple[Figure, Figure]:
    """This gov and the gov in `other_bin` on the same command, alternating
    run for run (each after its own `before`), so both meet the same load."""
    other = [word.replace(str(BIN), other_bin) for word in argv]
    figures: dict[str, list[float]] = {"this": [], "other": []}
    for command in (argv, other):
        run_once(command, cwd)  # page cache and .pyc files warm
    for _ in range(runs):
        for key, command in (("this", argv), ("other", other)):
            if before is not None:
                before()
            elapsed, _peak, code = run_once(command, cwd)
            if code not in (0, 1):
                sys.exit(f"{name}: exit {code} ({' '.join(command)})")
            figures[key].append(elapsed)
    return Figure(name, figures["this"], 0.0), Figure(name, figures["other"], 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--prs", type=int, default=3)
    parser.add_argument("--reference", default=os.environ.get("GOV_REFERENCE"))
    parser.add_argument("--before", help="bin/ of another gov, measured interleaved")
    options = parser.parse_args()
    for bundle in (SCRIPTS, HISTORY, RUNNERS):
        if not bundle.is_file():
            sys.exit(f"skipped: {bundle} is not there (the shared corpus)")
    n = options.runs
    # Every gov measured starts from compiled modules, as an installed one does
    # (PYTHONDONTWRITEBYTECODE would otherwise recompile each edited module per run).
    for bin_dir in (BIN, *([Path(options.before)] if options.before else [])):
        subprocess.run(
            [str(bin_dir / "python"), "-c", "import compileall, governance, os; "
             "compileall.compile_dir(os.path.dirname(governance.__file__), quiet=1)"],
            check=True,
        )  # fmt: skip
    # (door, this gov, the --before gov, the reference)
    rows: list[tuple[str, Figure, Figure | None, Figure | None]] = []

    def timed(
        label: str, argv: list[str], cwd: Path, before: Callable[[], None] | None = None
    ) -> tuple[Figure, Figure | None]:
        if not options.before:
            return measure(label, argv, cwd, n, before), None
        return measure_pair(label, argv, cwd, n, before, str(Path(options.before).resolve()))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scripts_repo = clone(SCRIPTS, root / "scripts")
        git(scripts_repo, "checkout", "-q", "-B", "pr", "origin/pr/2194-scaffold")
        runners = clone(RUNNERS, root / "runners")
        git(runners, "checkout", "-q", "origin/main")
        history = clone(HISTORY, root / "history")
        beside = {"GOV_SCRIPTS": str(runners / "benchmarks")}
        cases = [
            Case("#2194 scaffold (scripts bundle)", scripts_repo, "origin/base", "pr", 2194, {})
        ]
        for ref in newest_prs(history, options.prs):
            number = own_pr(history, ref, beside)
            cases.append(
                Case(ref.removeprefix("origin/"), history, "origin/main", ref, number, beside)
            )

        def reference(case: Case) -> Figure | None:
            if not options.reference:
                return None
            script = str(Path(options.reference).resolve())
            argv = [script, str(case.repo), case.base, case.head]
            return measure(f"reference, {case.name}", argv, case.repo, max(3, n // 3))

        for case in cases:
            cold = forget(case.repo)
            verdict = subprocess.run(
                with_env(case.env, case.check()), cwd=case.repo, capture_output=True, check=False
            ).returncode
            case.name += " (check passes)" if verdict == 0 else f" (check exit {verdict})"
            rows.append((f"CI check, cold: {case.name}",
                         *timed(case.name, with_env(case.env, case.check()), case.repo, cold),
                         reference(case)))  # fmt: skip
            rows.append((f"Action steps, cold: {case.name}",
                         *timed(case.name, action(case, root / "summary.md"), case.repo, cold),
                         None))  # fmt: skip
            rows.append((f"gov plan, cold: {case.name}",
                         *timed(case.name, with_env(case.env, case.plan()), case.repo, cold),
                         None))  # fmt: skip
        first = cases[0]
        rows.append(("CI check, warm repeat (cache answers; not a user's case)",
                     *timed("warm", first.check(), first.repo), None))  # fmt: skip

        hook_repo = clone(SCRIPTS, root / "hook")
        git(hook_repo, "checkout", "-q", "-B", "pr", "origin/pr/2194-scaffold")
        log = hook_repo / "perf-changelog.yaml"
        original = log.read_bytes()
        counter = iter(range(10**6))

        def new_edit() -> None:
            entry = (
                "\n- config-keys:\n    - dsr1-fp8-mi300x-sglang\n  description:\n"
                f'    - "edit {next(counter)}"\n  pr-link: XXX\n'
            )
            log.write_bytes(original + entry.encode())
            git(hook_repo, "add", "perf-changelog.yaml")

        rows.append(("hook on a new staged edit (gov-pre-commit)",
                     *timed("hook", [HOOK], hook_repo, new_edit), None))  # fmt: skip

        # The same, with an edit of a script the rows run each time: the
        # preflight's remembered answer never applies, only the unchanged
        # scripts' flag uses and `bash -n` answers do.
        script = hook_repo / "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh"
        script_original = script.read_bytes()

        def new_edit_and_script() -> None:
            new_edit()
            script.write_bytes(script_original + f"# edit {next(counter)}\n".encode())
            git(hook_repo, "add", str(script.relative_to(hook_repo)))

        rows.append(("hook on a new staged edit and a script edit",
                     *timed("hook+script", [HOOK], hook_repo, new_edit_and_script), None))  # fmt: skip
        script.write_bytes(script_original)

        merge_repo = clone(SCRIPTS, root / "merge")
        git(merge_repo, "checkout", "-q", "-B", "main", "origin/main")
        git(merge_repo, "branch", "-f", "pr-2194", "origin/pr/2194-scaffold")
        subprocess.run([GOV, "pr", "open", "--number", "2194", "--branch", "pr-2194"],
                       cwd=merge_repo, check=True, capture_output=True)  # fmt: skip
        keep_forge = merge_repo / ".git" / "gov" / "forge.sqlite3"
        saved = root / "forge.sqlite3"
        shutil.copyfile(keep_forge, saved)

        def cold_but_forge() -> None:
            shutil.rmtree(merge_repo / ".git" / "gov", ignore_errors=True)
            keep_forge.parent.mkdir(parents=True)
            shutil.copyfile(saved, keep_forge)  # the forge is the repository's state, not a cache

        rows.append(("prepare-merge --pr 2194 --dry-run, local forge, no sweep",
                     *timed("merge", [GOV, "prepare-merge", "--pr", "2194", "--dry-run"],
                            merge_repo, cold_but_forge), None))  # fmt: skip

        # The machine's own speed, for reading the figures of another run: the
        # interpreter alone, no gov (the same for both; load on a shared machine moves it).
        floor = [str(BIN / "python"), "-c", "pass"]
        rows.append(("floor: the interpreter alone (python -c pass)",
                     measure("floor", floor, root, n), None, None))  # fmt: skip

    print(f"gov at {git(Path(__file__).resolve().parents[1], 'rev-parse', '--short', 'HEAD')}, "
          f"median of {n} runs, load {os.getloadavg()[0]:.2f}")  # fmt: skip
    if options.before:
        print(f"before: the gov in {options.before}, interleaved run for run")
    print("| door | gov median | min-max | before | speed-up | reference | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, figure, earlier, theirs in rows:
        was = f"{earlier.median:.3f} s" if earlier else ""
        gain = f"{earlier.median / figure.median:.2f}x" if earlier else ""
        shown = f"{theirs.median:.3f} s" if theirs else ""
        ratio = f"{theirs.median / figure.median:.1f}x" if theirs else ""
        print(f"| {name} | {figure.median:.3f} s | {min(figure.seconds):.3f}-"
              f"{max(figure.seconds):.3f} | {was} | {gain} | {shown} | {ratio} |")  # fmt: skip
    if not options.reference:
        print("reference: not run (no --reference SCRIPT or GOV_REFERENCE given)")


if __name__ == "__main__":
    main()
