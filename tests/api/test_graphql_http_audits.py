"""graphql-http's `serverAudits` (the GraphQL over HTTP specification's audits, npm
`graphql-http`) in node against a real `prickle serve`: every audit passes, none warns.

The test installs `graphql-http` into `.cache/npm-graphql-http/` on first use; where node or
npm is missing it skips and says so, except under CI (`CI=true` or `PRICKLE_REQUIRE_NPM=1`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from server import ROOT, Server

pytestmark = pytest.mark.once  # the HTTP layer: the same on either backend

PACKAGES = ("graphql-http@1", "graphql@16")
CACHE = ROOT / ".cache" / "npm-graphql-http"

SCRIPT = r"""
import { serverAudits } from 'graphql-http';
const [url, token] = process.argv.slice(2);
const fetchFn = (input, init = {}) =>
  fetch(input, { ...init, headers: { ...(init.headers || {}), authorization: `Bearer ${token}` } });
const results = [];
for (const audit of serverAudits({ url, fetchFn })) {
  const result = await audit.fn();
  results.push({ id: audit.id, name: audit.name, status: result.status, reason: result.reason });
}
console.log(JSON.stringify(results));
"""


def npm_install(cache: Path, packages: tuple[str, ...], marker: str) -> Path:
    """`packages` installed into `cache` (once); its node_modules. Skips without node and
    npm, except under CI."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"no {' and no '.join(missing)} on PATH: install Node.js 18+ with npm"
        if os.environ.get("CI") == "true" or os.environ.get("PRICKLE_REQUIRE_NPM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    modules = cache / "node_modules"
    if not (modules / marker / "package.json").exists():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", *packages],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"npm install {' '.join(packages)} failed:\n{done.stderr}"
    return modules


def test_every_graphql_over_http_audit_passes(api_server: Server) -> None:
    npm_install(CACHE, PACKAGES, "graphql-http")
    script = CACHE / "audit.mjs"  # beside node_modules: an ES module resolves from there
    script.write_text(SCRIPT)
    done = subprocess.run(
        ["node", str(script), api_server.graphql_url, api_server.owner_token or ""],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    listed = "\n".join(
        f"{r['status']:7} {r['id']} {r['name']}" + (f": {r['reason']}" if r.get("reason") else "")
        for r in results
    )
    assert len(results) > 50, listed
    assert all(r["status"] == "ok" for r in results), listed
