#!/usr/bin/env bash
# Everything CI checks, in one command: lint (ruff, ruff format, mypy --strict), then the
# server's suite (SQLite, then PostgreSQL) and the Python client's side by side. Lint stops it
# at once; the two suites both run to their end, and it fails when either fails.
#
# The client's suite starts with the server's first pass, on SQLite, and ends well before it:
# the two share the machine's cores where a pass would leave them idle (its slowest tests,
# the last modules of a pass), and the client's PostgreSQL tests never meet the server's,
# which come later. Its output is kept and printed after the server's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/lint.sh

client_log=$(mktemp)
trap 'rm -f "$client_log"' EXIT
trap 'kill 0' INT TERM  # an interrupted check stops the client's suite too
bash scripts/test-client.sh >"$client_log" 2>&1 &
client_pid=$!

server=0
bash scripts/test.sh "$@" || server=$?
client=0
wait "$client_pid" || client=$?
echo "== the Python client's suite (it ran beside the server's)"
cat "$client_log"
if [ "$client" != 0 ]; then echo "!! the Python client's suite FAILED" >&2; fi
[ "$server" = 0 ] && [ "$client" = 0 ]
