"""Debug-only routes, mounted when PRICKLE_DEBUG_HOOKS=1 (tests set it; production never).

`GET /debug/live` reports what live subscriptions hold in this process, so a test can
check that dropped connections release everything: the hub's subscribers, the events
waiting in their queues, the asyncio tasks, and the resident memory.
"""

from __future__ import annotations

import asyncio
import os

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.settings import current


def routes() -> list[Route]:
    if not current().debug_hooks:
        return []
    return [Route("/debug/live", live)]


async def live(request: Request) -> JSONResponse:
    hub = request.app.state.hub
    subscribers = list(hub.subscribers)
    return JSONResponse(
        {
            "subscribers": len(subscribers),
            "queued": sum(sub.queue.qsize() for sub in subscribers),
            "tasks": len(asyncio.all_tasks()),
            "task_names": sorted(_name(task) for task in asyncio.all_tasks()),
            "rss_bytes": _rss_bytes(),
        }
    )


def _name(task: asyncio.Task[object]) -> str:
    """The task's name and the coroutine it runs: where a task left behind comes from."""
    coroutine = task.get_coro()
    return f"{task.get_name()} {getattr(coroutine, '__qualname__', coroutine)}"


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
