"""The HTTP helpers' logic without a network: app routes, event timing, latency and throughput
accounting, the protocol check. Fake clocks and fake requests; no timing asserts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import httpx
import pytest
from httpx_sse import EventSource

from overheadbench.http import apps, streaming
from overheadbench.http.apps import AgentApp, sse_event
from overheadbench.http.connections import _H1, LoadError
from overheadbench.http.load import LatencyStats, Throughput, latency, window_rates
from overheadbench.http.recorder import ConnectionGone, Recorder, WorkerReport, throughput
from overheadbench.http.server import ProtocolMismatch, Server
from overheadbench.http.streaming import BOM, EventTimer, astream, stream


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


class Reads(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body that arrives in the given reads, each advancing the fake clock first."""

    def __init__(self, ticks: Ticks, reads: list[tuple[int, bytes]]) -> None:
        self.ticks, self.reads = ticks, reads

    def __iter__(self):
        for at, chunk in self.reads:
            self.ticks.now = at
            yield chunk

    async def __aiter__(self):
        for at, chunk in self.reads:
            self.ticks.now = at
            yield chunk


def sse_client(reads: list[tuple[int, bytes]], ticks: Ticks, asynchronous: bool = False) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Reads(ticks, reads))

    transport = httpx.MockTransport(handler)
    return (httpx.AsyncClient if asynchronous else httpx.Client)(transport=transport, base_url="http://app")


def test_an_event_is_timed_by_the_read_that_completed_it_sync_and_async() -> None:
    reads = [(1_000, b"data: 0"), (5_000, b"0\n\ndata: 01\n\ndata: 0"), (9_000, b"2\n\n")]
    ticks = Ticks()
    sync = stream(sse_client(reads, ticks), "/s", clock_ns=ticks)
    ticks.now = 0
    asynchronous = anyio.run(lambda: astream(sse_client(reads, ticks, asynchronous=True), "/s", clock_ns=ticks))
    for stats in (sync, asynchronous):
        assert (stats.events, stats.reads, stats.bytes) == (3, 3, len(b"data: 00\n\ndata: 01\n\ndata: 02\n\n"))
        assert stats.first_event_s == pytest.approx(5e-6) and stats.total_s == pytest.approx(9e-6)
        assert stats.gap_p50_s == pytest.approx(2e-6)  # gaps 0 and 4 µs: the first two came in one read
        assert stats.events_per_s == pytest.approx(3 / 9e-6)


SPEC_EXAMPLES = [
    # the examples of the WHATWG HTML standard's "event stream interpretation", and their events
    ("data: YHOO\ndata: +2\ndata: 10\n\n", ["YHOO\n+2\n10"]),
    (
        ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
        ["first event", "second event", " third event"],
    ),
    ("data\n\ndata\ndata\n\ndata:", ["", "\n"]),
    ("data:test\n\ndata: test\n\n", ["test", "test"]),
]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("text, data", SPEC_EXAMPLES)
def test_the_specs_examples_parse_with_every_line_ending_split_anywhere(
    text: str, data: list[str], ending: str
) -> None:
    body = text.replace("\n", ending).encode()
    for split in range(1, len(body)):
        timer = EventTimer(Ticks())
        with sse_client([(1, body[:split]), (2, body[split:])], Ticks()).stream("GET", "/") as response:
            response.stream = streaming._StampedStream(response.stream, timer)
            events = [sse.data for sse in EventSource(response).iter_sse()]
        assert events == data, (ending, split)


def test_a_byte_order_mark_is_dropped_and_id_and_retry_are_read() -> None:
    ticks = Ticks()
    body = BOM + b"retry: 3000\r\nid: 7\r\nevent: token\r\ndata: a\r\n\r\n"
    stats = stream(sse_client([(3, body)], ticks), "/", clock_ns=ticks)
    assert (stats.events, stats.last_event_id, stats.bytes) == (1, "7", len(body) - len(BOM))


def test_a_stream_without_a_complete_event_is_an_error() -> None:
    ticks = Ticks()
    with pytest.raises(ValueError, match="without one complete event"):
        stream(sse_client([(1, b"data: never ends")], ticks), "/", clock_ns=ticks)


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


