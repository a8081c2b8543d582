"""graphql-http's `serverAudits` (the GraphQL over HTTP specification's audits, npm
`graphql-http`) in node against a real `prickle serve`: every audit passes, none warns.

The test installs `graphql-http` into `.cache/npm-graphql-http/` on first use; where node or
npm is missing it skips and says so, except under CI (`CI=true` or `PRICKLE_REQUIRE_NPM=1`).
"""

from __future__ import annotations

import json
import subprocess

import npm
import pytest
from server import Server

pytestmark = pytest.mark.once  # the HTTP layer: the same on either backend

PACKAGES = ("graphql-http@1", "graphql@16")
CACHE = npm.cache("graphql-http")

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


def test_every_graphql_over_http_audit_passes(api_server: Server) -> None:
    npm.installed("graphql-http", PACKAGES, "graphql-http", node=18)
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
