#!/usr/bin/env bash
# Install the server into .venv and run it on the embedded SQLite default (./prickle.db).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet -e .
exec .venv/bin/prickle serve "$@"