def test_requests_in_flight_at_the_deadline_finish_uncounted_or_are_cancelled_after_the_drain() -> None:
    finished = []

    async def request(seconds: float) -> httpx.Response:
        await anyio.sleep(seconds)
        finished.append(seconds)
        return httpx.Response(200)

    slow = anyio.run(lambda: throughput(lambda: request(5), concurrency=4, duration_s=0.05, warmup=0, drain_s=0.05))
    assert (slow.requests, slow.errors, slow.latency, slow.window_rates) == (0, 0, None, (0.0,) * 10)
    assert finished == []  # cancelled when the drain ran out, not awaited to the end
    late = anyio.run(lambda: throughput(lambda: request(0.2), concurrency=3, duration_s=0.05, warmup=0))
    assert (late.requests, finished) == (0, [0.2] * 3)  # let finish (no reset stream left open), not counted


def test_window_rates_spread_completions_over_equal_slices() -> None:
    assert window_rates([0, 1, 2, 5, 9], 10, windows=2) == (3 * 2 * 1e8, 2 * 2 * 1e8)
    assert window_rates([], 0) == ()


def test_the_built_in_app_refuses_oversized_requests_with_413_and_bad_numbers_with_400() -> None:
    async def main() -> None:
        async with asgi_client() as client:
            big = await client.post("/echo", content=b"x" * (apps.MAX_BODY_BYTES + 1))
            assert big.status_code == 413 and "16,777,216 bytes" in big.json()["error"]
            huge = await client.get("/stream?chunks=200&size=1000000")
            assert huge.status_code == 413 and "a stream may be at most" in huge.json()["error"]
            assert (await client.get("/stream?size=2000000")).status_code == 413
            assert (await client.get("/stream?chunks=-1")).status_code == 413
            bad = await client.get("/stream?chunks=ten")
            assert bad.status_code == 400 and "ten" in bad.json()["error"]
            ok = await client.post("/echo", content=b"y" * 1000)
            assert ok.status_code == 200 and ok.headers["content-length"] == "1000"
            assert (await client.get("/_stats")).json()["in_flight"] == 1  # every refused request ended

    anyio.run(main)


def test_a_request_whose_client_went_away_ends_without_an_answer() -> None:
    app = AgentApp()
    sent = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/echo", "query_string": b""}
    anyio.run(lambda: app(scope, receive, send))
    assert (sent, app.in_flight, app.requests) == ([], 0, 1)


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


