"""gov's merge-time edits against the reference's answers on the corpus.

For every dev branch of `goldens/rules/pr-branches.jsonl` (with its synthetic
PR number, and again with its own number where `inferred` gives one) this
replays the reference's merge pipeline with gov's functions:

* `pr_canonicalize`: canonicalize(merge-base bytes, branch bytes, N);
* `resolve` (changelog conflicts): resolve_conflict(stage 1, 2, 3, N), the
  index stages being the merge-base, branch and main blobs;
* `canonicalize`: canonicalize(main bytes, merged bytes, N), where the merged
  bytes are gov's resolution or, for a clean merge, `git merge-file`'s.

Where the reference succeeded gov must produce the same bytes (sha256);
where it refused gov must refuse. The only disagreements allowed are the
deliberate ones of docs/merge-differences.md, each recognised here by what
it is, not by branch name. Run with `pytest -s` to see the agreement table.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from governance.changelog.conflict import resolve_conflict
from governance.changelog.edit import EditResult, canonicalize
from governance.core.codes import STRICTER_CODES
from governance.core.diagnostics import Violation
from governance.core.links import LinkPolicy
from tests.harness import PROJECT

CORPUS = PROJECT.parent / "shared" / "corpus"
GOLDEN = CORPUS / "goldens" / "rules" / "pr-branches.jsonl"
BUNDLE = CORPUS / "inferencex.bundle"
CHANGELOG = "perf-changelog.yaml"
POLICY = LinkPolicy()

# Documented categories (docs/merge-differences.md).
G10 = "G10 dedupe only what main gained"
G11 = "G11 continuation-line link"
G12 = "G12 history's final newline repaired"
STRICTER = "stricter rule (codes.STRICTER_CODES)"

pytestmark = pytest.mark.corpus


class Blobs:
    """`<rev>:perf-changelog.yaml` contents through one `git cat-file --batch`."""

    def __init__(self, repo: Path) -> None:
        self._process = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._memo: dict[str, bytes | None] = {}

    def __call__(self, rev: str) -> bytes | None:
        if rev not in self._memo:
            self._memo[rev] = self._read(f"{rev}:{CHANGELOG}")
        return self._memo[rev]

    def _read(self, spec: str) -> bytes | None:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(spec.encode() + b"\n")
        self._process.stdin.flush()
        header = self._process.stdout.readline().split()
        if header[-1] == b"missing":
            return None
        data = self._process.stdout.read(int(header[2]))
        self._process.stdout.read(1)  # the newline after the contents
        return data

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


@pytest.fixture(scope="module")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Blobs]:
    if not GOLDEN.exists() or not BUNDLE.exists():
        pytest.skip(f"shared corpus not available at {CORPUS} (needs {GOLDEN.name} and bundle)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    # A bare clone maps the bundle's branches to local ones directly: no
    # checkout and no extra fetch are needed to read blobs.
    repo = tmp_path_factory.mktemp("edit-corpus") / "inferencex.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True)
    reader = Blobs(repo)
    yield reader
    reader.close()


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def clean_merge(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """What git's default merge writes for the file when it merges cleanly."""
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(scratch) / name
            path.write_bytes(data)
            paths.append(str(path))
        done = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True)
    return done.stdout if done.returncode == 0 else None


SAME, REFUSE, KIND, UNEXPECTED = "same bytes", "both refuse", "same kind", "UNEXPECTED"
COLUMNS = {  # outcome -> short column title
    SAME: "same",
    REFUSE: "refuse",
    KIND: "kind=",
    G10: "G10",
    G11: "G11",
    G12: "G12",
    STRICTER: "strict",
    UNEXPECTED: "UNEXP",
}


@dataclass
class Tally:
    """Outcome counts per (pipeline, step), and every disagreement."""

    counts: Counter[tuple[str, str, str]]
    disagreements: list[tuple[str, str, str, str]]  # branch, pipeline, step, category

    def add(self, pipeline: str, step: str, outcome: str) -> None:
        self.counts[(pipeline, step, outcome)] += 1

    def table(self) -> str:
        keys = sorted({(p, s) for p, s, _ in self.counts})
        lines = [
            "",
            "gov edits vs reference, goldens/rules/pr-branches.jsonl",
            f"{'pipeline/step':<26}" + "".join(f"{t:>8}" for t in COLUMNS.values()),
        ]
        for pipeline, step in keys:
            cells = "".join(f"{self.counts[(pipeline, step, o)]:>8}" for o in COLUMNS)
            lines.append(f"{pipeline + '/' + step:<26}{cells}")
        lines.append(
            "same: equal sha256 | refuse: both refuse (kind=: with the same kind) | "
            "G10/G11/strict: documented differences (docs/merge-differences.md)"
        )
        return "\n".join(lines)


