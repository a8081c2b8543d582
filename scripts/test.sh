#!/usr/bin/env bash
# Install the server with its test dependencies into .venv, then run the whole suite twice:
# on the embedded SQLite default, and on PostgreSQL (PRICKLE_TEST_PG, default 127.0.0.1:5432/test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh

status=0
echo "== tests on sqlite"
PRICKLE_TEST_BACKEND=sqlite .venv/bin/python -m pytest -q "$@" || status=$?
echo "== tests on postgres"
# Without a PostgreSQL server every test of this pass would skip; say so in one line, and
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
    echo "!! PostgreSQL is not reachable at $pg ($unreachable): the PostgreSQL pass is SKIPPED" >&2
    exit "$status"
fi
PRICKLE_TEST_BACKEND=postgres .venv/bin/python -m pytest -q "$@" || status=$?
exit "$status"
