"""The HTTP helpers' logic without a network: app routes, event timing, latency and throughput
accounting, the protocol check. Fake clocks and fake requests; no timing asserts."""

from __future__ import annotations

import anyio
import httpx
import pytest

from overheadbench.http.apps import AgentApp, sse_event
from overheadbench.http.load import LatencyStats, latency, throughput
from overheadbench.http.server import ProtocolMismatch, Server
from overheadbench.http.streaming import EventTimer


class Ticks:
    """A fake nanosecond clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def asgi_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=AgentApp()), base_url="http://app")


def test_the_built_in_app_echoes_streams_and_batches_the_same_bytes() -> None:
    async def main() -> None:
        async with asgi_client() as client:
            echoed = await client.post("/echo", content=b'{"a": 1}')
            assert (echoed.status_code, echoed.content, echoed.headers["content-type"]) == (
                200,
                b'{"a": 1}',
                "application/json",
            )
            streamed = await client.get("/stream?chunks=5&size=7")
            batched = await client.get("/batch?chunks=5&size=7")
            assert streamed.content == batched.content == b"".join(sse_event(i, 7) for i in range(5))
            assert streamed.headers["content-type"] == "text/event-stream"
            assert (await client.get("/delay?ms=1")).json() == {"slept_ms": 1.0}
            assert (await client.get("/nowhere")).status_code == 404
            stats = (await client.get("/_stats")).json()
            assert stats["requests"] == 6 and stats["in_flight"] == 1

    anyio.run(main)


def test_sse_events_have_the_requested_payload_size() -> None:
    assert sse_event(3, 5) == b"data: 00003\n\n"
    assert len(sse_event(123456, 100)) == len(b"data: \n\n") + 100


def test_an_event_is_timed_when_its_end_arrives_not_its_first_byte() -> None:
    ticks = Ticks()
    timer = EventTimer(ticks)
    timer.start()
    ticks.now = 1_000
    timer.feed(b"data: 0")  # headers and half an event: no event yet
    ticks.now = 5_000
    timer.feed(b"0\n\ndata: 01\n\ndata: 0")  # the first two complete together (coalesced)
    ticks.now = 9_000
    timer.feed(b"2\n\n")
    ticks.now = 10_000
    stats = timer.stats()
    assert (stats.events, stats.reads, stats.bytes) == (3, 3, len(b"data: 00\n\ndata: 01\n\ndata: 02\n\n"))
    assert stats.first_event_s == pytest.approx(5e-6) and stats.total_s == pytest.approx(10e-6)
    assert stats.gap_p50_s == pytest.approx(2e-6)  # gaps 0 and 4 µs
    assert stats.events_per_s == pytest.approx(3 / 10e-6)


def test_a_stream_without_a_complete_event_is_an_error() -> None:
    timer = EventTimer(Ticks())
    timer.start()
    timer.feed(b"data: never ends")
    with pytest.raises(ValueError, match="without one complete event"):
        timer.stats()


def test_p99_needs_a_thousand_samples() -> None:
    few = LatencyStats.from_ns(list(range(1, 101)))
    assert few.p99_s is None and "1000" in few.note and few.count == 100
    many = LatencyStats.from_ns(list(range(1, 1001)))
    assert many.p99_s == pytest.approx(990.01e-9) and many.note == ""


def test_latency_warms_up_then_times_each_request() -> None:
    ticks, sent = Ticks(), []

    def send() -> None:
        sent.append(1)
        ticks.now += 1_000 * len(sent)

    stats = latency(send, count=3, warmup=2, clock_ns=ticks)
    assert len(sent) == 5 and stats.count == 3
    assert (stats.min_s, stats.max_s) == pytest.approx((3e-6, 5e-6))


def test_throughput_counts_errors_apart_and_stops_at_max_requests() -> None:
    calls = []

    async def send() -> httpx.Response:
        calls.append(1)
        index = len(calls)
        await anyio.sleep(0)
        if index % 5 == 0:
            raise httpx.ConnectError("refused")
        return httpx.Response(500 if index % 7 == 0 else 200)

    result = anyio.run(lambda: throughput(send, concurrency=3, duration_s=60, max_requests=50, warmup=0))
    assert result.requests + result.errors == 50
    assert result.errors == sum(1 for i in range(1, 51) if i % 5 == 0 or i % 7 == 0)
    assert result.first_error in ("ConnectError: refused", "status 500")


def test_requests_in_flight_at_the_deadline_are_not_counted() -> None:
    finished = []

    async def slow() -> httpx.Response:
        await anyio.sleep(5)
        finished.append(1)
        return httpx.Response(200)

    result = anyio.run(lambda: throughput(slow, concurrency=4, duration_s=0.05, warmup=0))
    assert (result.requests, result.errors, result.latency) == (0, 0, None)
    assert finished == []  # cancelled at the deadline, not awaited to the end


def test_an_h2c_server_answering_over_http1_fails_loudly() -> None:
    server = Server("m:app", "h2c", "http://127.0.0.1:1", process=None, log=None)  # type: ignore[arg-type]
    server.check(httpx.Response(200, extensions={"http_version": b"HTTP/2"}))
    with pytest.raises(ProtocolMismatch, match="started for h2c, but a response came over HTTP/1.1"):
        server.check(httpx.Response(200, extensions={"http_version": b"HTTP/1.1"}))
    assert server.versions == {"HTTP/2": 1, "HTTP/1.1": 1}


def test_the_hold_barrier_releases_when_all_are_in_flight_or_at_its_timeout() -> None:
    async def main() -> tuple[list, dict]:
        async with asgi_client() as client:
            answers = []

            async def one() -> None:
                answers.append((await client.get("/hold?n=3&timeout_ms=10000")).json()["max_in_flight"])

            async with anyio.create_task_group() as group:
                for _ in range(3):
                    group.start_soon(one)
            await client.post("/_stats")  # reset the gauge
            alone = (await client.get("/hold?n=2&timeout_ms=20")).json()  # nobody joins: the timeout ends it
            return answers, alone

    answers, alone = anyio.run(main)
    assert answers == [3, 3, 3] and alone == {"max_in_flight": 1}  # all three were held in flight together
