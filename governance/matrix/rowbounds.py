"""How many rows one generator invocation may build, counted before any is built.

A master config is small text that can stand for many rows: 99 search-space
entries aliasing one 3,000-value `conc-list` are 297,000 rows from 18 KB,
and every row is built, fingerprinted, rendered and preflighted. The rows an
entry will make are counted from its concurrencies and runners first; past a
bound the invocation stops with a GOV524 finding at the search-space entry
that crosses it. The numbers, and how far InferenceX is from them, are in
docs/security.md ("Bounds").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governance.core.codes import violation
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError

MAX_CONFIG_ROWS = 1_000  # rows of one config key (InferenceX: 104)
MAX_PLAN_ROWS = 20_000  # rows of one plan, throughput and evals (InferenceX, every key: 4,316)


@dataclass(slots=True)
class RowCount:
    """Rows counted for one invocation: per config key and in all; `budget`
    is what the invocation may build (the plan's remaining rows)."""

    budget: int = MAX_PLAN_ROWS
    total: int = 0
    key: str = ""
    in_key: int = 0

    def add(self, catalog: Catalog, key: str, loc: tuple[Any, ...], rows: int) -> None:
        """Count `rows` more for `key` at search-space `loc`; MatrixError past a bound."""
        if key != self.key:
            self.key, self.in_key = key, 0
        self.in_key += rows
        self.total += rows
        if self.in_key > MAX_CONFIG_ROWS:
            raise _fault(
                catalog,
                key,
                loc,
                f"config '{key}' generates {self.in_key:,} rows by this search-space entry; "
                f"a config generates at most {MAX_CONFIG_ROWS:,}",
                "list fewer concurrencies (conc-start/conc-end double at each step) or split "
                "the config into several keys",
            )
        if self.total > self.budget:
            raise _fault(
                catalog,
                key,
                loc,
                f"the plan reaches {MAX_PLAN_ROWS - self.budget + self.total:,} rows at config "
                f"'{key}'; a plan has at most {MAX_PLAN_ROWS:,}",
                "sweep fewer configs in one change: split the changelog entry or its "
                "config-keys across pull requests",
            )


def _fault(
    catalog: Catalog, key: str, loc: tuple[Any, ...], message: str, hint: str
) -> MatrixError:
    path, line, column = catalog.field_location(key, *loc)
    return MatrixError([violation("GOV524", message, path, line, column, hint)])
