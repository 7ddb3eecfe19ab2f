#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1, for CI and local testing of
# `gov results publish` to PostgreSQL (governance/results/database.py).
#
#   launch/postgres/local-server.sh start    create (first time) and start it; idempotent
#   launch/postgres/local-server.sh stop     stop it
#   launch/postgres/local-server.sh status   say whether it runs
#
# It never installs anything: install the distribution's package first
# (Debian: postgresql). The server runs as the `postgres` user when started by
# root (PostgreSQL refuses to run as root), else as the caller. It listens on
# 127.0.0.1 only; role `gov` logs in with a password (scram-sha-256), so the
# tests pass credentials through the environment (PGPASSWORD), as a user would.
#
# The tests connect to the address below (tests/results/test_publish_postgres.py)
# and skip, saying how to start this server, when nothing answers there.
set -euo pipefail

DATA="${GOV_PG_DATA:-/tmp/gov-postgres}"
PORT="${GOV_PG_PORT:-55432}"
ROLE="gov"
PASSWORD="gov-ci-only"  # a throwaway server on loopback: not a secret
DATABASE="gov_results"

bindir() {
    local found
    # Debian keeps the server binaries (and its own psql) per version, off PATH.
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    if [[ -z "${found}" ]] && command -v initdb >/dev/null 2>&1; then
        found="$(dirname "$(readlink -f "$(command -v initdb)")")"
    fi
    [[ -n "${found}" ]] || {
        printf 'local-server: error: no PostgreSQL binaries (install the postgresql package)\n' >&2
        exit 1
    }
    printf '%s\n' "${found}"
}

BIN="$(bindir)"
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    if [[ ! -f "${DATA}/PG_VERSION" ]]; then
        mkdir -p "${DATA}"
        [[ "$(id -u)" == 0 ]] && chown postgres "${DATA}"
        local pwfile="${DATA}.pw"
        printf '%s\n' "${PASSWORD}" >"${pwfile}"
        [[ "$(id -u)" == 0 ]] && chown postgres "${pwfile}"
        as_owner "${BIN}/initdb" -D "${DATA}" -U postgres --auth-local=trust \
            --auth-host=scram-sha-256 --pwfile="${pwfile}" >/dev/null
        rm -f "${pwfile}"
    fi
    if as_owner "${BIN}/pg_ctl" -D "${DATA}" status >/dev/null 2>&1; then
        printf 'local-server: already running on 127.0.0.1:%s\n' "${PORT}"
    else
        as_owner "${BIN}/pg_ctl" -D "${DATA}" -l "${DATA}/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p ${PORT} -k ${DATA}" start >/dev/null
    fi
    local psql=("${BIN}/psql" -h "${DATA}" -p "${PORT}" -U postgres -v ON_ERROR_STOP=1 -qtA)
    if [[ -z "$(as_owner "${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}'")" ]]; then
        as_owner "${psql[@]}" -c "CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'"
    fi
    if [[ -z "$(as_owner "${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '${DATABASE}'")" ]]; then
        as_owner "${psql[@]}" -c "CREATE DATABASE ${DATABASE} OWNER ${ROLE}"
    fi
    printf 'local-server: postgresql://%s@127.0.0.1:%s/%s ready (PGPASSWORD=%s)\n' \
        "${ROLE}" "${PORT}" "${DATABASE}" "${PASSWORD}"
}

case "${1:-}" in
start) start ;;
stop) as_owner "${BIN}/pg_ctl" -D "${DATA}" -m fast stop ;;
status) as_owner "${BIN}/pg_ctl" -D "${DATA}" status ;;
*)
    printf 'usage: %s start|stop|status\n' "$0" >&2
    exit 2
    ;;
esac
