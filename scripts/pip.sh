#!/usr/bin/env bash
# pip.sh VENV REQUIREMENT...: install into the virtual environment VENV with uv (about four
# times faster than pip on a clean machine: it resolves and downloads in parallel), taken
# into the server's .venv once; with pip when uv cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$1
shift
if [ ! -x .venv/bin/uv ]; then
    .venv/bin/python -m pip install --quiet uv >/dev/null 2>&1 || true
fi
if [ -x .venv/bin/uv ]; then
    # compiled at install, as pip does: where PYTHONDONTWRITEBYTECODE is set, nothing would
    # write them later, and every process (each server a test starts) would compile anew
    .venv/bin/uv pip install --quiet --compile-bytecode --python "$venv/bin/python" "$@"
else
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "$@"
fi
