#!/usr/bin/env bash
# Install the server with its test dependencies into .venv, then run the server's suite in
# four passes (README, "Test it"; tests/conftest.py says which test runs where):
#   sqlite    fast paths on    every test
#   sqlite    fast paths off   the API and storage tests (`api_and_storage`), not `fast_path`
#   postgres  fast paths on    every test but those marked `once`
#   postgres  fast paths off   the storage tests (`storage`), not `fast_path` nor `once`
# Each pass spreads its test modules over PRICKLE_TEST_WORKERS processes (pytest-xdist,
# default 3; 0 runs them in this one); the tests marked `serial` then run alone. Arguments
# go to every pass (e.g. a test file, `-x`); a `-m` of theirs would replace the pass's own.
# Every pass runs; the script fails when any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# pytest keeps the test modules it rewrites (for its assertion messages) in __pycache__, but
# only where bytecode may be written: with PYTHONDONTWRITEBYTECODE set, each process of each
# pass would rewrite every test module again, about 3.4 s of CPU apiece (docs/testing.md).
unset PYTHONDONTWRITEBYTECODE

workers="${PRICKLE_TEST_WORKERS:-3}"
# The one place the fast-paths-off passes are chosen: the API and storage tests, but not the
# tests of a fast path itself; on PostgreSQL the storage tests alone (the plain path above
# storage is the same code on both backends: the SQLite off pass runs it).
off_selection="api_and_storage and not fast_path"
pg_off_selection="storage and not fast_path"

status=0

# run_pass NAME BACKEND FAST_PATHS [MARK_EXPRESSION]: one pass of the suite, with the
# script's arguments: its tests spread over the workers, then those marked `serial` (a load
# of their own, timed: the others would crowd them) alone in one process. pytest's
# exit code 5 means it selected no test: right for either half alone, and for both when
# the arguments narrow the run (a file of `once` tests has nothing for PostgreSQL); a
# mistake in the script's own selection when there are no arguments, so a failure then.
run_pass() {
    local name=$1 backend=$2 fast=$3 selection=${4:+($4) and }
    local spread=0 alone=0 began=$SECONDS
    echo "== tests: $name"
    PRICKLE_TEST_BACKEND=$backend PRICKLE_FAST_PATHS=$fast .venv/bin/python -m pytest -q \
        -n "$workers" --dist loadfile -m "${selection}not serial" --durations=15 \
        "${SCRIPT_ARGS[@]}" || spread=$?
    PRICKLE_TEST_BACKEND=$backend PRICKLE_FAST_PATHS=$fast .venv/bin/python -m pytest -q \
        -m "${selection}serial" "${SCRIPT_ARGS[@]}" -n 0 || alone=$?
    if [ "$spread" = 5 ] && [ "$alone" = 5 ] && [ "${#SCRIPT_ARGS[@]}" = 0 ]; then
        echo "!! the $name pass selected no test: FAILED" >&2
        status=1
    elif [ "$spread" = 5 ] && [ "$alone" = 5 ]; then
        echo "   no test of the given ones belongs to this pass"
    fi
    for code in "$spread" "$alone"; do
        if [ "$code" != 0 ] && [ "$code" != 5 ]; then status=1; fi
    done
    echo "   $name: $((SECONDS - began))s"
}
SCRIPT_ARGS=("$@")

run_pass "sqlite, fast paths on" sqlite on
run_pass "sqlite, fast paths off" sqlite off "$off_selection"

# Without a PostgreSQL server every test of its passes would skip; say so in one line, and
# under CI (CI=true, or PRICKLE_REQUIRE_POSTGRES=1 as .ci/run sets) fail instead.
pg="${PRICKLE_TEST_PG:-postgresql://postgres@127.0.0.1:5432/test}"
if ! unreachable=$(.venv/bin/python - "$pg" <<'PY'
import asyncio, sys
import asyncpg

async def main(url: str) -> None:
    await (await asyncpg.connect(url, timeout=5)).close()

try:
    asyncio.run(main(sys.argv[1]))
except Exception as error:
    print(f"{type(error).__name__}: {error}")
    sys.exit(1)
PY
); then
    if [ "${CI:-}" = true ] || [ "${PRICKLE_REQUIRE_POSTGRES:-}" = 1 ]; then
        echo "!! PostgreSQL is required here but not reachable at $pg ($unreachable): FAILED" >&2
        exit 1
    fi
    echo "!! PostgreSQL is not reachable at $pg ($unreachable): the PostgreSQL passes are SKIPPED" >&2
    exit "$status"
fi
run_pass "postgres, fast paths on" postgres on
run_pass "postgres, fast paths off" postgres off "$pg_off_selection"
exit "$status"
