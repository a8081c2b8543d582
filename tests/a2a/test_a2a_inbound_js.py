"""A whole A2A lifecycle through the npm `@a2a-js/sdk` client in node, against a real
`prickle serve`, over JSON-RPC and over HTTP+JSON: a streamed send and a push notification
config, a Prickle worker that accepts and asks a question, the client's answer, the result as
an artifact; each notification received with its token and its signature verified; then a
resume from a cursor (nothing missed or twice) and a cancel.

The test installs `@a2a-js/sdk@1.3.0` itself, once, into `.cache/npm-a2a/` (gitignored), as
the graphql-sse client's test does: where node or npm is missing it skips and says so,
except under CI (`CI=true` or `PRICKLE_REQUIRE_NPM=1`), where that fails the run.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import npm
import pytest
from a2a_inbound import ask, base, give_result, work
from live import Cast
from receiver import Receiver
from server import module_database, start

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL


@pytest.fixture(scope="module")
def cast(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cast]:
    """alice and alice/coder on a server of the module's own, which may send push
    notifications to a receiver on 127.0.0.1."""
    directory = tmp_path_factory.mktemp("a2a-js")
    with module_database(directory) as url:
        server = start(url, directory / "logs", "--allow-private-webhooks")
        try:
            yield Cast(server).add("alice", "alice/coder")
        finally:
            server.stop()


PACKAGE = "@a2a-js/sdk@1.3.0"
SECRET = "whsec_" + base64.b64encode(b"the js client's secret!!").decode()

SCRIPT = r"""
const {
  ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory,
  DefaultAgentCardResolver,
} = require('@a2a-js/sdk/client');
const { randomUUID } = require('crypto');
const {
  A2A_BASE: base, A2A_TOKEN: token, A2A_BINDING: binding, A2A_HOOK: hook, A2A_SECRET: secret,
} = process.env;
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
};
const plain = (k, v) => (typeof v === 'bigint' ? Number(v) : v);
const say = (obj) => console.log(JSON.stringify(obj, plain));
const text = (value) => ({ content: { $case: 'text', value } });
const message = (value, more = {}) => (
  { messageId: randomUUID(), role: 1, parts: [text(value)], ...more });
const now = { returnImmediately: true }; // each sendMessage: answered at once
const kind = (event) => event.payload.$case;
(async () => {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [
      new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    preferredTransports: [binding],
  });
  const card = `${base}/.well-known/agent-card.json`;
  const client = await new ClientFactory(options).createFromUrl(card, '');
  let taskId, first;
  const asked = { message: message('what is six times seven?') };
  for await (const event of client.sendMessageStream(asked)) {
    say({ event });
    const value = event.payload.value;
    if (kind(event) === 'task') {
      [taskId, first] = [value.id, value.metadata.prickle.cursor];
      const wanted = { taskId, url: hook, token: 'from-node' };
      const signed = { serviceParameters: { 'Prickle-Webhook-Secret': secret } };
      say({ config: await client.createTaskPushNotificationConfig(wanted, signed) });
    }
    if (kind(event) === 'statusUpdate' && value.metadata.prickle.waitingOn === 'human') {
      const answer = { message: message('base ten', { taskId }), configuration: now };
      say({ answered: await client.sendMessage(answer) });
    }
  }
  say({ done: await client.getTask({ id: taskId, historyLength: 10 }) });
  const resumed = [];
  const from = { serviceParameters: { 'Last-Event-ID': first } };
  for await (const event of client.resubscribeTask({ id: taskId }, from)) resumed.push(event);
  say({ resumed });
  const second = await client.sendMessage({ message: message('never mind'), configuration: now });
  say({ cancelled: await client.cancelTask({ id: second.id }) });
})().catch((error) => {
  console.error(String(error));
  process.exit(1);
});
"""


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """Where `@a2a-js/sdk` is installed (installed now if it is not yet)."""
    return npm.installed("a2a", (PACKAGE,), "@a2a-js/sdk")


async def _drive(cast: Cast, modules: Path, binding: str, hook: str) -> list[dict[str, Any]]:
    """Run the script; play the worker as its lines arrive; every line it printed."""
    node = await asyncio.create_subprocess_exec(
        "node",
        "-e",
        SCRIPT,
        cwd=modules.parent,
        env={
            **os.environ,
            "A2A_BASE": base(cast, "alice/coder"),
            "A2A_TOKEN": cast.token("alice"),
            "A2A_BINDING": binding,
            "A2A_HOOK": hook,
            "A2A_SECRET": SECRET,
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert node.stdout is not None
    lines: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(60):
            while raw := await node.stdout.readline():
                lines.append(json.loads(raw))
                await asyncio.to_thread(_play_worker, cast, lines[-1])
            await node.wait()
    finally:
        if node.returncode is None:
            node.kill()
            await node.wait()
    assert node.returncode == 0, (await node.stderr.read()).decode() if node.stderr else ""
    return lines


def _play_worker(cast: Cast, line: dict[str, Any]) -> None:
    if "config" in line:  # the push notification config is made: the worker starts
        task_id = line["config"]["taskId"]
        work(cast, "alice/coder", task_id, "accept_task", "start_task")
        ask(cast, "alice/coder", task_id, "in which base?")
    if "answered" in line:
        give_result(cast, "alice/coder", line["answered"]["id"])


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_the_js_client_drives_a_whole_lifecycle(
    cast: Cast, node_modules: Path, binding: str
) -> None:
    with Receiver() as receiver:
        lines = await _drive(cast, node_modules, binding, receiver.url)
        [config] = [line["config"] for line in lines if "config" in line]
        assert "authentication" not in config  # the secret is the one the client asked for
        notified = [r.verified(SECRET)["task"] for r in receiver.wait_for(6)]
    assert {r.headers["x-a2a-notification-token"] for r in receiver.received} == {"from-node"}
    states = [n["metadata"]["prickle"]["state"] for n in notified]
    assert states == ["accepted", "working", "waiting", "working", "verifying", "completed"]
    streamed = [line["event"]["payload"] for line in lines if "event" in line]
    kinds = [p["$case"] for p in streamed]
    assert kinds[0] == "task" and kinds[-2:] == ["artifactUpdate", "statusUpdate"]
    states = [p["value"]["metadata"]["prickle"]["state"] for p in streamed]
    assert states[:5] == ["routed", "accepted", "working", "waiting", "working"]
    assert states[-1] == "completed"
    question = streamed[4 - 1]["value"]["status"]["message"]["parts"][0]["content"]["value"]
    assert question == "in which base?"
    [done] = [line["done"] for line in lines if "done" in line]
    assert done["artifacts"][0]["parts"][0]["content"]["value"] == "the answer is 42"
    said = [m["parts"][0]["content"]["value"] for m in done["history"]]
    assert said == ["what is six times seven?", "in which base?", "base ten"]
    [resumed] = [line["resumed"] for line in lines if "resumed" in line]
    assert [r["payload"] for r in resumed] == streamed[
        1:
    ]  # after the first: nothing missed or twice
    [cancelled] = [line["cancelled"] for line in lines if "cancelled" in line]
    assert cancelled["metadata"]["prickle"]["state"] == "cancelled"
