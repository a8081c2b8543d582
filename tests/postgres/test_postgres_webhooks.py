"""Webhooks delivered by two server processes on one PostgreSQL database, one of them killed
with SIGKILL mid-stream: every event reaches the receiver at least once, in order once
deduplicated by `webhook-id`, the other process resuming once the lease has run out; the
duplicates are printed.

Run in the PostgreSQL pass only (PRICKLE_TEST_BACKEND=postgres).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

from factory import PACKET
from receiver import Receiver
from server import connect, postgres_only, start

from app.domain.principals import person
from app.service import creation
from app.service.inputs import HandoffInput
from app.storage.store import Store

pytestmark = postgres_only

LEASE = 3.0
ENV = {"PRICKLE_WEBHOOK_LEASE_SECONDS": str(LEASE), "PRICKLE_WEBHOOK_BACKOFF": "0.2,0.5"}
TASKS = 1000  # two events each


async def _hand_off(url: str, count: int) -> None:
    store = Store(url)
    try:
        for _ in range(count):
            inp = HandoffInput(project="load", assignee="admin/worker", packet=dict(PACKET))
            await creation.handoff(store, person("admin"), inp)
    finally:
        await store.close()


async def _holder_pid(url: str) -> int | None:
    conn = await connect(url)
    try:
        holder = await conn.fetchval("SELECT leased_by FROM webhooks")
    finally:
        await conn.close()
    return None if holder is None else int(holder.split("-", 1)[0])


def test_a_delivering_process_killed_mid_stream_loses_no_event(
    pg_database_url: str, tmp_path: Path
) -> None:
    args = ("--allow-private-webhooks",)
    first = start(pg_database_url, tmp_path / "first", *args, env=ENV)
    second = start(pg_database_url, tmp_path / "second", *args, env=ENV)
    servers = {s.process.pid: s for s in (first, second)}
    try:
        first.register(first.owner_token, "worker")
        with Receiver() as receiver:
            variables = {"input": {"url": receiver.url, "project": "load"}}
            made = first.run_data("mutations/create_webhook", variables)["create_webhook"]
            writer = threading.Thread(
                target=lambda: asyncio.run(_hand_off(pg_database_url, TASKS)), daemon=True
            )
            writer.start()
            receiver.wait_for(400, timeout=120)
            pid = asyncio.run(_holder_pid(pg_database_url))
            assert pid in servers
            os.kill(pid, signal.SIGKILL)
            killed = time.monotonic()
            servers[pid].process.wait(10)
            killed_at = len(receiver.acknowledged())
            # the other process claims the webhook once the lease (3 s) has run out
            receiver.wait_for(killed_at + 1, timeout=LEASE + 10)
            resumed_after = time.monotonic() - killed
            writer.join(180)
            assert not writer.is_alive()
            deadline = time.monotonic() + 120
            while len({r.id for r in receiver.acknowledged()}) < 2 * TASKS:
                assert time.monotonic() < deadline, "not every event arrived"
                time.sleep(0.2)
            got = receiver.acknowledged()
        seqs_in_order, seen, duplicates = [], set(), []
        for r in got:
            if r.id in seen:
                duplicates.append(r.id)
            else:
                seen.add(r.id)
                seqs_in_order.append(r.verified(made["secret"])["data"]["seq"])
        assert len(seqs_in_order) == 2 * TASKS
        assert seqs_in_order == sorted(seqs_in_order)
        assert all(i.startswith(made["webhook"]["id"] + "_") for i in seen)
        print(
            f"\nkilled the delivering process (pid {pid}) after {killed_at} deliveries; "
            f"the other resumed {resumed_after:.1f} s later (lease {LEASE:.0f} s); "
            f"{len(got)} requests acknowledged for {2 * TASKS} events; "
            f"{len(duplicates)} duplicates: {duplicates}"
        )
    finally:
        for server in servers.values():
            server.stop()
