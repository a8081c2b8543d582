"""The open question of a waiting task: what it asks and who may answer it, as one value
every entry point shows alike (the GraphQL Task's `question`, and any other reader)."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.actors import answerers
from app.domain.task import Task


@dataclass(frozen=True)
class OpenQuestion:
    on: str  # human | agent
    question: str | None  # the text wait_on asked, if any
    asked_by: str  # the assignee, who waits
    agent: str | None  # the agent named in wait_on(on: agent)
    answerers: tuple[str, ...]  # who may `answer` (an agent's owner may answer for it)
    resumes_when_subtasks_end: bool  # a wait on `agent`: its subtasks' ends resume it too


def open_question(task: Task) -> OpenQuestion | None:
    """The question a task waiting on a human or an agent asks; None for any other task."""
    if task.state != "waiting" or task.waiting_on not in ("human", "agent"):
        return None
    return OpenQuestion(
        on=task.waiting_on,
        question=task.question,
        asked_by=task.assignee,
        agent=task.wait_agent,
        answerers=answerers(task),
        resumes_when_subtasks_end=task.waiting_on == "agent",
    )
