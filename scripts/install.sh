#!/usr/bin/env bash
# Install the server with its test dependencies (pytest, ruff, mypy, ...) into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# The browser libraries GraphiQL and the board's graph use: from npm, pinned and checked.
.venv/bin/python scripts/vendor.py
