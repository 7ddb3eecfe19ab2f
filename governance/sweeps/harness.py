"""What a row runs besides its recipe: the harness (pure: a file reader in, data out).

A row's harness is its launch script and every repository file the script
reaches *statically*, followed transitively through shell files:

* a path after `$(dirname "$0")`, `$(dirname "${BASH_SOURCE[0]}")` (or a
  variable assigned from either, `SCRIPT_DIR="$(cd "$(dirname …)" && pwd)"`),
  resolved against the folder of the file that names it;
* the literal path of a `source` / `.` command, relative to the repository
  root (the reference's runners start scripts from the checkout's root);
* the recipe file a row names (`CONFIG_FILE`) and its recipe runner;
* the files matched by the `harness-inputs` setting, for every row.

Anything else (a path built from another variable, an absolute container
path, the image's contents) is not seen: `Harness.unseen` lists the dynamic
`source` commands so docs and reports can say so (docs/sweeps.md,
'Row identity'). Each file is named by its git blob id, so the harness of a
run recorded from a checkout and the files of a commit compare directly.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from governance.core.fingerprint import canonical_json, git_blob_id, sha256_hex

# The folder of the running script, as shell spells it.
_SELF_DIR = (
    r"\$\(\s*dirname\s+(?:\"?\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE)\"?)\s*\)"
    r"|`\s*dirname\s+\"?\$(?:0|\{BASH_SOURCE(?:\[0\])?\})\"?\s*`"
)
# X="$(cd "$(dirname "$0")" && pwd)", X=$(dirname "$0"), X="$(dirname …)"
_DIR_ASSIGN = re.compile(
    r"^\s*(?:export\s+|local\s+|readonly\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)="
    r"\"?\$\(\s*cd\s+\"?(?:" + _SELF_DIR + r")\"?\s*(?:&&|;)\s*pwd(?:\s+-P)?\s*\)\"?\s*(?:$|[;#])"
    r"|^\s*(?:export\s+|local\s+|readonly\s+)?(?P<name2>[A-Za-z_][A-Za-z0-9_]*)="
    r"\"?(?:" + _SELF_DIR + r")\"?\s*(?:$|[;#])"
)
_PATH_TAIL = r"(?P<tail>(?:/[A-Za-z0-9._+-]+)+)"
_SOURCE = re.compile(
    r"(?:^|[;&|]\s*|\bthen\s+|\bdo\s+)(?:source|\.)\s+"
    r"(?P<arg>(?:\"(?:[^\"\\]|\\.|\$\([^)]*\))*\"|'[^']*'|\$\([^)]*\)|[^\s;&|\"'])+)"
)
_LITERAL = re.compile(r"[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)*")
SHELL_SUFFIXES = (".sh", ".bash", ".env")
MAX_SCAN_BYTES = 1 << 20  # a "script" larger than this is hashed, not scanned


@dataclass(frozen=True, slots=True)
class Harness:
    """The files a row runs, by repository path (or absolute path outside the
    repository), each with its blob id."""

    files: tuple[tuple[str, str], ...] = ()
    unseen: tuple[str, ...] = ()  # "path:line: source $X" gov could not follow

    @property
    def digest(self) -> str:
        return harness_digest(self.as_dict())

    def as_dict(self) -> dict[str, str]:
        return dict(self.files)

    def changed(self, other: Mapping[str, str]) -> list[str]:
        """Paths whose blob differs from `other` (or exist in only one of the two)."""
        mine = self.as_dict()
        return sorted(p for p in mine.keys() | other.keys() if mine.get(p) != other.get(p))


def harness_digest(files: Mapping[str, str]) -> str:
    """One digest for {path: blob id}: what a row identity holds."""
    return sha256_hex(canonical_json([[path, files[path]] for path in sorted(files)]))


# path -> (blob id, the file's bytes when it is small enough to scan, else
# b""), or None when the checkout holds no regular file there.
Reader = Callable[[str], tuple[str, bytes] | None]


def mapping_reader(files: Mapping[str, bytes]) -> Reader:
    """A Reader over in-memory files (tests, git trees read up front)."""

    def read(path: str) -> tuple[str, bytes] | None:
        data = files.get(path)
        if data is None:
            return None
        return git_blob_id(data), data if len(data) <= MAX_SCAN_BYTES else b""

    return read


def _is_shell(path: str, data: bytes) -> bool:
    if path.endswith(SHELL_SUFFIXES):
        return True
    first = data[:128].split(b"\n", 1)[0]
    return first.startswith(b"#!") and (b"sh" in first.rsplit(b"/", 1)[-1])


def _code_lines(text: str) -> Iterable[tuple[int, str]]:
    """Lines with their comment-only form dropped (a `#` inside a word stays)."""
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        yield number, line


@dataclass(frozen=True, slots=True)
class References:
    """What one file names: exact repository paths, and `source` commands whose
    target is dynamic (`$ROOT/benchmarks/lib.sh`) or absolute (a container
    mount such as `/workspace/benchmarks/lib.sh`), with the repository paths
    their literal tail could be, longest first."""

    paths: tuple[str, ...]
    loose: tuple[tuple[str, tuple[str, ...]], ...]


def _suffixes(arg: str) -> tuple[str, ...]:
    """`$X/benchmarks/lib.sh` -> ("benchmarks/lib.sh", "lib.sh")."""
    tail = re.split(r"[$`}]", arg)[-1]
    parts = [p for p in tail.split("/") if p]
    if not parts or not all(_LITERAL.fullmatch(p) and p not in (".", "..") for p in parts):
        return ()
    return tuple("/".join(parts[i:]) for i in range(len(parts)))


def references(path: str, text: str) -> References:
    """The repository paths `text` names statically (see the module docstring).

    `path` is the file's own repository path: self-relative references are
    resolved against its folder. Paths that climb above the repository root
    are dropped (they cannot name a repository file)."""
    here = posixpath.dirname(path)
    found: list[str] = []
    loose: list[tuple[str, tuple[str, ...]]] = []

    def add(relative: str, base: str) -> None:
        joined = posixpath.normpath(posixpath.join(base, relative.lstrip("/")))
        if joined not in (".", "..") and not joined.startswith("../"):
            found.append(joined)

    self_dir = _SELF_DIR
    for number, line in _code_lines(text):
        assigned = _DIR_ASSIGN.match(line)
        if assigned:
            name = assigned["name"] or assigned["name2"]
            self_dir += rf"|\$\{{{re.escape(name)}\}}|\${re.escape(name)}\b"
        for match in re.finditer(r"(?:" + self_dir + r")\"?" + _PATH_TAIL, line):
            add(match["tail"], here)
        for match in _SOURCE.finditer(line):
            arg = match["arg"].replace('"', "").replace("'", "")
            if re.match(r"(?:" + self_dir + r")/", arg):
                continue  # found above
            if "$" in arg or "`" in arg or arg.startswith("/"):
                loose.append((f"{path}:{number}: source {arg}", _suffixes(arg)))
            elif _LITERAL.fullmatch(arg):
                add(arg, "")
    return References(tuple(found), tuple(loose))


class Tracer:
    """Traces harnesses over one checkout; a file is read and scanned once."""

    def __init__(self, read: Reader, inputs: Sequence[str] = ()) -> None:
        self._read = read
        self._inputs = tuple(inputs)  # repository paths every row's harness includes
        self._seen: dict[str, tuple[str | None, tuple[str, ...], tuple[str, ...]]] = {}

    def _visit(self, path: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
        cached = self._seen.get(path)
        if cached is not None:
            return cached
        found = self._read(path)
        if found is None:
            result: tuple[str | None, tuple[str, ...], tuple[str, ...]] = (None, (), ())
            self._seen[path] = result
            return result
        blob, data = found
        if data and _is_shell(path, data):
            named = references(path, data.decode("utf-8", "replace"))
            children, unseen = list(named.paths), []
            for command, candidates in named.loose:
                hit = next((c for c in candidates if self._read(c) is not None), None)
                if hit is None:
                    unseen.append(command)
                else:  # the tail names a repository file: count it (over-counting only reruns)
                    children.append(hit)
            result = (blob, tuple(children), tuple(unseen))
        else:
            result = (blob, (), ())
        self._seen[path] = result
        return result

    def trace(self, entry_points: Iterable[str]) -> Harness:
        """The harness of a row whose launch starts at `entry_points` (its
        script, its recipe, its recipe runner), plus the `harness-inputs`."""
        files: dict[str, str] = {}
        unseen: list[str] = []
        todo = [*entry_points, *self._inputs]
        while todo:
            path = todo.pop()
            if path in files:
                continue
            blob, children, dynamic = self._visit(path)
            if blob is None:  # named but not a file of the checkout: nothing ran from it
                continue
            files[path] = blob
            unseen.extend(dynamic)
            todo.extend(children)
        return Harness(tuple(sorted(files.items())), tuple(sorted(set(unseen))))
