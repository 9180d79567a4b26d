"""Transport benchmarks: HTTP/1.1, h2c, HTTPS, HTTP/2 over TLS and HTTP/3 through
overheadbench's server fixture, side by side.

Three kinds of test. ``@pytest.mark.overhead`` pairs are judged by the overhead engine (the
fixture's client against a hand-written httpx client, HTTP against an in-process call,
transport as a share of 10 ms of real work). Transport pairs (``transport.compare``) answer the
seeds' relative questions (h2c vs HTTP/1.1 at 1, 10 and 100 in flight, TLS and HTTP/3 vs
cleartext, streaming vs batch, sse-starlette vs the built-in agent, a gateway vs its upstream)
with both sides measured in one session, windows interleaved, each budget on the framework
side's change or added cost. ``@pytest.mark.transport`` rows measure absolute figures (the lean
load generator, repeated streams): latency budgets as the seeds publish them (P95 < 5 ms
sequential, first SSE event < 10 ms), and throughput floors far below what this machine kind
measures, so that a floor catches a transport that broke (serialised requests, a protocol
fallen back, a client gone slow tenfold) and never the machine's mood: an absolute budget is
judged with the figure's spread between sessions, and one near the figure would be
inconclusive. The plugin prints the tables at the end.
"""

from __future__ import annotations

import json
import time

import anyio
import httpx
import pytest

from overheadbench.http import astream, throughput
from overheadbench.http.loadrun import Target

BODY = json.dumps({"message": "hello", "padding": "x" * 60}).encode()  # ~100 bytes
ECHO = {"path": "/echo", "body": BODY}  # the lean load's request: POST /echo with BODY
PROTOCOLS = ["http1", "h2c"]
ALL_PROTOCOLS = ["http1", "h2c", "https", "h2", "h3"]
SSE_STARLETTE = "sse_app:app"  # benchmarks/ is on sys.path, and so on the server's
GATEWAY = "gateway_app:app"


def bare_client(server) -> httpx.Client:
    """What a hand-written benchmark would use: httpx with the protocol flags, nothing else."""
    return httpx.Client(base_url=server.url, http1=server.protocol == "http1", http2=server.protocol == "h2c")


@pytest.mark.overhead(max=0.10, group="transport")
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_fixture_client_adds_nothing_to_the_stack(overhead, asgi_server, protocol):
    """The fixture's client may be at most 10% slower than a bare httpx client (-1..+2% measured): it checks each
    response's protocol and adds nothing else."""
    server = asgi_server(protocol=protocol)
    with bare_client(server) as bare:
        ours = server.client()
        overhead.compare(
            baseline=lambda: bare.post("/echo", content=BODY), framework=lambda: ours.post("/echo", content=BODY)
        )


@pytest.mark.overhead(max_abs="5ms", group="transport")  # a local round trip may cost at most 5 ms per call
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_http_round_trip_vs_in_process_call(overhead, asgi_server, protocol):
    """A local HTTP round trip may add at most 5 ms per call to the in-process call (0.7-1 ms measured)."""
    server = asgi_server(protocol=protocol)
    client = server.client()
    overhead.compare(
        baseline=lambda: json.loads(json.dumps(json.loads(BODY))),
        framework=lambda: client.post("/echo", content=BODY).json(),
    )


@pytest.mark.overhead(max=0.5, group="transport")
def test_transport_as_a_share_of_10ms_of_work(overhead, asgi_server):
    """Behind HTTP, an agent that works 10 ms per call may cost at most 50% more than in process (11-34% measured).

    A "realistic" agent that works 10 ms per call, in process vs behind HTTP. The share
    measured 21-34% over runs here (the round trip costs 2-3.5 ms with the machine's state);
    the budget leaves room for that spread (at 35% one run in five was inconclusive)."""
    server = asgi_server(protocol="http1")
    client = server.client()
    overhead.compare(baseline=lambda: time.sleep(0.010), framework=lambda: client.get("/delay?ms=10"))


