"""Events: one per move or checkpoint, appended to the log in the move's transaction."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.types import JSON

KINDS = ("snapshot", "created", "moved", "checkpointed", "result", "answered")
# what a reader of the log reads of an event as it is stored, each a column of the log and a
# scalar of the API's event (its cursor is `seq`, as text)
FIELDS = (
    "seq",
    "kind",
    "task_id",
    "project",
    "from_state",
    "to_state",
    "waiting_on",
    "verb",
    "actor",
    "at",
    "version",
    "note",
)


@dataclass(frozen=True)
class Said:
    """What an event of a task said, if anything: the question a wait asked, an answer, a
    reason (its `note`); without the task it carries."""

    seq: int
    kind: str
    to_state: str
    waiting_on: str | None
    note: str


@dataclass(frozen=True)
class Event:
    kind: str
    task_id: str
    project: str
    from_state: str | None
    to_state: str
    waiting_on: str | None
    verb: str | None  # the mutation that caused it; None for a snapshot
    actor: str | None  # handle or agent id; None for the server
    at: str
    version: int
    task: JSON  # the task object right after this event
    note: str | None = None
    seq: int = 0
    wait_agent: str | None = None  # the agent named in wait_on: it may see the task meanwhile

    @property
    def cursor(self) -> str:
        return str(self.seq)
