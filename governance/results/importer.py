"""`gov runs import`: a sweep run the repository already ran, into the run ledger.

The downloaded artifacts are checked (`artifacts.collect`: the repository's
consistency rules), each point is mapped to the row of the plan at the run's
head commit that has its point identity (and, when the artifact names one,
the same recipe fingerprint), and each row's harness is traced in a checkout
of that commit. Only when every point maps is anything recorded: each point
becomes a succeeded run at the head commit, its files written once under its
own run folder with their digests, its identity (recipe, concurrency,
harness) beside it and its provenance (the CI run, the artifact) in its
detail. Imported runs are reuse sources like gov's own; an import that cannot
vouch for one point records none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo
from governance.results.artifacts import ArtifactPoint, collect, row_point
from governance.results.reader import MAX_RESULT_BYTES
from governance.sweeps.dispatch import harness_reader
from governance.sweeps.harness import Harness
from governance.sweeps.identity import PlanRow, conc_label, job_key, plan_rows, row_recipe
from governance.sweeps.jobs import ROW_JSON_NAME
from governance.sweeps.ledger import Ledger, NewRun
from governance.sweeps.resolve import resolve_rows, resolver_for, sweep_paths
from governance.sweeps.reuse_pin import provenance
from governance.sweeps.runfiles import launch_folder, record

LAUNCHER = "import"
MAX_FILES = 20_000  # a download with more files than this is refused
SKIPPED_FOLDERS = ("eval_server_logs", "eval_gpu_metrics", "run-stats")  # diagnostics


@dataclass(slots=True)
class Imported:
    """What one import did (or, refused, why it did nothing)."""

    commit: str
    source: str
    recorded: list[tuple[str, str, int]] = field(default_factory=list)  # key, artifact, run id
    already: list[str] = field(default_factory=list)  # keys imported before from this source
    refused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    dry_run: bool = False
    planned: list[tuple[str, str]] = field(default_factory=list)  # key, artifact (dry run)

    @property
    def ok(self) -> bool:
        return not self.refused

    def to_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "source": self.source,
            "ok": self.ok,
            "dry_run": self.dry_run,
            "recorded": [{"job_key": k, "artifact": a, "run": r} for k, a, r in self.recorded],
            "would_record": [{"job_key": k, "artifact": a} for k, a in self.planned],
            "already_imported": list(self.already),
            "refused": list(self.refused),
            "dropped": list(self.dropped),
        }


def read_download(folder: Path) -> dict[str, bytes]:
    """path -> bytes of the JSON files of a run download (diagnostics skipped,
    symlinks never followed, each file at most MAX_RESULT_BYTES)."""
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder", "download the run's artifacts into a folder")
    out: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*.json")):
        relative = path.relative_to(folder).as_posix()
        if relative.startswith(SKIPPED_FOLDERS) or path.is_symlink() or not path.is_file():
            continue
        if len(out) >= MAX_FILES:
            raise UsageError(
                f"{folder}: more than {MAX_FILES} JSON files", "import one run at a time"
            )
        if path.stat().st_size > MAX_RESULT_BYTES:
            raise UsageError(
                f"{relative}: larger than {MAX_RESULT_BYTES} bytes, not a result gov reads",
                "remove it from the download if it is no result",
            )
        out[relative] = path.read_bytes()
    return out


def import_run(
    repo: GitRepo,
    settings: Settings,
    files: dict[str, bytes],
    *,
    commit: str,
    pr: int | None,
    source: str,
    base: str | None = None,
    dry_run: bool = False,
) -> Imported:
    """Record the run whose artifacts are `files`, measured at `commit` (its
    head), planned against `base` (default: where the commit forked from main)."""
    from governance.matrix.sources import plan_between

    head = repo.resolve(commit)
    fork = (
        repo.resolve(base)
        if base
        else repo.merge_base(main_ref(repo, settings.main_branch).sha, head)
    )
    rows = plan_rows(plan_between(repo, fork, head, layout=settings.layout()).document)
    runners = frozenset(str(row.data.get("runner", "")) for row in rows)
    collected = collect(files, runners)
    done = Imported(head, source, refused=list(collected.refusals), dropped=collected.dropped)
    done.dry_run = dry_run
    mapped = _mapped(collected.points, rows, head, done)
    if not done.ok:
        return done
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    with Ledger(paths.ledger) as ledger:
        before = {
            run.job_key
            for run in ledger.runs(pr=pr)
            if run.commit_sha == head
            and run.launcher == LAUNCHER
            and provenance(run.detail) == source
        }
        done.already = sorted(job_key(row) for _p, row in mapped if job_key(row) in before)
        mapped = [(p, row) for p, row in mapped if job_key(row) not in before]
        traced = _traced(repo, settings, head, [row for _p, row in mapped], done)
        if not done.ok or not mapped:
            return done
        if dry_run:
            done.planned = [(job_key(row), point.artifact) for point, row in mapped]
            return done
        launch = launch_folder(paths.results)
        runs = [
            _write(launch, point, row, traced[job_key(row)], head, pr, source)
            for point, row in mapped
        ]
        ids = ledger.add(runs)
    done.recorded = [(run.job_key, point.artifact, run_id) for (point, _r), run, run_id in
                     zip(mapped, runs, ids, strict=True)]  # fmt: skip
    return done


def _mapped(
    points: list[ArtifactPoint], rows: list[PlanRow], head: str, done: Imported
) -> list[tuple[ArtifactPoint, PlanRow]]:
    by_point: dict[tuple[object, ...], list[PlanRow]] = {}
    for row in rows:
        kind = "eval" if row.is_eval else "agentic" if row.is_agentic else "throughput"
        by_point.setdefault(row_point(row.data, kind), []).append(row)
    out = []
    for point in points:
        found = by_point.get(point.identity, [])
        if len(found) != 1:
            why = "no row of" if not found else f"{len(found)} rows of"
            done.refused.append(
                f"{point.artifact}: {point.label()}: {why} the plan at {head[:10]} have this point"
            )
            continue
        row = found[0]
        measured = point.data.get("recipe_fingerprint")
        if measured and row.fingerprint and measured != row.fingerprint:
            done.refused.append(
                f"{point.artifact}: {point.label()}: measured recipe {str(measured)[:16]}, but "
                f"{row.where} at {head[:10]} is recipe {row.fingerprint[:16]}"
            )
            continue
        out.append((point, row))
    return out


def _traced(
    repo: GitRepo, settings: Settings, head: str, rows: list[PlanRow], done: Imported
) -> dict[str, Harness]:
    """job key -> the harness each row runs at `head` (a checkout of it)."""
    with repo.worktree.temporary_checkout(head, f"gov-import-{os.getpid()}-") as tree:
        paths = sweep_paths(repo.root, repo.git_dir, settings)
        paths = replace(paths, scripts=tree / settings.scripts, checkout=tree)
        resolved = resolve_rows(
            rows,
            resolver_for(paths, settings),
            paths.results,
            machine=LAUNCHER,
            build=False,
            harness=harness_reader(paths, settings),
        )
    out: dict[str, Harness] = {}
    for item in resolved:
        if item.harness is None:
            done.refused.append(
                f"{item.row.where} ({item.key}): its launch script does not resolve at "
                f"{head[:10]} ({item.problem or 'no harness'}), so its identity is unknown"
            )
        else:
            out[item.key] = item.harness
    return out


def _write(
    launch: Path,
    point: ArtifactPoint,
    row: PlanRow,
    harness: Harness,
    head: str,
    pr: int | None,
    source: str,
) -> NewRun:
    """The point's files, written once under its own run folder, as a NewRun."""
    key = job_key(row)
    folder = launch / key
    folder.mkdir(parents=True)
    (folder / ROW_JSON_NAME).write_text(json.dumps(dict(row.data), sort_keys=True, indent=1) + "\n")
    for name, data in point.files.items():
        (folder / name).write_bytes(data)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return NewRun(
        fingerprint=row.fingerprint,
        job_key=key,
        conc=conc_label(row),
        commit_sha=head,
        pr=pr,
        launcher=LAUNCHER,
        started_at=point.timestamp or now,
        ended_at=point.timestamp or now,
        status="succeeded",
        exit_code=0,
        detail=f"imported from {source}: {point.artifact}",
        result_path=str(folder),
        files=record(folder),
        recipe=row_recipe(row),
        harness=harness,
    )


