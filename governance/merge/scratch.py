"""What prepare-merge may touch outside its journal, and how it lets go of it.

* The scratch ref `refs/gov/prepare-merge/pr-N` is deleted only by
  compare-and-swap at a value the journal records gov set (`drop_scratch`):
  gov deletes only what it can prove it created.
* The shared checkout (HEAD, index, working tree) is touched only under its
  kernel lock (`checkout_lock`), and a branch about to move is first stepped
  off (`step_off`: HEAD detached, re-attached at the end), so a run on
  another PR that re-attached it meanwhile never sees it go stale.
* What a killed run leaves outside git's refs (`clean_litter`): processes
  it launched, its `gov-sweep-<pid>-*` linked worktree, `gov-index-<pid>-*`
  temporary folders. The pid in the name (and in the launched processes'
  environment) proves whose they are; only a dead owner's are removed, and
  not while a launch it started still runs from them (a later run adopts it):
  neither while a local process runs files in them, nor while this
  repository's ledger holds a launch of that owner still open (a Slurm task
  is no local process gov can see). A `gov-sweep-*` checkout is removed only
  by its own repository: another repository's may serve its own open launches.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from governance.core import locks
from governance.git.repo import GitRepo
from governance.merge import journal as jr


def drop_scratch(repo: GitRepo, journal: jr.Journal) -> bool:
    """Delete the run's scratch ref while it holds the prepared commit or the
    PR head (the values gov set); True when deleted."""
    current = repo.ref_sha(journal.scratch_ref)
    ours = {journal.prepared, journal.pr_head} - {""}
    return current in ours and repo.delete_ref(journal.scratch_ref, current)


def checkout_lock(repo: GitRepo) -> AbstractContextManager[None]:
    """The shared checkout's lock (blocking, short)."""
    return locks.hold(jr.checkout_lock_path(repo.git_dir), "the checkout", wait=True)


def step_off(repo: GitRepo, journal: jr.Journal | None, path: Path, branch: str) -> None:
    """Detach HEAD if `branch` (about to move) is checked out; the caller holds
    `checkout_lock`. The journal remembers to check it out again."""
    if repo.worktree.current_branch() != branch:
        return
    repo.worktree.detach_head()
    if journal is not None and journal.original_branch is None:
        journal.original_branch = branch
        jr.save(path, journal)


def step_back(repo: GitRepo, branch: str | None) -> bool:
    """Check `branch` out again if HEAD is detached and it still exists (under
    the checkout lock); True when it did."""
    with checkout_lock(repo):
        if (
            branch
            and repo.worktree.current_branch() is None
            and repo.ref_sha(f"refs/heads/{branch}")
        ):
            repo.worktree.checkout(branch)
            return True
    return False


_OWNED = re.compile(r"gov-(sweep|index)-(\d+)-")


def _dead(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return False


def _open_launch_owners(repo: GitRepo) -> set[int]:
    """Pids of the owners of this repository's launches still open in its ledger."""
    from governance.core.state import StateLayout
    from governance.sweeps.launches import Launches
    from governance.sweeps.ledger import Ledger

    path = StateLayout(repo.git_dir).runs_db
    if not path.exists():
        return set()
    with Ledger(path) as ledger:
        owners = [launch.owner for launch in Launches(ledger).still_open()]
    return {int(pid) for pid, _, _ in (o.partition(":") for o in owners) if pid.isdigit()}


def clean_litter(repo: GitRepo, results: Path) -> list[str]:
    """End the processes dead runs launched for `results`, remove their
    linked worktrees and temporary folders; what was done, for the report."""
    from governance.sweeps.orphans import in_use, kill_orphans

    done = []
    killed = kill_orphans(results)
    if killed:
        done.append(f"ended {killed} process(es) a dead run launched")
    busy = in_use()  # files of launches that still run, any repository's (adopted, not killed)
    waited = _open_launch_owners(repo)  # a dead run's launches this repository may still adopt

    def free(folder: Path) -> bool:
        match = _OWNED.match(folder.name)
        if match is None:
            return False
        owner = int(match.group(2))
        inside = (f"{folder}/", f"{folder.resolve()}/")
        return (
            _dead(owner) and owner not in waited and not any(arg.startswith(inside) for arg in busy)
        )

    def ours(entry: Path) -> bool:
        """A sweep checkout of this repository, or an index scratch folder (any
        repository's: it serves no launch)."""
        if entry.name.startswith("gov-index-"):
            return True
        try:
            link = (entry / "tree" / ".git").read_text("utf-8").strip()
        except OSError:
            return not (entry / "tree").exists()  # its checkout is gone: only an empty folder
        gitdir = Path(link.removeprefix("gitdir: "))
        return gitdir.resolve().is_relative_to(repo.git_dir.resolve())

    removed = 0
    for tree in repo.worktree.linked_paths():
        if free(tree.parent):
            repo.worktree.remove_linked(tree)
            removed += 1
    folders = 0
    for entry in Path(tempfile.gettempdir()).glob("gov-*-*-*"):
        if entry.is_dir() and not entry.is_symlink() and free(entry) and ours(entry):
            shutil.rmtree(entry, ignore_errors=True)
            folders += 1
    if removed or folders:  # forget worktrees whose folders just went
        repo.worktree.prune_linked()
    if removed:
        done.append(f"removed {removed} linked worktree(s) of a dead run")
    if folders:
        done.append(f"removed {folders} temporary folder(s) of a dead run")
    return done
