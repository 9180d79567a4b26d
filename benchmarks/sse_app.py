"""An agent that streams tokens with sse-starlette (Starlette's SSE response), as a team's
service would: CRLF line endings, ids, event names and ping comments."""

from __future__ import annotations

import asyncio

from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route


async def tokens(request: Request) -> EventSourceResponse:
    count = min(int(request.query_params.get("n", "50")), 10_000)
    delay = float(request.query_params.get("delay_ms", "0")) / 1000

    async def events():
        for index in range(count):
            if delay:
                await asyncio.sleep(delay)
            yield {"event": "token", "id": str(index), "data": f"token {index:04d} " + "x" * 90}

    return EventSourceResponse(events(), ping=15)


app = Starlette(routes=[Route("/tokens", tokens)])