# Floors at about a third of the slowest req/s seen on this machine kind in full runs (one request
# at a time: HTTP/1.1 and HTTPS 1,261-3,300, HTTP/2 680-1,590, HTTP/3 500-966; the CPU model and the
# neighbours' load move them twofold between sessions): a floor the figure can touch is a coin toss.
# The seeds' "> 1,000 req/s" is met over HTTP/1.1 and HTTPS with that margin and is printed beside
# each row; over HTTP/2 and HTTP/3 one round trip is the Python client's protocol state machine plus
# the server's, about 1 ms, so 1,000/s there is the machine's mood, not the transport's.
SEQUENTIAL_FLOOR = {"http1": 400, "h2c": 250, "https": 400, "h2": 250, "h3": 150}
LOADED_FLOOR = {"http1": 400, "h2c": 250, "https": 400, "h2": 250, "h3": 150}


@pytest.mark.transport(p95="5ms")
@pytest.mark.parametrize("protocol", ALL_PROTOCOLS)
def test_sequential_latency(transport, asgi_server, protocol):
    """One request at a time: P95 under 5 ms (the seeds' figure; 0.4-1.9 ms measured) and a req/s floor that
    catches a broken transport (see SEQUENTIAL_FLOOR), the measured req/s beside it."""
    transport.load(asgi_server(protocol=protocol), concurrency=1, **ECHO, rps=SEQUENTIAL_FLOOR[protocol])


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize("protocol", ALL_PROTOCOLS)
def test_concurrency_scaling(transport, asgi_server, protocol):
    """1, 10 and 100 requests in flight, each verified on the server's side, with no failed request and a
    req/s floor at every level; over h2c 100 in flight never below 1 in flight (2.0-3.4x measured).

    Elsewhere the one server process is the limit before the load is: with the lean client,
    HTTP/1.1 at 1 in flight already keeps hypercorn ~85% busy (0.30 ms of its CPU per request
    at ~2,900 req/s), so 100 in flight measured 0.90-2.01x of 1 in flight here, and wrk itself
    measured 0.84x and 0.93x (docs/http.md). Their scaling is reported, not budgeted."""
    scaling = 1.0 if protocol == "h2c" else None
    transport.sweep(asgi_server(protocol=protocol), (1, 10, 100), **ECHO, rps=LOADED_FLOOR[protocol], scaling=scaling)


@pytest.mark.transport(errors=0, rps=250)
def test_hundred_in_flight_for_ten_seconds_has_no_errors(transport, asgi_server, request):
    """100 requests in flight over h2c for 10 s: not one may fail (and req/s above the HTTP/2 floor)."""
    duration = 2.5 if request.config.getoption("--overhead-quick") else 10.0
    transport.load(
        asgi_server(protocol="h2c"), concurrency=100, duration_s=duration, **ECHO, label=f"h2c c=100 for {duration:g} s"
    )


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_httpx_client_cost(transport, asgi_server, protocol):
    """The same sequential echo through httpx (what a hand-written benchmark uses), with no failed request:
    its client CPU per request beside the lean generator's rows shows what the load generator costs."""
    server = asgi_server(protocol=protocol)

    async def main():
        async with server.async_client() as client:
            return await throughput(
                lambda: client.post("/echo", content=BODY), duration_s=transport.duration_s, server_cpu_s=server.cpu_s
            )

    transport.record(f"{protocol} c=1 (httpx client)", anyio.run(main))


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_message_sizes(transport, asgi_server, protocol):
    """Echoes of 100 B, 10 kB and 1 MB through httpx, with no failed request: how req/s falls with size."""
    server = asgi_server(protocol=protocol)
    for size in (100, 10_000, 1_000_000):
        body = b"x" * size

        async def main():
            async with server.async_client() as client:
                return await throughput(
                    lambda: client.post("/echo", content=body),
                    duration_s=transport.duration_s,
                    server_cpu_s=server.cpu_s,
                    warmup=3,
                )

        transport.record(f"{protocol} {size:,} B echo (httpx)", anyio.run(main))