class _Wire:
    """A transport that keeps what was written and whether it was closed."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closed = True


def _answers(responses: list[bytes], split: int, head: bool = False) -> list[int | str]:
    """What the lean HTTP/1.1 connection reads from ``responses``, one per request, each
    arriving in pieces of ``split`` bytes: each status, or the error."""

    async def main() -> list[int | str]:
        connection = _H1(b"GET / HTTP/1.1\r\n\r\n", head)
        wire = _Wire()
        connection.transport = wire  # type: ignore[assignment]
        answers: list[int | str] = []
        for response in responses:
            sending = asyncio.ensure_future(connection.send())
            await asyncio.sleep(0)
            for start in range(0, len(response), split):
                connection.data_received(response[start : start + split])
            try:
                answers.append(await asyncio.wait_for(sending, 1))
            except LoadError as exc:
                answers.append(str(exc))
        return answers

    return asyncio.run(main())


@pytest.mark.parametrize("split", range(1, 60, 7))
def test_the_lean_http1_client_reads_every_response_framing_split_anywhere(split: int) -> None:
    sized = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
    chunked = b"HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n"
    no_content = b"HTTP/1.1 204 No Content\r\n\r\n"
    not_modified = b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"  # the length of what is not sent
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
    assert _answers([sized, chunked, no_content, not_modified, interim, sized], split) == [200, 404, 204, 304, 201, 200]


def test_a_head_response_ends_at_its_headers_whatever_its_content_length() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n"
    assert _answers([head, head, b"HTTP/1.1 100 Continue\r\n\r\n" + head], 7, head=True) == [200, 200, 200]


def test_a_response_that_does_not_parse_is_an_error_that_ends_the_connection() -> None:
    (answer,) = _answers([b"HTTP/1.1 abc nonsense\r\n\r\n"], 100)
    assert isinstance(answer, str) and answer.startswith("an HTTP/1.1 response that does not parse")


def test_one_rule_for_failed_requests_a_gone_connection_stops_only_its_worker() -> None:
    """The recorder both load loops use: an error is counted and the worker goes on, unless the
    connection is gone; statuses >= 400 are errors; nothing counts after the deadline."""
    now = [0]
    recorder = Recorder(1.0, clock_ns=lambda: now[0])
    script = iter([200, RuntimeError("stream reset"), 503, 200, ConnectionGone("closed"), 200])

    async def send() -> int:
        now[0] += 1000
        step = next(script)
        if isinstance(step, Exception):
            raise step
        return step

    asyncio.run(recorder.worker(send))
    assert len(recorder.latencies_ns) == 2 and recorder.served == 2
    assert recorder.failures == ["RuntimeError: stream reset", "status 503", "ConnectionGone: closed"]
    late = Recorder(1e-6, clock_ns=lambda: now[0])

    async def slow() -> int:
        now[0] += 10_000
        return 200

    asyncio.run(late.worker(slow))
    assert late.late == 1 and late.latencies_ns == [] and late.served == 1


def test_the_workers_reports_merge_into_one_run() -> None:
    """Each lean worker sends its recorder's report; the load is their requests together, their
    CPU added, over the longest run, with the first error any of them saw."""
    quiet = WorkerReport([1_000, 2_000], [10_000, 20_000], 0, "", 3, 1_000_000_000, 0.3)
    failing = WorkerReport([3_000], [30_000], 2, "status 503", 1, 900_000_000, 0.1)
    assert WorkerReport.from_json(json.loads(json.dumps(failing.to_json()))) == failing
    merged = WorkerReport.merged([quiet, failing])
    assert (merged.latencies_ns, merged.errors, merged.first_error, merged.served) == (
        [1_000, 2_000, 3_000],
        2,
        "status 503",
        4,
    )
    load = merged.throughput(concurrency=4, server_s=0.8)
    assert (load.requests, load.errors, load.duration_s) == (3, 2, 1.0)
    assert load.client_cpu_s_per_request == pytest.approx(0.1) and load.server_cpu_s_per_request == pytest.approx(0.2)


def test_req_per_s_is_read_per_slot_so_a_request_cut_by_the_deadline_does_not_lower_it() -> None:
    """Requests of 0.4 s in a 1 s window: each slot finishes two (at 0.4 and 0.8 s) and its third is
    still running at the deadline. Over the duration that read 2 a second a slot (20% low); over each
    slot's time to its last completion it reads 2.5, the slot's true rate. Short requests read alike."""
    now = [0]

    def run(latency_ns: int, slots: int) -> Throughput:
        recorder = Recorder(1.0, clock_ns=lambda: now[0])

        async def send() -> int:
            now[0] += latency_ns
            return 200

        async def each() -> None:
            for _ in range(slots):  # one slot after another on the injected clock, each from the start
                now[0] = recorder.started
                await recorder.worker(send)

        asyncio.run(each())
        now[0] = recorder.deadline  # the run is read at its end
        return recorder.throughput(slots, cpu_s=0.0)

    long = run(400_000_000, 8)
    assert long.requests == 16 and long.requests / long.duration_s == pytest.approx(16.0)
    assert long.requests_per_s == pytest.approx(20.0)  # 8 slots x 2.5 a second
    short = run(1_000_000, 2)
    assert short.requests_per_s == pytest.approx(short.requests / short.duration_s, rel=0.01)
    pooled = Throughput.pooled([long, long])
    assert pooled.requests_per_s == pytest.approx(20.0)
    report = WorkerReport.from_json(json.loads(json.dumps(Recorder(1.0).report(0.0).to_json())))
    assert report.slots == []
