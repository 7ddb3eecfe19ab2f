"""Plain names (docs/rules.md, 'Plain names'): a name that selects rows is
ASCII; hidden characters in appended entries are a warning.

The attack this closes: a config key spelled with a Cyrillic `а` holding a
copy of an old master-config block passed `gov check` with no word, so the
real config could be bumped and never swept.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governance.changelog.rules import CheckMode, KnownKeys, check
from governance.check.service import CheckOptions, CheckResult, run_check
from governance.core.links import LinkPolicy
from governance.core.plain import fold, hidden_controls, lookalike
from governance.core.settings import load_settings
from governance.git.repo import GitRepo
from governance.matrix.additions import Additions
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.masterfile import SourceFile
from governance.matrix.plan import PlanOptions, plan_additions
from tests.harness import PROJECT, Repo, run_gov

AMD = "configs/amd-master.yaml"
RUNNERS = "configs/runners.yaml"
CHANGELOG = "perf-changelog.yaml"
REAL = "dsr1-fp8-mi300x-sglang"
SPOOF = "dsr1-fp8-mi300x-sgl\u0430ng"  # U+0430 CYRILLIC SMALL LETTER A
ENTRY = "\n- config-keys:\n    - {key}\n  description:\n    - {text}\n  pr-link: XXX\n"


@pytest.fixture
def pr(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    return example_repo


def append(repo: Repo, key: str = REAL, text: str = '"Retune MI300X"') -> None:
    changelog = repo.path / CHANGELOG
    changelog.write_text(
        changelog.read_text(encoding="utf-8") + ENTRY.format(key=key, text=text), encoding="utf-8"
    )


def spoof_block(repo: Repo, key: str = SPOOF, old: str = "", new: str = "") -> None:
    """Append a copy of REAL's block under `key` (optionally edited) to the AMD master."""
    amd = repo.path / AMD
    text = amd.read_text(encoding="utf-8")
    start = text.index(f"{REAL}:\n")
    block = text[start : text.index("\n\n", start) + 1].replace(REAL, key, 1)
    amd.write_text(text + "\n" + block.replace(old, new, 1), encoding="utf-8")


def run(repo: Repo) -> CheckResult:
    git = GitRepo(repo.path)
    settings = load_settings(git.root)
    return run_check(git, settings, CheckOptions(CheckMode.pr_mode(2194), base_ref="main"))


