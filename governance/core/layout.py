"""Where a repository keeps the files gov reads, as of one revision (pure).

The settings say where the changelog, the master configs and the runner file
are (`Settings.layout()`); a revision may have them elsewhere: InferenceX
moved `.github/configs/` to `configs/` in #1992, so every branch forked
before it has its masters at the old paths. `Layout.at` is the one rule every
door uses (check, plan, matrix, prepare-merge, audit): a configured file that
the revision has is read there; one it lacks is read where the revision keeps
a file of the same name (the shortest such path); with neither, the
configured path stays and reading it reports the file missing (GOV510).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Layout:
    changelog: str
    masters: tuple[str, ...]
    runners: str
    # (configured path, the path this revision has it at), for messages
    moved: tuple[tuple[str, str], ...] = ()

    def at(self, exists: Callable[[str], bool], listing: Callable[[], Iterable[str]]) -> Layout:
        """This layout as one revision has it. `exists(path)`: the revision has
        that file; `listing()`: every file path of the revision (only called
        when a configured file is missing)."""
        paths: list[str] | None = None
        moved: list[tuple[str, str]] = []

        def find(path: str) -> str:
            nonlocal paths
            if exists(path):
                return path
            if paths is None:
                paths = list(listing())
            found = same_name(paths, path)
            if found is None:
                return path
            moved.append((path, found))
            return found

        masters = tuple(find(path) for path in self.masters)
        runners = find(self.runners)
        return replace(self, masters=masters, runners=runners, moved=tuple(moved))

    def describe_moves(self) -> str:
        """ "" or "; configs/a.yaml read at .github/configs/a.yaml", for labels."""
        return "".join(f"; {old} read at {new}" for old, new in self.moved)


def same_name(paths: Sequence[str], wanted: str) -> str | None:
    """The shortest path in `paths` with `wanted`'s file name, if any."""
    name = posixpath.basename(wanted)
    matches = [p for p in paths if posixpath.basename(p) == name]
    return min(matches, key=lambda p: (p.count("/"), p)) if matches else None
