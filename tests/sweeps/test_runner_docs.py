"""docs/sweeps.md's tables of the runner launcher are the data gov runs by:
the launcher registry and the environment contract (`runner_contract`)."""

from __future__ import annotations

from governance.sweeps import runner_contract as contract
from governance.sweeps.launcher import REGISTRY
from tests.harness import PROJECT

DOCS = PROJECT / "docs" / "sweeps.md"


def launcher_table() -> list[str]:
    rows = ["| launcher | what runs a row |", "|---|---|"]
    rows += [f"| `{spec.name}` | {spec.summary} |" for spec in REGISTRY]
    return rows


def _cell(
    name: str, names: tuple[str, ...], constants: dict[str, str], defaults: dict[str, str]
) -> str:
    if name not in names:
        return "-"
    if name in constants:
        return f"`{constants[name]}`" if constants[name] else "empty"
    if name in contract.DERIVED:
        return contract.DERIVED[name]
    if name in defaults:
        return f"the row's, default `{defaults[name]}`"
    return "the row's (empty when it has none)"


def contract_table() -> list[str]:
    rows = ["| name | single node | multi node |", "|---|---|---|"]
    names = dict.fromkeys(
        (*contract.SINGLE_NODE_NAMES, *contract.MULTI_NODE_NAMES, *contract.ADDED)
    )
    for name in names:
        single = _cell(
            name,
            (*contract.SINGLE_NODE_NAMES, *contract.ADDED),
            contract.CONSTANTS_SINGLE,
            contract.DEFAULTS_SINGLE,
        )
        multi = _cell(
            name,
            (*contract.MULTI_NODE_NAMES, *contract.ADDED),
            contract.CONSTANTS_MULTI,
            contract.DEFAULTS_MULTI,
        )
        rows.append(f"| `{name}` | {single} | {multi} |")
    return rows


def collected_table() -> list[str]:
    rows = ["| row | files collected (`{RF}` = RESULT_FILENAME) |", "|---|---|"]
    for kind, patterns in contract.COLLECTED.items():
        rows.append(f"| {kind} | " + ", ".join(f"`{p}`" for p in patterns) + " |")
    return rows


def test_the_docs_tables_are_the_registry_and_the_contract() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for table in (launcher_table(), contract_table(), collected_table()):
        block = "\n".join(table)
        assert block in text, f"docs/sweeps.md lacks, or has another version of:\n{block}"