def compare(
    tally: Tally,
    branch: str,
    where: tuple[str, str],
    ours: EditResult | None,
    golden: dict[str, Any] | None,
    explain: str | None,
) -> str | None:
    """Record one step; returns the disagreement category, None on agreement.
    `ours` None: gov stopped before this step. `explain` names the documented
    reason gov may differ at this branch."""
    pipeline, step = where
    if ours is not None and golden is not None:
        if golden["ok"] and ours.ok and sha256(ours.data) == golden["sha256"]:
            tally.add(pipeline, step, SAME)
            return None
        if not golden["ok"] and not ours.ok:
            tally.add(pipeline, step, REFUSE)
            if golden["kind"] in {kind_of(v) for v in ours.violations}:
                tally.add(pipeline, step, KIND)
            return None
        if golden["ok"] and all(v.code in STRICTER_CODES for v in ours.violations):
            explain = STRICTER  # check's documented stricter rules (docs/rules.md) fired
    category = explain or UNEXPECTED
    tally.add(pipeline, step, category)
    tally.disagreements.append((branch, pipeline, step, category))
    return category


def kind_of(violation: Violation) -> str:
    """The golden `kind` a gov violation corresponds to: rule names are the
    kinds, except that gov splits the reference's one `schema` kind by field."""
    return "schema" if violation.code.startswith("GOV2") else violation.rule


def g10_explains(golden: dict[str, Any] | None, ours: EditResult) -> str | None:
    """The reference emptied the PR by matching historical look-alikes; gov
    kept the entries main did not gain since the merge-base."""
    if golden and golden.get("kind") == "nothing-remaining" and ours.ok:
        return G10
    return None


def g11_explains(golden: dict[str, Any] | None, branch_bytes: bytes) -> str | None:
    """The reference rewrote only the `  pr-link:` line of a link continued
    on the next line, and its self-check rejected `…/pull/N <old value>`."""
    if golden and golden.get("kind") == "pr-link-not-expected" and b"  pr-link:\n" in branch_bytes:
        return G11
    return None


def g12_explains(golden: dict[str, Any] | None, base: bytes, head: bytes) -> str | None:
    """The PR only adds the final newline history lacked: the reference refuses
    (its base check), gov passes it with a GOV316 note (nothing to canonicalize)."""
    repair = not base.endswith(b"\n") and head == base + b"\n"
    if golden and golden.get("kind") == "no-final-newline" and repair:
        return G12
    return None


def run_pipeline(
    tally: Tally,
    row: dict[str, Any],
    pipeline: str,
    block: dict[str, Any],
    blobs: Blobs,
    merged_clean: bytes | None,
) -> None:
    """The merge helper's steps for one branch and one PR number."""
    number: int = block["pr_number"]
    branch = row["branch"]
    base, head, main = blobs(row["merge_base"]), blobs(row["branch_head"]), blobs(row["main_head"])
    assert base is not None and head is not None and main is not None

    early = canonicalize(base, head, number, POLICY, path="perf-changelog.yaml")
    golden = block["pr_canonicalize"]
    explain = g11_explains(golden, head) or g12_explains(golden, base, head)
    compare(tally, branch, (pipeline, "pr_canonicalize"), early, golden, explain)

    merged: bytes | None = None
    upstream: str | None = None  # a disagreement at resolve carries over to canonicalize
    if row["merge"]["status"] == "changelog-conflict":
        resolved = resolve_conflict(base, head, main, number, POLICY, path="perf-changelog.yaml")
        golden = block["resolve"]
        explain = g10_explains(golden, resolved) or g11_explains(golden, head)
        upstream = compare(tally, branch, (pipeline, "resolve"), resolved, golden, explain)
        merged = resolved.data if resolved.ok else None
    elif row["merge"]["status"] == "clean":
        assert sha256(merged_clean) == block["merged_sha256"], f"{branch}: git merge-file differs"
        merged = merged_clean
    golden = block["canonicalize"]
    if merged is None and golden is None:
        return  # neither side got this far
    late = (
        canonicalize(main, merged, number, POLICY, path="perf-changelog.yaml")
        if merged is not None
        else None
    )
    if golden is None or late is None:
        # One side stopped at resolve: that disagreement, already recorded,
        # is the reason; there is nothing of its own to compare here.
        assert upstream is not None, f"{branch}: merged bytes on one side only, no reason"
        tally.add(pipeline, "canonicalize", upstream)
        tally.disagreements.append((branch, pipeline, "canonicalize", upstream))
        return
    compare(tally, branch, (pipeline, "canonicalize"), late, golden, upstream)


