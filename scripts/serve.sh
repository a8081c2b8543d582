#!/usr/bin/env bash
# Install the server into .venv and run it on the embedded SQLite default (./prickle.db).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
bash scripts/pip.sh .venv -e .
.venv/bin/python scripts/vendor.py || echo "!! the browser libraries could not be fetched: GraphiQL and the graph view will say so" >&2
exec .venv/bin/prickle serve "$@"
