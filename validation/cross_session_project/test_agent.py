"""A small agent project: pydantic messages, three middleware layers, an agent step."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel


class Request(BaseModel):
    user: str
    text: str
    tokens: int = 0


class Reply(BaseModel):
    text: str
    tokens: int


def handle(request: dict) -> dict:
    return {"text": request["text"][::-1], "tokens": len(request["text"])}


def logging_layer(inner):
    seen = []

    def run(request):
        seen.append(request["user"])
        if len(seen) > 64:
            seen.clear()
        return inner(request)

    return run


def timing_layer(inner):
    def run(request):
        started = time.perf_counter()
        reply = inner(request)
        reply["elapsed"] = time.perf_counter() - started
        return reply

    return run


def validating_layer(inner):
    def run(request):
        checked = Request.model_validate(request)
        return Reply.model_validate(inner(checked.model_dump())).model_dump()

    return run


STACK = validating_layer(timing_layer(logging_layer(handle)))
REQUEST = {"user": "ana", "text": "what is the weather like in lisbon today?"}


@pytest.mark.overhead(max=40.0)
def test_middleware_stack(overhead):
    """Three layers around a bare handler."""
    overhead.compare(lambda: handle(REQUEST), lambda: STACK(REQUEST))


@pytest.mark.overhead(max=5.0)
def test_logging_and_timing(overhead):
    """The two plain layers alone."""
    plain = timing_layer(logging_layer(handle))
    overhead.compare(lambda: handle(REQUEST), lambda: plain(REQUEST))


async def bare_step(request: dict) -> dict:
    await asyncio.sleep(0)
    return handle(request)


async def agent_step(request: dict) -> dict:
    checked = Request.model_validate(request)
    await asyncio.sleep(0)
    reply = Reply.model_validate(handle(checked.model_dump()))
    return reply.model_dump()


@pytest.mark.overhead(max=10.0)
def test_agent_step(overhead):
    """One agent step: validated in and out, against the bare step."""

    async def bare():
        return await bare_step(REQUEST)

    async def framework():
        return await agent_step(REQUEST)

    overhead.compare(bare, framework)


@pytest.mark.overhead(max=50.0)
def test_validation(overhead):
    """pydantic validation against reading the dict."""
    overhead.compare(lambda: dict(REQUEST), lambda: Request.model_validate(REQUEST).model_dump())
