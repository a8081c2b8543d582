"""`prickle demo`: a small project in every state a task rests in, made through the verbs.

Two owners: `ada`, whose agents `planner`, `coder` and `reviewer` work on the project
`demo`, and `grace`, whose agent `designer` hands ada's coder work the gate holds for ada.
Every task is made and moved by the service's own verbs, as the API would, so the events,
the gate and the result policy are the real ones. `requested` and `verifying` are passed
through within a call (the gate and the result policy decide at once); every other state
holds at least one task. A database that holds a task already is refused, and nothing is
written.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.errors import Conflict
from app.domain.principals import Principal, agent, person
from app.domain.task import Task
from app.service import verbs
from app.service.admin import provision_token, register_agent, set_result_rule
from app.service.creation import handoff
from app.service.inputs import (
    CheckpointInput,
    EvidenceInput,
    HandoffInput,
    PacketInput,
    ResultInput,
    ResultRuleInput,
)
from app.storage.store import Store

PROJECT = "demo"
OWNER = "ada"


@dataclass(frozen=True)
class Demo:
    project: str
    owner: str
    token: str  # the owner's, new
    tasks: int


async def holds_tasks(store: Store) -> bool:
    async with store.read() as tx:
        return await tx.tasks.any()


async def fill(store: Store) -> Demo:
    """The demo project on a database with no task (Conflict otherwise: nothing written)."""
    if await holds_tasks(store):
        raise Conflict("the database already holds tasks; the demo fills an empty one only")
    ada, grace = person(OWNER), person("grace")
    for name in ("planner", "coder", "reviewer"):
        await register_agent(store, ada, name, [{"kind": "repo", "name": PROJECT}])
    await provision_token(store, grace, label="demo")
    await register_agent(store, grace, "designer", [{"kind": "repo", "name": "icons"}])
    # ada decides the results of design work herself
    await set_result_rule(
        store, ada, ResultRuleInput(policy="require_approval", deliverable_type="design")
    )
    made = _Made(store)
    await made.story()
    token = (await provision_token(store, ada, label="demo")).token
    return Demo(PROJECT, OWNER, token, made.count)


class _Made:
    """The demo's tasks, in the order a project might see them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.count = 0
        self.planner = agent(f"{OWNER}/planner")
        self.coder = agent(f"{OWNER}/coder")
        self.reviewer = agent(f"{OWNER}/reviewer")
        self.designer = agent("grace/designer")

    async def hand(
        self,
        by: Principal,
        to: str,
        task: str,
        criteria: list[str],
        deliverable: str = "code",
        parent: str | None = None,
        depends_on: list[str] | None = None,
    ) -> Task:
        packet = PacketInput(task, deliverable, criteria, depends_on=depends_on)
        inp = HandoffInput(PROJECT, to, packet, parent_task_id=parent, display_title=task)
        self.count += 1
        return await handoff(self.store, by, inp)

    async def work(self, by: Principal, task: Task) -> Task:
        await verbs.accept_task(self.store, by, task.id)
        return await verbs.start_task(self.store, by, task.id)

    async def finish(self, by: Principal, task: Task, summary: str, evidence: str) -> Task:
        result = ResultInput(
            summary=summary,
            provenance="agent_generated",
            evidence=[EvidenceInput(kind="test_output", summary=evidence, criteria=[0])],
        )
        return await verbs.return_result(self.store, by, task.id, result)

    async def story(self) -> None:
        coder, reviewer = self.coder, self.reviewer
        # a tree with dependencies: the coder splits the feature into three subtasks, each
        # depending on the one before, and waits for them
        root = await self.hand(
            self.planner,
            coder.id,
            "Ship dark mode",
            ["every page follows the system's colour scheme"],
        )
        await self.work(coder, root)
        tokens = await self.hand(
            coder,
            reviewer.id,
            "Define the colour tokens",
            ["tokens for both schemes"],
            parent=root.id,
        )
        toggle = await self.hand(
            coder,
            reviewer.id,
            "Build the toggle",
            ["the choice persists across reloads"],
            parent=root.id,
            depends_on=[tokens.id],
        )
        await self.hand(
            coder,
            reviewer.id,
            "Document the toggle",
            ["a page in the user guide"],
            parent=root.id,
            depends_on=[toggle.id],
        )
        await verbs.wait_on(self.store, coder, root.id, "agent")  # on its subtasks
        await self.finish(
            reviewer,
            await self.work(reviewer, tokens),
            "Tokens in colors.css",
            "test_tokens: 24 passed",
        )
        await self.work(reviewer, toggle)
        await verbs.save_checkpoint(
            self.store,
            reviewer,
            toggle.id,
            CheckpointInput("The toggle renders; storing the choice next", next_steps=["tests"]),
        )
        # handoffs from another owner's agent, held for ada's approval; one denied
        await self.hand(self.designer, coder.id, "Use the new icon set", ["no old icon left"])
        await self.hand(self.designer, coder.id, "Audit the contrast", ["WCAG AA on every page"])
        spam = await self.hand(self.designer, coder.id, "Rewrite it in Rust", ["it is in Rust"])
        await verbs.deny_task(self.store, person(OWNER), spam.id, "not now")
        # a question waiting for an answer
        note = await self.hand(
            self.planner, coder.id, "Write the release note", ["under 200 words"]
        )
        await self.work(coder, note)
        await verbs.wait_on(self.store, coder, note.id, "human", "Which version number is it?")
        # a result to decide: design results go to ada (her result rule)
        palette = await self.hand(
            self.planner, coder.id, "Pick the dark palette", ["contrast 4.5:1"], "design"
        )
        await self.finish(
            coder,
            await self.work(coder, palette),
            "Palette in palette.json",
            "contrast checker: lowest 4.7:1",
        )
        # completed, cancelled, handed back, taken on but not started, waiting in the inbox
        typo = await self.hand(self.planner, coder.id, "Fix the login typo", ["it reads Log in"])
        await self.finish(coder, await self.work(coder, typo), "Fixed", "test_login_label passed")
        spike = await self.hand(self.planner, coder.id, "Try a CSS-only toggle", ["a prototype"])
        await verbs.cancel_task(self.store, self.planner, spike.id, "the toggle is built in JS")
        fonts = await self.hand(self.planner, reviewer.id, "Self-host the fonts", ["no CDN"])
        await verbs.hand_back(self.store, reviewer, fonts.id, "the licence is unclear")
        log = await self.hand(self.planner, reviewer.id, "Update the changelog", ["one line"])
        await verbs.accept_task(self.store, reviewer, log.id)
        await self.hand(self.planner, coder.id, "Bump the version", ["package.json says 2.0"])
