"""Corpus history: gov's plan equals the reference processor's output for
every recorded commit (default and --trim-conc), and gov rejects the commits
the reference rejected, for the same fault.

Records come from `goldens/matrix/process-changelog.jsonl`; base = parent,
head = commit, inputs read from a scratch clone of the corpus bundle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.core.blockcache import BlockCache
from governance.core.settings import Settings
from governance.git.repo import GitRepo
from governance.matrix.errors import MatrixError
from governance.matrix.sources import plan_between

from .corpus import GOLDENS
from .test_synthetic import expected_fragments

RECORDS_FILE = GOLDENS / "process-changelog.jsonl"


def _commits() -> list[tuple[str, dict[str, dict[str, Any]]]]:
    if not RECORDS_FILE.exists():
        return []
    by_commit: dict[str, dict[str, dict[str, Any]]] = {}
    for line in RECORDS_FILE.read_text("utf-8").splitlines():
        record = json.loads(line)
        by_commit.setdefault(record["commit"], {})[record["mode"]] = record
    return list(by_commit.items())


COMMITS = _commits()


@pytest.fixture(scope="module")
def repo(corpus_repo: Path) -> GitRepo:
    return GitRepo(corpus_repo)


def test_record_count() -> None:
    if not COMMITS:
        pytest.skip(f"process-changelog goldens not available: {RECORDS_FILE.resolve()}")
    assert len(COMMITS) == 140
    assert all(set(modes) == {"default", "trim-conc"} for _, modes in COMMITS)


def reference_message(record: dict[str, Any]) -> list[str]:
    """Fragments gov's first violation must contain for a failed record."""
    error = record.get("generator_error") or record["error"]
    return expected_fragments(error)


@pytest.mark.corpus
@pytest.mark.parametrize(("commit", "records"), COMMITS, ids=[c[:10] for c, _ in COMMITS])
def test_plan_matches_reference(
    commit: str, records: dict[str, dict[str, Any]], repo: GitRepo, block_cache: BlockCache
) -> None:
    for mode, record in records.items():

        def run(
            record: dict[str, Any] = record, mode: str = mode, validate_all: bool = True
        ) -> Any:
            return plan_between(
                repo,
                record["parent"],
                record["commit"],
                trim_conc=mode == "trim-conc",
                layout=Settings().layout(),
                cache=block_cache,
                validate_all=validate_all,
            )

        if record["ok"]:
            result = run()
            assert result.document == record["output"], f"{commit[:10]} {mode}"
            # byte-compatible with the reference's JSON, key order included
            assert json.dumps(result.document) == json.dumps(record["output"])
            # validating only the selected configs must not change the plan
            assert run(validate_all=False).document == record["output"]
            continue
        with pytest.raises(MatrixError) as raised:
            run()
        first = raised.value.violations[0].message
        for fragment in reference_message(record):
            assert fragment in first, (commit[:10], mode, fragment, first)
