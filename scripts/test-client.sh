#!/usr/bin/env bash
# The Python client (clients/python, `prickle-client`): install it alone, with its test
# extras, into clients/python/.venv (no server there), check it with mypy --strict, then run
# its tests against real `prickle serve` processes started with the server's .venv
# (scripts/install.sh): every test on SQLite, then on PostgreSQL (PRICKLE_TEST_PG; skipped
# with a line when it does not answer, failed under CI as scripts/test.sh does) the tests
# whose outcome the server's database can change: following events across a restart
# (the event log, its cursor and LISTEN/NOTIFY) and retries across one. The others speak to
# the server's API alone, which the server's own suite runs on both databases. Each pass
# spreads the test modules over PRICKLE_CLIENT_TEST_WORKERS processes (pytest-xdist
# `--dist loadfile`, default 2, each with its own session's server; 0 runs them in this one):
# the tests mostly wait on their server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
unset PYTHONDONTWRITEBYTECODE  # pytest's rewritten test modules kept between runs (test.sh)
client=clients/python
python3 -m venv "$client/.venv"
bash scripts/pip.sh "$client/.venv" "./$client[test]" mypy
export PRICKLE_SERVER_PYTHON="$PWD/.venv/bin/python"

workers=(-n "${PRICKLE_CLIENT_TEST_WORKERS:-2}" --dist loadfile)

status=0
echo "== client: mypy (strict)"
(cd "$client" && .venv/bin/mypy) || status=1
echo "== client tests on sqlite"
(cd "$client" && PRICKLE_TEST_BACKEND=sqlite .venv/bin/python -m pytest -q "${workers[@]}" "$@") || status=1
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
# the arguments, after those two files; the arguments alone when they name tests of their own
on_postgres=(tests/test_events.py tests/test_retries.py "$@")
for arg in "$@"; do
    if [ -e "$client/${arg%%::*}" ]; then on_postgres=("$@"); break; fi
done
(cd "$client" && PRICKLE_TEST_BACKEND=postgres .venv/bin/python -m pytest -q "${workers[@]}" \
    "${on_postgres[@]}") \
    || status=1
exit "$status"
