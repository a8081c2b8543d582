#!/usr/bin/env bash
# Install the server with its test dependencies into .venv, then run the whole suite twice:
# on the embedded SQLite default, and on PostgreSQL (PRICKLE_TEST_PG, default 127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'

status=0
echo "== tests on sqlite"
PRICKLE_TEST_BACKEND=sqlite .venv/bin/python -m pytest -q "$@" || status=$?
echo "== tests on postgres"
PRICKLE_TEST_BACKEND=postgres .venv/bin/python -m pytest -q "$@" || status=$?
exit "$status"