@pytest.mark.anyio
@pytest.mark.transport(ttfe="10ms")
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_streams_of_the_built_in_agent(transport, asgi_server, protocol):
    """The first event within 10 ms (1-2 ms measured) on every stream, and 50 events at over 5,000/s
    (15,000-33,000 measured): a stream that batches or stalls fails.

    Events/s only where 50 events make it more than the request's own cost (10 events in ~2 ms is
    ~5,000/s by the round trip alone)."""
    server = asgi_server(protocol=protocol)
    async with server.async_client() as client:
        await astream(client, "/stream?chunks=50&size=100")  # a warm connection
        await transport.astream(client, "/stream?chunks=10&size=100", label=f"{protocol} SSE 10 x 100 B")
        await transport.astream(
            client, "/stream?chunks=50&size=100", label=f"{protocol} SSE 50 x 100 B", events_per_s=5000
        )


@pytest.mark.anyio
@pytest.mark.transport(ttfe="250ms")
async def test_paced_tokens_arrive_as_they_are_made(transport, asgi_server):
    """Events 50 ms apart: the first within 250 ms (52-76 ms measured; a stream sent whole at the end
    would take 500), and 10 events within 1 s (503-527 measured; 500 is the pacing itself, so a server that
    paces at half the rate fails). The budget was 750 ms while a budget was judged on the session's own
    interval; judged across sessions, the stream figures' prior (25% of the log) puts 527 ms at up to 860 ms,
    so 750 ms would be inconclusive for a figure that in truth moves ~2% (pacing, not the machine, makes it):
    a run that stores its history learns that and judges it tighter."""
    server = asgi_server(protocol="http1")
    async with server.async_client() as client:
        await transport.astream(client, "/stream?chunks=10&size=100&delay_ms=50", label="SSE 10 @ 50 ms", total="1s")
        await transport.astream(
            client, "/stream?chunks=50&size=8&delay_ms=50", label="SSE 50 tokens @ 50 ms", runs=1, total=None
        )


@pytest.mark.anyio
@pytest.mark.transport(ttfe="10ms", events_per_s=2000)
async def test_sse_starlette_streams(transport, asgi_server):
    """sse-starlette's default output (CRLF line endings, ping comments) through the same parser: the first
    event within 10 ms and over 2,000 events/s (1.5 ms and 13,000-19,000/s measured)."""
    pytest.importorskip("sse_starlette", reason="sse-starlette is not installed: pip install '.[bench]'")
    server = asgi_server(SSE_STARLETTE)
    async with server.async_client() as client:
        await astream(client, "/tokens?n=50")
        await transport.astream(client, "/tokens?n=50", label="sse-starlette 50 tokens")


# Transport pairs. Each budget sits about twice the measured change away from it (on this machine kind, 12 rounds of
# 0.25 s windows, five fresh sessions; docs/transport.md): it catches a protocol or a stack that got much slower, and
# the figures themselves, with their paired intervals, are the table a team publishes.
H2C_BUDGETS = {1: {"p50": 3.0}, 10: {"rps": 0.40}, 100: {"rps": 0.40}}


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize("concurrency", [1, 10, 100])
def test_h2c_vs_http1(transport, asgi_server, concurrency):
    """h2c against HTTP/1.1 at 1, 10 and 100 in flight, lean clients on both: one request at a time h2c's p50 at
    most 4x HTTP/1.1's (+114-153% measured: the Python h2 state machine on both ends), and under load at least
    60% of its req/s (-5 to -27% measured at 10 and 100 in flight: hypercorn's one process is the limit for
    both, so h2c's multiplexing does not lift it here)."""
    transport.compare(
        asgi_server(protocol="http1"),
        asgi_server(protocol="h2c"),
        concurrency=concurrency,
        **ECHO,
        label=f"h2c vs http1 c={concurrency}",
        max=H2C_BUDGETS[concurrency],
    )


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize(
    "clear, secured, budget",
    [
        pytest.param("http1", "https", 1.0, id="https"),
        pytest.param("h2c", "h2", 1.0, id="h2"),
        pytest.param("h2c", "h3", 2.0, id="h3"),
    ],
)
def test_tls_and_http3_vs_cleartext(transport, asgi_server, clear, secured, budget):
    """TLS against cleartext, one request at a time: HTTPS over HTTP/1.1 and HTTP/2 over TLS at most twice the
    p50 of the same protocol in the clear (+16-62% and +11-21% measured over 12 sessions), HTTP/3 at most 3x h2c's
    (+59-98%). A session's own interval here is about ±25% (a p50 per 0.25 s window, 12 rounds): a budget at
    +60% was inconclusive in one session of five."""
    transport.compare(
        asgi_server(protocol=clear),
        asgi_server(protocol=secured),
        **ECHO,
        label=f"{secured} vs {clear} c=1",
        max={"p50": budget},
    )


