#!/usr/bin/env bash
# The Python client (clients/python, `prickle-client`): install it alone, with its test
# extras, into clients/python/.venv (no server there), check it with mypy --strict, then run
# its tests against real `prickle serve` processes started with the server's .venv
# (scripts/install.sh): on SQLite, then on PostgreSQL (PRICKLE_TEST_PG; skipped with a line
# when it does not answer, failed under CI as scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
client=clients/python
python3 -m venv "$client/.venv"
"$client/.venv/bin/python" -m pip install --quiet --upgrade pip
"$client/.venv/bin/python" -m pip install --quiet "./$client[test]" mypy
export PRICKLE_SERVER_PYTHON="$PWD/.venv/bin/python"

status=0
echo "== client: mypy (strict)"
(cd "$client" && .venv/bin/mypy) || status=1
echo "== client tests on sqlite"
(cd "$client" && PRICKLE_TEST_BACKEND=sqlite .venv/bin/python -m pytest -q "$@") || status=1
echo "== client tests on postgres"
pg="${PRICKLE_TEST_PG:-postgresql://postgres@127.0.0.1:5432/test}"
if ! .venv/bin/python -c "import asyncio, sys, asyncpg
asyncio.run(asyncpg.connect(sys.argv[1], timeout=5))" "$pg" >/dev/null 2>&1; then
    if [ "${CI:-}" = true ] || [ "${PRICKLE_REQUIRE_POSTGRES:-}" = 1 ]; then
        echo "!! PostgreSQL is required here but not reachable at $pg: FAILED" >&2
        exit 1
    fi
    echo "!! PostgreSQL is not reachable at $pg: the client's PostgreSQL pass is SKIPPED" >&2
    exit "$status"
fi
(cd "$client" && PRICKLE_TEST_BACKEND=postgres .venv/bin/python -m pytest -q "$@") || status=1
exit "$status"
