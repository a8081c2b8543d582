"""Lineage of a result: what caused the task and what context the assignee declares it used."""

from __future__ import annotations

from app.domain.schedules import lineage_cause
from app.domain.task import JSON, Task


def cause(task: Task) -> JSON:
    if task.schedule_id is not None and task.schedule_version is not None:
        owner = task.requested_by["handle"]
        return lineage_cause(task.schedule_id, task.schedule_version, task.id, owner)
    if task.requested_by.get("kind") == "person" and task.origin_message_id:
        return {
            "kind": "owner_message",
            "message_id": task.origin_message_id,
            "author": task.requested_by["handle"],
        }
    if task.requester and task.parent_task_id:
        return {
            "kind": "task",
            "task_id": task.parent_task_id,
            "basis": task.gate.basis or "same_owner",
            "rule_id": task.gate.rule_id,
            "approval_id": task.gate.approval_id,
        }
    return {"kind": "none"}


def provenance_status(context: list[JSON], known: dict[tuple[str, str], str]) -> str:
    """`attested` when every packet and checkpoint item's sha256 is what the server holds.

    `known` maps ("packet", task_id) and ("checkpoint", checkpoint_id) to the held sha256.
    """
    for item in context:
        kind = item["kind"]
        if kind == "memory_fact":
            return "claimed"
        key = (kind, item["task_id"] if kind == "packet" else item["checkpoint_id"])
        if known.get(key) != item["sha256"]:
            return "claimed"
    return "attested"
