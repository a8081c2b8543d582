#!/usr/bin/env bash
# Install the server with its test dependencies into .venv (scripts/install.sh, as
# scripts/test.sh does), then run the three checks: ruff's rules, ruff's formatting, and
# mypy --strict on app/ (config in pyproject.toml). Every check runs; the script fails when
# any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh

status=0
echo "== ruff check"
.venv/bin/ruff check app tests || status=1
echo "== ruff format --check"
.venv/bin/ruff format --check app tests || status=1
echo "== mypy (strict, app/)"
.venv/bin/mypy || status=1
exit "$status"
