#!/usr/bin/env bash
# Install the server with its test dependencies into .venv (scripts/install.sh, as
# scripts/test.sh does), then run the three checks: ruff's rules and ruff's formatting (on
# app, tests and clients, but for the client's generated code), and mypy --strict on app/
# (config in pyproject.toml; scripts/test-client.sh runs the client's own mypy). Every check
# runs; the script fails when any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh

status=0
# the client's generated code (clients/python/generate.py writes it) is excluded in pyproject.toml
echo "== ruff check"
.venv/bin/ruff check app tests clients || status=1
echo "== ruff format --check"
.venv/bin/ruff format --check app tests clients || status=1
echo "== mypy (strict, app/)"
.venv/bin/mypy || status=1
exit "$status"
