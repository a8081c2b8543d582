"""ListTasks: a page of the agent's tasks the caller sees, by id, with A2A's filters."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from a2a.types import ListTasksRequest, ListTasksResponse, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE, MAX_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from app.a2a.inbound import tasks
from app.a2a.inbound.call import Call
from app.domain.reads import TaskFilters
from app.domain.task import Task as PrickleTask
from app.service import reads


async def page(call: Call, params: ListTasksRequest) -> ListTasksResponse:
    """A page of the agent's tasks the caller sees, by id after `pageToken`; A2A's status
    and statusTimestampAfter filters are applied page by page, until the page is full."""
    size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
    if not 1 <= size <= MAX_LIST_TASKS_PAGE_SIZE:
        raise InvalidParamsError(message=f"pageSize must be 1 to {MAX_LIST_TASKS_PAGE_SIZE}")
    registered, erased = await reads.agent_standing(call.store, call.agent)
    if not registered or erased:
        raise TaskNotFoundError(message=f"no agent {call.agent[:80]!r} here")
    filters = TaskFilters(project=params.context_id or None, assignee=call.agent)
    wanted = _wanted(params)
    found, after = await _matching(call, filters, wanted, size, params.page_token)
    # counted in SQL without A2A's own filters; with them, not counted (0)
    unfiltered = wanted is _any
    total = await reads.count_tasks(call.store, call.caller, filters) if unfiltered else 0
    shown = [tasks.a2a_task(t, call.caller) for t in found]
    return ListTasksResponse(
        tasks=shown,
        next_page_token=after or "",
        page_size=size,
        total_size=total,
    )


async def _matching(
    call: Call, filters: TaskFilters, wanted: Any, size: int, after: str | None
) -> tuple[list[PrickleTask], str | None]:
    """Up to `size` tasks that `wanted` takes, after the task `after`; and the page token
    that goes on after them (None: nothing is left)."""
    found: list[PrickleTask] = []
    while True:
        page = await reads.task_page(call.store, call.caller, filters, size, after or None)
        for i, task in enumerate(page.items):
            if wanted(task):
                found.append(task)
            if len(found) == size:
                left = i < len(page.items) - 1 or page.has_next
                return found, task.id if left else None
        if not page.has_next:
            return found, None
        after = page.items[-1].id


def _any(task: PrickleTask) -> bool:
    return True


def _wanted(params: ListTasksRequest) -> Any:
    state = params.status
    since = (
        params.status_timestamp_after.ToDatetime(tzinfo=UTC)
        if params.HasField("status_timestamp_after")
        else None
    )
    if state == TaskState.TASK_STATE_UNSPECIFIED and since is None:
        return _any

    def wanted(task: PrickleTask) -> bool:
        if state != TaskState.TASK_STATE_UNSPECIFIED and (
            tasks.a2a_state(task.state, task.waiting_on) != state
        ):
            return False
        return since is None or datetime.fromisoformat(task.updated_at) > since

    return wanted
