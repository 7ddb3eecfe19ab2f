"""`gov results publish` to a real PostgreSQL server: the same rows as SQLite,
each exactly once after a killed publish or one the server refused.

The server is the throwaway one `launch/postgres/local-server.sh start` runs on
127.0.0.1 (`.ci/run` installs and starts it); these tests skip, saying how to
start it, when nothing answers there. Each test publishes into a schema of its
own (`options=-csearch_path=...` in the URL), dropped afterwards.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import astuple, replace

import pytest

from governance.results.database import COLUMNS, ResultRow
from tests.harness import Repo, run_gov, run_process
from tests.results.conftest import gov_exe, ledger_rows

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed (pip install -e '.[test]')"
)

PORT = os.environ.get("GOV_PG_PORT", "55432")
PASSWORD = "gov-ci-only"  # launch/postgres/local-server.sh's throwaway role on loopback
SERVER = f"postgresql://gov@127.0.0.1:{PORT}/gov_results"


def _reachable() -> str | None:
    try:
        psycopg.connect(SERVER, password=PASSWORD, connect_timeout=3).close()
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


@pytest.fixture(scope="module")
def server() -> str:
    why = _reachable()
    if why is not None:
        pytest.skip(
            f"no PostgreSQL at {SERVER} ({why}): run launch/postgres/local-server.sh start "
            "(as root, with the distribution's postgresql package installed)"
        )
    return SERVER


@pytest.fixture
def schema_url(server: str) -> Iterator[str]:
    """A URL whose connections publish into a fresh schema."""
    schema = f"gov_test_{secrets.token_hex(4)}"
    with psycopg.connect(server, password=PASSWORD, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{server}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, password=PASSWORD, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _pg_rows(url: str) -> list[ResultRow]:
    """What the server holds, read with the driver itself (not through gov)."""
    with psycopg.connect(url, password=PASSWORD) as conn:
        if conn.execute("SELECT to_regclass('results')").fetchone() == (None,):
            return []  # gov never got in: no table
        found = conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY commit_sha, job_key"
        ).fetchall()
    return [ResultRow(*row) for row in found]


def _sqlite_rows(repo: Repo) -> list[ResultRow]:
    with sqlite3.connect(repo.path / ".git" / "gov" / "results.sqlite3") as conn:
        found = conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY commit_sha, job_key"
        ).fetchall()
    return [ResultRow(*row) for row in found]


def _comparable(rows: list[ResultRow]) -> list[tuple[object, ...]]:
    """The rows without the publish time (two publishes, two clocks)."""
    return [astuple(replace(row, published_at="")) for row in rows]


def _env(url: str, password: str = PASSWORD) -> dict[str, str]:
    return {"GOV_RESULTS_DATABASE": url, "PGPASSWORD": password}


def test_postgresql_gets_the_same_rows_as_sqlite(landed: Repo, schema_url: str) -> None:
    expected = ledger_rows(landed)
    to_sqlite = run_gov("results", "publish", "--commit", "main", cwd=landed.path)
    assert to_sqlite.exit_code == 0, to_sqlite.stdout + to_sqlite.stderr
    to_pg = run_gov("results", "publish", "--commit", "main", cwd=landed.path, env=_env(schema_url))
    assert to_pg.exit_code == 0, to_pg.stdout + to_pg.stderr
    assert f"{len(expected)} row(s), {len(expected)} new" in to_pg.stdout
    assert PASSWORD not in to_pg.stdout + to_pg.stderr
    pg = _pg_rows(schema_url)
    assert len(pg) == len(expected) > 0
    assert _comparable(pg) == _comparable(_sqlite_rows(landed))
    again = run_gov("results", "publish", "--commit", "main", cwd=landed.path, env=_env(schema_url))
    assert again.exit_code == 0 and "0 new" in again.stdout
    assert len(_pg_rows(schema_url)) == len(expected)


@pytest.mark.parametrize("step", ["publish-pending", "publish-inserted", "publish-committed"])
def test_a_killed_postgresql_publish_is_finished_by_retry_failed(
    landed: Repo, schema_url: str, step: str
) -> None:
    expected = ledger_rows(landed)
    killed = run_process(
        [gov_exe(), "results", "publish", "--commit", "main"],
        cwd=landed.path,
        env={**_env(schema_url), "GOV_TEST_CRASH_AFTER": step},
    )
    assert killed.exit_code == -9, killed.stdout + killed.stderr
    written = _pg_rows(schema_url) if step != "publish-pending" else []
    assert len(written) == (len(expected) if step == "publish-committed" else 0)
    retried = run_gov("results", "publish", "--retry-failed", cwd=landed.path, env=_env(schema_url))
    assert retried.exit_code == 0, retried.stdout + retried.stderr
    assert sorted(row.job_key for row in _pg_rows(schema_url)) == sorted(expected)


def test_a_publish_the_server_refuses_is_retried_and_lands_once(
    landed: Repo, schema_url: str
) -> None:
    expected = ledger_rows(landed)
    wrong = "not-the-password-" + secrets.token_hex(4)
    refused = run_gov(
        "results", "publish", "--commit", "main", cwd=landed.path, env=_env(schema_url, wrong)
    )
    assert refused.exit_code == 2, refused.stdout + refused.stderr
    out = refused.stdout + refused.stderr
    assert "password authentication failed" in out and "--retry-failed" in out
    assert wrong not in out and PASSWORD not in out
    assert _pg_rows(schema_url) == []
    retried = run_gov("results", "publish", "--retry-failed", cwd=landed.path, env=_env(schema_url))
    assert retried.exit_code == 0, retried.stdout + retried.stderr
    assert "published" in retried.stdout
    assert sorted(row.job_key for row in _pg_rows(schema_url)) == sorted(expected)
    nothing = run_gov("results", "publish", "--retry-failed", cwd=landed.path, env=_env(schema_url))
    assert nothing.exit_code == 0 and "nothing to retry" in nothing.stdout
