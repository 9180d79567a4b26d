"""An LLM-gateway-shaped service, as a team would put in front of a model server: a Starlette
app that takes ``POST /v1/chat`` and forwards the body to its upstream's ``/echo`` over one
pooled httpx client, returning the upstream's answer. The upstream's URL comes from
``UPSTREAM_URL`` (``asgi_server(GATEWAY, env={"UPSTREAM_URL": upstream.url})``);
``GATEWAY_DELAY_MS`` adds a fixed wait per request (what a validation injects to see a
known cost detected)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

UPSTREAM = os.environ.get("UPSTREAM_URL", "http://127.0.0.1:9")
DELAY_S = float(os.environ.get("GATEWAY_DELAY_MS", "0")) / 1000
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=200)


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    async with httpx.AsyncClient(base_url=UPSTREAM, limits=LIMITS, timeout=30) as client:
        yield {"client": client}


async def chat(request: Request) -> Response:
    if DELAY_S:
        await asyncio.sleep(DELAY_S)
    client: httpx.AsyncClient = request.state.client
    upstream = await client.post("/echo", content=await request.body(), headers={"content-type": "application/json"})
    return Response(upstream.content, upstream.status_code, media_type="application/json")


app = Starlette(routes=[Route("/v1/chat", chat, methods=["POST"])], lifespan=lifespan)
