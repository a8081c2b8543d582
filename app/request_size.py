"""A request body held to a size: what the GraphQL endpoint and every A2A server take in
one request. A leaf: it imports nothing of app/."""

from __future__ import annotations

from starlette.types import Message, Receive, Scope

MAX_BODY_BYTES = 1_000_000


async def bounded(scope: Scope, receive: Receive, limit: int = MAX_BODY_BYTES) -> Receive | None:
    """What reads the request's body, or None when it is longer than `limit` bytes (then the
    rest is left unread, and the answer should close the connection). A Content-Length over
    the limit or malformed is refused unread; without one (a chunked body), the body is read
    counting, and handed on as one message (`gone` if the client went away meanwhile)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return receive if value.isdigit() and int(value) <= limit else None
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return gone
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None
        more = message.get("more_body", False)
    whole: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
    handed = False

    async def replay() -> Message:
        nonlocal handed
        if not handed:
            handed = True
            return whole
        return await receive()

    return replay


async def gone() -> Message:
    """The client went away."""
    return {"type": "http.disconnect"}
