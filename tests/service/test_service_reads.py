"""The read side answers with domain objects, each call in its own read transaction, and
leaves out what the viewer may not see."""

from __future__ import annotations

import pytest
from factory import (
    CHECKPOINT,
    CODER,
    PLANNER,
    SPY,
    call,
    give,
)

from app.domain.events import Event
from app.domain.reads import EventFilters, Paging, SavedCheckpoint, TaskFilters
from app.domain.task import Task
from app.service import reads
from app.service.database import Store

pytestmark = pytest.mark.cast


async def _worked_on(store: Store) -> Task:
    """A task with a subtask, a saved checkpoint and a returned result."""
    task = await give(store, project="reads")
    for verb in ("accept_task", "start_task", "save_checkpoint"):
        task = await call(store, verb, CODER, task.id)
    await give(store, project="reads", parent_task_id=task.id)
    return await call(store, "return_result", CODER, task.id)


async def test_a_task_is_there_for_who_may_see_it_and_absent_for_others(store: Store) -> None:
    task = await give(store)
    found = await reads.task(store, PLANNER, task.id)
    assert isinstance(found, Task) and found.id == task.id and found.version == task.version
    assert await reads.task(store, SPY, task.id) is None
    assert await reads.task(store, PLANNER, "t_absent") is None


async def test_pages_and_counts_of_tasks_and_events_agree(store: Store) -> None:
    task = await _worked_on(store)
    filters = TaskFilters(project="reads")
    page = await reads.task_page(store, PLANNER, filters, 1, None)
    assert [t.id for t in page.items] == [task.id] and page.has_next
    assert await reads.count_tasks(store, PLANNER, filters) == 2
    assert await reads.count_tasks(store, SPY, filters) == 0
    events = EventFilters(task_id=task.id)
    history = await reads.event_page(store, PLANNER, events, Paging(100))
    assert all(isinstance(e, Event) for e in history.items) and not history.has_next
    assert await reads.count_task_events(store, PLANNER, events) == len(history.items)
    assert (await reads.event_page(store, SPY, events, Paging(100))).items == []


async def test_batch_lookups_answer_by_id_with_domain_objects(store: Store) -> None:
    task = await _worked_on(store)
    ids = [task.id, "t_absent"]
    assert set(await reads.tasks_by_id(store, PLANNER, ids)) == {task.id}
    children = (await reads.children_of(store, PLANNER, ids))[task.id]
    assert [c.parent_task_id for c in children] == [task.id]
    (saved,) = (await reads.checkpoints_of(store, PLANNER, ids))[task.id]
    assert isinstance(saved, SavedCheckpoint) and saved.agent == CODER.id
    assert saved.body["progress"] == CHECKPOINT["progress"]
    assert len((await reads.results_of(store, PLANNER, ids))[task.id]) == 1
    verbs = [e.verb for e in (await reads.events_of(store, PLANNER, ids))[task.id]]
    assert {"accept_task", "save_checkpoint"} <= set(verbs) and verbs[-1] == "return_result"
    for lookup in (reads.children_of, reads.checkpoints_of, reads.results_of, reads.events_of):
        assert dict(await lookup(store, SPY, ids)) == {}
