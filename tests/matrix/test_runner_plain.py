"""The runner file's plain case (`runners._plain_hardware`) against the
pydantic schema (`model.RunnerConfig`): it vouches only for what the schema
accepts, with the same values, and covers the real runner files."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from governance.core import yamlsafe
from governance.matrix.masterfile import SourceFile
from governance.matrix.model import RunnerConfig
from governance.matrix.runners import Hardware, _schema_checked, parse_runner_file
from tests.harness import RUNNER_FILE

_VALUES = st.one_of(
    st.integers(-2, 4), st.booleans(), st.none(), st.text(max_size=2),
    st.floats(allow_nan=False, width=16),
)  # fmt: skip
_MACHINE = st.dictionaries(
    st.sampled_from(["available-cpu-dram-mib", "gpus-per-node", "gpus_per_node", "x"]),
    _VALUES, max_size=3,
)  # fmt: skip


def _model(raw: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, Hardware]] | None:
    try:
        config = RunnerConfig.model_validate(raw)
    except ValidationError:
        return None
    hardware = {
        label: Hardware(m.available_cpu_dram_mib, m.gpus_per_node)
        for label, m in config.hardware.items()
    }
    return dict(config.labels), hardware


@settings(max_examples=600, deadline=None)
@given(
    hardware=st.one_of(
        st.none(), _VALUES, st.dictionaries(st.one_of(st.text(max_size=2), st.integers()), _MACHINE)
    ),
    extra=st.booleans(),
)
def test_the_plain_case_agrees_with_the_schema(hardware: Any, extra: bool) -> None:
    raw: dict[Any, Any] = {"labels": {"h200": ["h200-node-0"]}}
    if hardware is not None:
        raw["hardware"] = hardware
    if extra:
        raw["unknown"] = 1
    checked = _schema_checked(raw, "labels: {}\n", RUNNER_FILE)
    expected = _model(raw)
    if expected is None:
        assert isinstance(checked, list) and checked, raw  # violations, from the schema
    else:
        assert checked == expected, raw


def test_the_real_runner_files_are_plain(corpus_clone: Path) -> None:
    """The runner file at every tenth change of corpus main: read the plain
    way, with the schema's values (and pydantic never asked)."""
    commits = subprocess.run(
        ["git", "log", "--format=%H", "origin/main", "--", RUNNER_FILE],
        cwd=corpus_clone, check=True, capture_output=True, text=True,
    ).stdout.split()[::10]  # fmt: skip
    assert commits
    for commit in commits:
        data = subprocess.run(
            ["git", "show", f"{commit}:{RUNNER_FILE}"],
            cwd=corpus_clone, check=True, capture_output=True,
        ).stdout  # fmt: skip
        found, problems = parse_runner_file(SourceFile(RUNNER_FILE, data))
        if problems:
            continue  # an old file the schema rejects: not the plain case's to judge
        assert found is not None
        raw = yamlsafe.load(data.decode())
        assert (found.labels, found.hardware) == _model(raw), commit