@pytest.mark.transport(errors=0)
def test_streaming_vs_batch(transport, asgi_server):
    """50 events of 100 B streamed against the same 5,000 bytes in one response, one request at a time, each read
    whole: at most 3x at p50 (+104-136% measured over 12 sessions; published agent figures say ~1.5x)."""
    server = asgi_server(protocol="http1")
    url = "/{}?chunks=50&size=100"
    transport.compare(
        Target(server, path=url.format("batch")),
        Target(server, path=url.format("stream")),
        label="stream vs batch",
        max={"p50": 2.0},
    )


@pytest.mark.anyio
@pytest.mark.transport
async def test_sse_starlette_vs_the_built_in_agent(transport, asgi_server):
    """sse-starlette's 50 tokens against the built-in agent's 50 events of the same size: its first event at most
    60% later and at least half its events/s (+7-24% and -11-29% measured over 20 sessions)."""
    pytest.importorskip("sse_starlette", reason="sse-starlette is not installed: pip install '.[bench]'")
    built_in, starlette = asgi_server(), asgi_server(SSE_STARLETTE)
    async with built_in.async_client() as bare, starlette.async_client() as framework:
        await transport.acompare_streams(
            (bare, "/stream?chunks=50&size=100"),
            (framework, "/tokens?n=50"),
            label="sse-starlette vs built-in",
            max={"ttfe": 0.6, "events_per_s": 0.5},
        )


@pytest.mark.transport(errors=0)
@pytest.mark.parametrize(
    "concurrency, budgets",
    [
        pytest.param(1, {"max": {"rps": 0.84}, "max_abs": {"p95": "5ms"}, "rounds": 24}, id="c=1"),
        pytest.param(10, {"max": {"rps": 0.9}}, id="c=10"),
    ],
)
def test_gateway_vs_its_upstream(transport, asgi_server, concurrency, budgets):
    """An LLM-gateway-shaped Starlette app (gateway_app.py: one pooled httpx client forwarding ``/v1/chat``) against
    its upstream's ``/echo`` called directly, every server's CPU per request in the rows. One request at a time the
    gateway keeps at least 16% of the upstream's req/s (18-22% measured: it adds ~1.7 ms to a 0.4 ms request; 1 ms
    more, injected, fails it: validation/transport_pairs.py, with 24 rounds for an interval narrow enough to tell)
    and adds at most 5 ms at p95 (1.6-2.2 ms measured); at
    10 in flight it keeps at least 10% (14-18% measured: the gateway's Python work, 2 ms of its CPU per request,
    is the limit on 2 cores)."""
    upstream = asgi_server()
    gateway = asgi_server(GATEWAY, env={"UPSTREAM_URL": upstream.url})
    transport.compare(
        Target(upstream, path="/echo", body=BODY),
        Target(gateway, path="/v1/chat", body=BODY),
        concurrency=concurrency,
        label=f"gateway vs upstream c={concurrency}",
        **budgets,
    )
