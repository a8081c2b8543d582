#!/usr/bin/env bash
# Everything CI checks, in one command: lint (ruff, ruff format, mypy --strict), the server's
# suite on SQLite then PostgreSQL, then the Python client's. Stops at the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/lint.sh
bash scripts/test.sh "$@"
bash scripts/test-client.sh
