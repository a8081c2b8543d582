"""Remote agents: an owner's agents that live elsewhere and speak A2A, and the tasks sent to
them. The A2A side (sending, following, the moves made on the agent's behalf) is
app/a2a/outbound/; what is kept of it is here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemoteAgent:
    agent_id: str
    owner: str
    card_url: str
    credential: str | None  # sent as a bearer token; never shown again
    created_at: str
    read_to: int = 0  # the seq up to which the log has been read for it


@dataclass(frozen=True)
class RemoteTask:
    """A task sent to a remote agent: `message_id` sent it (the same on every resend);
    `remote_task_id` once the remote answered; `sent_at` once a send was tried; `asked`,
    the remote question already put to the requester; `done`, nothing more to follow."""

    task_id: str
    agent_id: str
    message_id: str
    remote_task_id: str | None = None
    sent_at: str | None = None
    asked: str | None = None
    answered: str | None = None  # the id of the message that sent the requester's answer
    checkpointed: str | None = None  # the remote status update last kept as a checkpoint
    done: bool = False