# Artifacts that hold diagnostics, not results: not downloaded.
DIAGNOSTIC_ARTIFACTS = ("eval_server_logs", "eval_gpu_metrics")


@dataclass(frozen=True, slots=True)
class Download:
    """A run's artifacts from GitHub, with what the run says of itself."""

    files: dict[str, bytes]
    head_sha: str
    pulls: tuple[int, ...]


def download_run(repo: GitRepo, settings: Settings, run_id: int, *, unsuccessful: bool) -> Download:
    """The artifacts of GitHub Actions run `run_id` (GITHUB_API_URL, GH_TOKEN):
    refused while it runs, when it did not succeed (unless `unsuccessful`, a
    maintainer's explicit choice), and when an artifact has expired."""
    from governance.forge import open_forge
    from governance.forge.github import GitHubForge
    from governance.forge.github_runs import download, get_run, list_artifacts, unpack

    forge = open_forge("github", repo, settings.repository, main_branch=settings.main_branch)
    assert isinstance(forge, GitHubForge)
    with forge:
        run = get_run(forge, run_id)
        if run.status != "completed":
            raise UsageError(
                f"CI run {run_id} is {run.status or 'not completed'}: its results are not all there",
                "import it when it has completed",
            )
        if run.conclusion != "success" and not unsuccessful:
            raise UsageError(
                f"CI run {run_id} ended {run.conclusion or 'without a conclusion'}: not a reuse "
                "source unless a maintainer chooses it",
                "pass --include-unsuccessful to import what it measured anyway",
            )
        artifacts = [a for a in list_artifacts(forge, run_id)
                     if not a.name.startswith(DIAGNOSTIC_ARTIFACTS)]  # fmt: skip
        expired = [a.name for a in artifacts if a.expired]
        if not artifacts or expired:
            shown = ", ".join(expired[:5]) + (" ..." if len(expired) > 5 else "")
            raise UsageError(
                f"CI run {run_id}: "
                + (f"artifacts expired ({shown})" if expired else "no artifacts"),
                "a run whose artifacts are gone is not a source: sweep the PR again",
            )
        files: dict[str, bytes] = {}
        for artifact in artifacts:
            files.update(unpack(download(forge, artifact), artifact.name))
            if len(files) > MAX_FILES:
                raise UsageError(f"CI run {run_id}: more than {MAX_FILES} JSON files",
                                 "import it by hand (--artifacts DIR)")  # fmt: skip
    return Download(files, run.head_sha, run.pulls)
