"""ListTasks: a page of the agent's tasks the caller sees, by id, with A2A's filters."""

from __future__ import annotations

from datetime import UTC

from a2a.types import ListTasksRequest, ListTasksResponse, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE, MAX_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from app.a2a.inbound import tasks
from app.a2a.inbound.call import Call
from app.domain.clock import rfc3339
from app.domain.reads import TaskFilters
from app.service import reads


async def page(call: Call, params: ListTasksRequest) -> ListTasksResponse:
    """A page of the agent's tasks the caller sees, by id after `pageToken`, with A2A's
    contextId, status and statusTimestampAfter filters applied in SQL; `totalSize` counts
    every task they take."""
    size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
    if not 1 <= size <= MAX_LIST_TASKS_PAGE_SIZE:
        raise InvalidParamsError(message=f"pageSize must be 1 to {MAX_LIST_TASKS_PAGE_SIZE}")
    registered, erased = await reads.agent_standing(call.store, call.agent)
    if not registered or erased:
        raise TaskNotFoundError(message=f"no agent {call.agent[:80]!r} here")
    filters = _filters(call, params)
    found = await reads.task_page(call.store, call.caller, filters, size, params.page_token or None)
    total = await reads.count_tasks(call.store, call.caller, filters)
    return ListTasksResponse(
        tasks=[tasks.a2a_task(t, call.caller) for t in found.items],
        next_page_token=found.items[-1].id if found.has_next else "",
        page_size=size,
        total_size=total,
    )


def _filters(call: Call, params: ListTasksRequest) -> TaskFilters:
    state = params.status
    if state not in TaskState.values():  # a number no state has (an unknown name is unset)
        raise InvalidParamsError(message=f"status {state} is no TaskState")
    return TaskFilters(
        project=params.context_id or None,
        assignee=call.agent,
        state_in=(
            tasks.prickle_states(state) if state != TaskState.TASK_STATE_UNSPECIFIED else None
        ),
        updated_after=(
            rfc3339(params.status_timestamp_after.ToDatetime(tzinfo=UTC))
            if params.HasField("status_timestamp_after")
            else None
        ),
    )
