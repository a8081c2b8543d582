#!/usr/bin/env bash
# Install the server with its test dependencies (pytest, ruff, mypy, ...) into .venv. The
# install is skipped when .venv was made from this very pyproject.toml (scripts/lint.sh,
# test.sh and test-client.sh each call this script; one check.sh installs once).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.installed-from
wanted="$(sha256sum pyproject.toml scripts/install.sh)"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    python3 -m venv .venv
    bash scripts/pip.sh .venv -e '.[test]'
    printf '%s\n' "$wanted" > "$stamp"
fi
# The server's own modules compiled once (compileall writes them even where
# PYTHONDONTWRITEBYTECODE is set): each process the tests start then loads them compiled.
.venv/bin/python -m compileall -q app >/dev/null
# The browser libraries GraphiQL and the board's graph use: from npm, pinned and checked.
.venv/bin/python scripts/vendor.py