def position(repo: Repo, path: str, needle: str) -> tuple[int, int]:
    """1-based (line, column) of the first occurrence of `needle` in `path`."""
    for number, line in enumerate((repo.path / path).read_text("utf-8").split("\n"), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in {path}")


def test_a_look_alike_key_fails_at_its_character_naming_the_real_key(pr: Repo) -> None:
    spoof_block(pr)  # the copy the look-alike key would select
    append(pr, SPOOF)
    pr.commit("retune")
    result = run(pr)
    assert not result.verdict.ok
    (entry,) = [v for v in result.verdict.violations if v.path == CHANGELOG]
    assert entry.code == "GOV503"
    line, column = position(pr, CHANGELOG, "\u0430")
    assert (entry.line, entry.column) == (line, column)
    assert f"U+0430 CYRILLIC SMALL LETTER A at column {column} looks like 'a'" in entry.message
    assert f"'{REAL}'" in entry.message
    assert f"`{REAL}`" in entry.hint
    assert SPOOF not in result.verdict.config_keys  # nothing is selected by it


def test_a_look_alike_key_without_a_block_is_not_also_unknown(pr: Repo) -> None:
    append(pr, SPOOF)
    pr.commit("retune")
    codes = [v.code for v in run(pr).verdict.violations]
    assert codes == ["GOV503"]  # not GOV501 as well


def test_a_look_alike_master_key_is_located_in_the_master_file(pr: Repo) -> None:
    spoof_block(pr)
    append(pr)  # the entry names the real key; the copy alone is refused
    pr.commit("retune")
    (found,) = [v for v in run(pr).verdict.violations if v.code == "GOV519"]
    line, column = position(pr, AMD, "\u0430")
    assert (found.path, found.line, found.column) == (AMD, line, column)
    assert f"it imitates '{REAL}'" in found.message


def test_cli_prints_the_master_key_at_configs_line_column(pr: Repo) -> None:
    spoof_block(pr)
    append(pr, SPOOF)
    pr.commit("retune")
    done = run_gov("check", "--pr", "2194", "--base-ref", "main", cwd=pr.path)
    assert done.exit_code == 1
    line, column = position(pr, AMD, "\u0430")
    assert f"{AMD}:{line}:{column}: GOV519 master config key" in done.stdout, done.stdout
    assert f"{CHANGELOG}:" in done.stdout and "GOV503" in done.stdout


def test_a_fullwidth_runner_label_in_a_config(pr: Repo) -> None:
    amd = pr.path / AMD
    text = amd.read_text(encoding="utf-8")
    amd.write_text(text.replace("runner: mi300x", "runner: mi300\uff58", 1), encoding="utf-8")
    append(pr)
    pr.commit("retune")
    found = [v for v in run(pr).verdict.violations if v.code.startswith("GOV52")]
    assert [v.code for v in found] == ["GOV523"]  # not GOV521 (unknown label) as well
    line, column = position(pr, AMD, "\uff58")
    assert (found[0].path, found[0].line, found[0].column) == (AMD, line, column)
    assert "U+FF58 FULLWIDTH LATIN SMALL LETTER X" in found[0].message
    assert "looks like 'x'" in found[0].message and "imitates 'mi300x'" in found[0].message


def test_a_fullwidth_label_in_the_runner_file(pr: Repo) -> None:
    runners = pr.path / RUNNERS
    text = runners.read_text(encoding="utf-8")
    runners.write_text(text.replace("  b200:\n", "  b\uff1200:\n", 1), encoding="utf-8")
    append(pr)
    pr.commit("retune")
    (found,) = [v for v in run(pr).verdict.violations if v.code == "GOV523"]
    line, column = position(pr, RUNNERS, "\uff12")
    assert (found.path, found.line, found.column) == (RUNNERS, line, column)
    assert "FULLWIDTH DIGIT TWO" in found.message and "`b200`" in found.hint


def test_a_non_ascii_script_name_in_a_config(pr: Repo) -> None:
    amd = pr.path / AMD
    text = amd.read_text(encoding="utf-8")
    amd.write_text(text.replace("framework: sglang", "framework: sgl\u0430ng", 1), "utf-8")
    append(pr)
    pr.commit("retune")
    (found,) = [v for v in run(pr).verdict.violations if v.code == "GOV519"]
    assert (found.path, found.line) == (AMD, position(pr, AMD, "\u0430")[0])
    assert "framework" in found.message


def test_a_bidi_override_in_a_description_is_a_warning_only(pr: Repo) -> None:
    append(pr, text='"Retune MI300X \u202eevil"')
    pr.commit("retune")
    result = run(pr)
    assert result.verdict.ok, result.verdict.violations
    (warning,) = result.warnings
    assert warning.code == "GOV209"
    assert (warning.line, warning.column) == position(pr, CHANGELOG, "\u202e")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in warning.message
    done = run_gov("check", "--pr", "2194", "--base-ref", "main", cwd=pr.path)
    assert done.exit_code == 0, done.stdout
    assert "warning: GOV209" in done.stdout
    assert "\u202e" not in done.stdout  # the excerpt cannot reorder the terminal
    as_json = run_gov(
        "check", "--pr", "2194", "--base-ref", "main", "--format", "json", cwd=pr.path
    )
    assert as_json.exit_code == 0
    assert [w["code"] for w in json.loads(as_json.stdout)["warnings"]] == ["GOV209"]


def test_a_zero_width_space_is_a_warning_too(pr: Repo) -> None:
    append(pr, text='"Re\u200btune"')
    pr.commit("retune")
    result = run(pr)
    assert result.verdict.ok
    assert [w.code for w in result.warnings] == ["GOV209"]


def test_unicode_in_a_description_is_fine(pr: Repo) -> None:
    append(pr, text='"TP 8 → 4, 2× faster, ≥ 10% — 中文说明，完成"')
    pr.commit("retune")
    result = run(pr)
    assert result.verdict.ok, result.verdict.violations
    assert result.warnings == []


def test_gov_plan_refuses_to_select_rows_by_a_look_alike_key() -> None:
    masters = [
        SourceFile(p, (PROJECT / p).read_bytes()) for p in (AMD, "configs/nvidia-master.yaml")
    ]
    catalog = Catalog(masters, SourceFile(RUNNERS, (PROJECT / RUNNERS).read_bytes()))
    lines = ENTRY.format(key=SPOOF, text='"x"').strip("\n").split("\n")
    additions = Additions(CHANGELOG, tuple(lines), tuple(range(100, 100 + len(lines))))
    with pytest.raises(MatrixError) as refused:
        plan_additions(
            additions,
            catalog,
            PlanOptions(base_ref="a", head_ref="b", changelog_path="perf-changelog.yaml"),
        )
    (found,) = refused.value.violations
    assert (found.code, found.line, found.column) == ("GOV503", 101, 7 + len("dsr1-fp8-mi300x-sgl"))
    assert f"'{REAL}'" in found.message


# -- the pure rule (the audit door) and its properties --------------------------------

BASE = b'- config-keys:\n    - a\n  description:\n    - "x"\n  pr-link: XXX\n'


def appended(key: str, text: str = '"x"') -> bytes:
    return BASE + ENTRY.format(key=key, text=text).encode("utf-8")


def test_the_pure_check_names_the_key_and_matches_a_spoofed_wildcard() -> None:
    known = KnownKeys([REAL, "dsr1-fp8-mi300x-sglang-mtp"], AMD)
    policy = LinkPolicy()
    head = appended("dsr1-fp8-mi300x-sgl\u0430ng*")
    verdict = check(BASE, head, policy, CheckMode(), known_keys=known, path="perf-changelog.yaml")
    (found,) = verdict.violations
    assert found.code == "GOV503" and (found.line, found.column) == (8, 26)
    assert f"'{REAL}' or 'dsr1-fp8-mi300x-sglang-mtp'" in found.message


@given(st.from_regex(r"[a-z0-9][a-z0-9._-]{0,40}", fullmatch=True))
def test_an_ascii_key_never_trips_the_rule(key: str) -> None:
    policy = LinkPolicy()
    verdict = check(
        BASE,
        appended(key),
        policy,
        CheckMode(),
        known_keys=KnownKeys([key]),
        path="perf-changelog.yaml",
    )
    assert not [v for v in verdict.violations if v.code == "GOV503"]
    assert verdict.warnings == []


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_text_folds_to_itself_and_hides_nothing(text: str) -> None:
    assert fold(text) == text
    assert hidden_controls(text) == []
    assert lookalike(text, [text]) is None


SPOOFS = {"a": "\u0430", "e": "\u0435", "o": "\u03bf", "p": "\u0440", "x": "\uff58", "1": "\uff11"}


@given(st.sampled_from([REAL, "dsv4-fp8-mi300x-vllm", "dsr1-fp4-b200-sglang"]), st.data())
def test_one_spoofed_character_folds_back_to_the_key(key: str, data: st.DataObject) -> None:
    spots = [i for i, char in enumerate(key) if char in SPOOFS]
    spot = data.draw(st.sampled_from(spots))
    spoofed = key[:spot] + SPOOFS[key[spot]] + key[spot + 1 :]
    assert lookalike(spoofed, [key, "other"]) == key
