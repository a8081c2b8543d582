"""One task sent to a remote agent: sent once, then followed until it is over for Prickle.

The send is recorded before it is made (`sent_at`); a follower that finds a send recorded
but no remote task (the process died in between) first looks for the remote task in the
message's context (ListTasks), and sends again with the same `messageId` only when it finds
none. The remote task is then followed by its stream (SubscribeToTask) when the card offers
streaming, else by GetTask polls with backoff; after each update the Prickle task is brought
to the remote's state (mapping.py). A move is made from the state it leaves, with the task's
version: a move repeated after a crash, or by a process whose lease ran out, is refused and
changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import dataclass

from a2a.types.a2a_pb2 import Task as RemoteTask

from app.a2a.outbound import mapping
from app.a2a.outbound.remote import Remote, RemoteFailed
from app.domain.clock import now, rfc3339
from app.domain.errors import InvalidInput, ProtocolError
from app.domain.principals import Principal, agent
from app.domain.remote_agents import RemoteTask as Sent
from app.domain.task import Task
from app.service import reads, verbs
from app.service.inputs import CheckpointInput, ResultInput
from app.storage.outage import quietly
from app.storage.store import Store
from app.wakeups import woken

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """Another process dispatches to the agent now: this one stops."""


@dataclass(frozen=True)
class Timing:
    poll: tuple[float, ...]  # waits between polls, the last repeated

    def wait(self, attempt: int) -> float:
        """The wait before the next try, after `attempt` tries that brought nothing."""
        return self.poll[min(attempt, len(self.poll) - 1)]


class Follower:
    def __init__(
        self, store: Store, remote: Remote, holder: str, task_id: str, timing: Timing
    ) -> None:
        self.store = store
        self.remote = remote
        self.holder = holder
        self.task_id = task_id
        self.timing = timing
        self.actor: Principal = agent(remote.agent.agent_id)
        self.changed = asyncio.Event()  # the remote's stream, or a Prickle event, woke it
        self._stream: asyncio.Task[None] | None = None
        self._barren = 0  # streams in a row that ended with no update

    def poke(self) -> None:
        self.changed.set()

    async def run(self) -> None:
        try:
            await self._follow()
        except LeaseLost:
            return
        except Exception as error:  # the agent's next round starts another follower
            quietly(log, f"following {self.task_id} failed", error)
        finally:
            if self._stream is not None:
                self._stream.cancel()
                with contextlib.suppress(BaseException):
                    await self._stream

    async def _follow(self) -> None:
        sent = await self._row()
        if sent is None or sent.done:
            return
        remote_id = sent.remote_task_id or await self._send(sent)
        if remote_id is None:
            return
        quiet = 0
        while True:
            self.changed.clear()
            try:
                remote = await self.remote.get(remote_id)
            except RemoteFailed as failure:
                if failure.refused and await self._lost(str(failure)):
                    return
                log.warning("following %s: %s", self.task_id, failure)
            else:
                if await self._reconcile(remote):
                    await self._change(done=True)
                    return
            if self.remote.streams:
                self._listen(remote_id)
            woke = await woken(self.changed, self.timing.wait(quiet))
            quiet = 0 if woke else quiet + 1

    # sending

    async def _send(self, sent: Sent) -> str | None:
        """The remote task's id, sent now or found from a send before; None when the task is
        over before it was sent."""
        attempt = 0
        while True:
            task = await self._task()
            try:
                remote = None if task is None else await self._send_once(sent, task)
            except RemoteFailed as failure:
                if failure.refused and task is not None:
                    reason = f"the remote A2A agent refused the task: {failure}"
                    if await self._refusable(self._hand_back(task, reason)) is not None:
                        await self._change(done=True)
                        return None
                else:
                    log.warning("sending %s: %s; trying again", self.task_id, failure)
                await asyncio.sleep(self.timing.wait(attempt))
                attempt += 1
                sent = await self._row() or sent
                continue
            if remote is None:
                await self._change(done=True)
                return None
            await self._change(remote_task_id=remote.id)
            return remote.id

    async def _send_once(self, sent: Sent, task: Task) -> RemoteTask | None:
        """The remote task: one a send before a crash made, else a new one while the task
        is routed; None when there is none and the task is no longer routed."""
        if sent.sent_at is not None:
            found = await self.remote.find(sent.message_id)
            if found is not None:
                return found
        if task.state != "routed":
            return None
        if sent.sent_at is None:
            await self._change(sent_at=rfc3339(now()))
        return await self.remote.send(mapping.send_request(task, sent.message_id))

    # following

    def _listen(self, remote_id: str) -> None:
        if self._stream is None or self._stream.done():
            self._stream = asyncio.create_task(self._updates(remote_id), name=f"a2a-{remote_id}")

    async def _updates(self, remote_id: str) -> None:
        """Wake the follower on each update; once the stream ends (the remote closed it, or
        it timed out), wake it after a backoff that grows while streams bring nothing, so
        that it reads the task and opens another."""
        try:
            async for _ in self.remote.updates(remote_id):
                self._barren = 0
                self.changed.set()
        except RemoteFailed as failure:
            log.info("the stream of %s ended: %s", self.task_id, failure)
        await asyncio.sleep(self.timing.wait(self._barren))
        self._barren += 1
        self.changed.set()

    async def _lost(self, why: str) -> bool:
        """The remote no longer knows the task (GetTask refused): hand it back; whether
        nothing is left to follow."""
        task = await self._task()
        if task is not None and task.state not in mapping.OVER:
            reason = f"the remote A2A agent no longer answers for the task: {why}"
            if await self._refusable(self._hand_back(task, reason)) is None:
                return False
        await self._change(done=True)
        return True

    async def _refusable(self, move: Awaitable[Task]) -> Task | None:
        try:
            return await move
        except ProtocolError as refusal:
            log.info("a move on %s refused: %s", self.task_id, refusal)
            return None

    async def _reconcile(self, remote: RemoteTask) -> bool:
        """Bring the Prickle task to the remote's state; whether nothing is left to follow."""
        task = await self._task()
        if task is None:
            return True
        if task.state == "cancelled":
            if remote.status.state not in mapping.TERMINAL:
                with contextlib.suppress(RemoteFailed):
                    await self.remote.cancel(remote.id)
            return True
        if remote.status.state in mapping.ASKING and await self._asking(remote, task):
            return False
        planned = mapping.plan(remote.status.state, task)
        for verb in planned.verbs:
            moved = await self._move(verb, task, remote)
            if moved is None:
                self.changed.set()  # moved meanwhile by someone else: look again
                return False
            task = moved
        if task.state == "working":
            await self._checkpoint(task, remote)
        return planned.done

    async def _checkpoint(self, task: Task, remote: RemoteTask) -> None:
        """A WORKING update's message as the task's checkpoint, once per update."""
        progress = mapping.progress_of(remote)
        update = mapping.status_id(remote)
        sent = await self._row()
        if progress is None or sent is None or sent.checkpointed == update:
            return
        try:
            await verbs.save_checkpoint(
                self.store, self.actor, task.id, CheckpointInput(progress=progress)
            )
        except ProtocolError as refusal:  # e.g. its turn budget spent: the moves go on
            log.info("checkpoint on %s refused: %s", task.id, refusal)
        await self._change(checkpointed=update)

    async def _asking(self, remote: RemoteTask, task: Task) -> bool:
        """The remote asks: whether that is handled here (the question already put to the
        requester, the answer to send back)."""
        question, _ = mapping.question_of(remote)
        sent = await self._row()
        asked = sent is not None and sent.asked == question
        if task.state == "waiting":
            if task.waiting_on == "human" and not asked:  # put before a crash: note it
                await self._change(asked=question)
            return True  # stopped by the owner: asked once it runs again
        if not asked:
            return False
        answer = await self._answer(task)
        if answer is None:
            return True
        seq, text = answer
        sending = mapping.answer_id(task.id, seq)
        if sent is not None and sent.answered == sending:
            return True  # sent: the remote has yet to take it up
        try:
            await self.remote.send(mapping.reply_request(remote, sending, text))
        except RemoteFailed as failure:
            log.warning("answering %s: %s; trying again", self.task_id, failure)
            return True
        await self._change(answered=sending)
        return True

    async def _answer(self, task: Task) -> tuple[int, str] | None:
        """The last answer given on the task: its event's seq and text."""
        events = (await reads.events_of(self.store, self.actor, [task.id])).get(task.id, [])
        answered = [e for e in events if e.kind == "answered"]
        if not answered:
            return None
        last = answered[-1]
        return last.seq, last.note or ""

    async def _move(self, verb: str, task: Task, remote: RemoteTask) -> Task | None:
        """The move on the agent's behalf; None when the task moved meanwhile."""
        version = task.version
        try:
            if verb == "accept_task":
                return await verbs.accept_task(
                    self.store, self.actor, task.id, expected_version=version
                )
            if verb == "start_task":
                return await verbs.start_task(
                    self.store, self.actor, task.id, expected_version=version
                )
            if verb == "wait_on":
                question, text = mapping.question_of(remote)
                moved = await verbs.wait_on(
                    self.store, self.actor, task.id, "human", text, expected_version=version
                )
                await self._change(asked=question)
                return moved
            if verb == "return_result":
                return await self._return(task, remote)
            return await self._hand_back(task, mapping.reason_of(remote))
        except ProtocolError as refusal:
            if isinstance(refusal, InvalidInput) and verb == "return_result":
                reason = f"the remote's result was refused: {refusal}"
                return await self._refusable(self._hand_back(task, reason))
            log.info("%s on %s refused: %s", verb, task.id, refusal)
            return None

    async def _return(self, task: Task, remote: RemoteTask) -> Task:
        sent = await self._row()
        submission = sent.message_id if sent is not None else f"a2a-{remote.id}"[:64]
        result = mapping.result_of(remote, task, submission)
        return await verbs.return_result(
            self.store,
            self.actor,
            task.id,
            ResultInput(**result),
            expected_version=task.version,
        )

    async def _hand_back(self, task: Task, reason: str) -> Task:
        return await verbs.hand_back(
            self.store,
            self.actor,
            task.id,
            reason[: mapping.MAX_REASON],
            expected_version=task.version,
        )

    # storage

    async def _task(self) -> Task | None:
        return await reads.task(self.store, self.actor, self.task_id)

    async def _row(self) -> Sent | None:
        async with self.store.read() as tx:
            return await tx.remote_agents.task(self.task_id)

    async def _change(self, **values: object) -> None:
        async with self.store.write() as tx:
            if not await tx.remote_agents.change_task(self.task_id, self.holder, **values):
                raise LeaseLost(self.task_id)