def test_edits_agree_with_reference(blobs: Blobs) -> None:
    rows = [json.loads(line) for line in GOLDEN.read_text("utf-8").splitlines() if line]
    assert len(rows) == 400
    tally = Tally(Counter(), [])
    for row in rows:
        merged_clean = None
        if row["merge"]["status"] == "clean":
            base, head, main = (blobs(row[k]) for k in ("merge_base", "branch_head", "main_head"))
            assert base is not None and head is not None and main is not None
            merged_clean = clean_merge(base, head, main)
        run_pipeline(tally, row, "synthetic", row, blobs, merged_clean)
        if row["inferred"]:
            run_pipeline(tally, row, "inferred", row["inferred"], blobs, merged_clean)
    print(tally.table())
    for branch, pipeline, step, category in tally.disagreements:
        print(f"  {category}: {pipeline}/{step} {branch}")
    unexpected = [d for d in tally.disagreements if d[3] == UNEXPECTED]
    assert not unexpected, f"undocumented disagreements: {unexpected}"


MAIN_TIP = "fe73901b3cc0e4bccb2ce896ac37deda190e7eb6"
NEW_ENTRY = (
    b"- config-keys:\n"
    b"    - gov-demo-config\n"
    b"  description:\n"
    b'    - "an entry main gained after the merge-base"\n'
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/99998\n"
)


def with_link(block: bytes, link: bytes) -> bytes:
    lines = block.splitlines(keepends=True)
    return b"".join(
        b"  pr-link: " + link + b"\n" if ln.startswith(b"  pr-link:") else ln for ln in lines
    )


def test_g10_historical_lookalike_is_kept(blobs: Blobs) -> None:
    """Spec case `dedupe-historical`: the PR re-appends entry 209's text; main
    gained an unrelated entry. The reference refuses (no contribution
    remaining); gov keeps the PR's entry, since main did not gain it."""
    from governance.changelog.document import parse

    main = blobs(MAIN_TIP)
    assert main is not None
    history = parse(main, CHANGELOG).changelog
    assert history is not None
    lookalike = with_link(history.block(history.entries[208]), b"XXX")
    pr_side = main + b"\n" + lookalike
    main_side = main + b"\n" + NEW_ENTRY
    result = resolve_conflict(main, pr_side, main_side, 4242, POLICY, path="perf-changelog.yaml")
    assert result.ok, result.violations
    assert result.dropped == ()
    canonical = with_link(lookalike, POLICY.expected(4242).encode())
    assert result.data == main_side + b"\n" + canonical


def test_g11_continuation_placeholder_is_rewritten(blobs: Blobs) -> None:
    """Spec case `continuation-link`: a placeholder on the line after
    `  pr-link:`. The reference writes `…/pull/N XXX` and refuses; gov
    rewrites the value itself."""
    main = blobs(MAIN_TIP)
    assert main is not None
    entry = NEW_ENTRY.replace(b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/99998",
                              b"  pr-link:\n    XXX")  # fmt: skip
    result = canonicalize(main, main + b"\n" + entry, 4242, POLICY, path="perf-changelog.yaml")
    assert result.ok, result.violations
    assert result.data.endswith(b"  pr-link:\n    " + POLICY.expected(4242).encode() + b"\n")
    assert [(r.old, r.new) for r in result.rewrites] == [("XXX", POLICY.expected(4242))]
