"""Real servers in real processes: protocols, streaming, errors, clean stops, no leaks."""

from __future__ import annotations

import asyncio
import gc
import math
import os
import signal
import threading
from pathlib import Path

import anyio
import httpx
import pytest

from overheadbench.core.errors import OverheadConcurrencyWarning
from overheadbench.http import (
    ServerError,
    astream,
    in_flight_probe,
    serve_in_process,
    size_sweep,
    start_server,
    stream,
    sweeps,
    throughput,
)
from overheadbench.http.child import GRACEFUL_TIMEOUT_S, config_for
from overheadbench.http.connections import Job, LoadError, connect
from overheadbench.http.h3 import H3Error
from overheadbench.http.loadrun import _fatal, load
from overheadbench.http.protocols import HttpProtocol
from overheadbench.http.server import ProtocolMismatch
from overheadbench.http.sweeps import HOLD_MAX_S, HOLD_MIN_S, HOLD_SAFETY, Probe, concurrency_sweep, hold_wait_s
from overheadbench.transport.windows import MAX_WINDOW_S


def children() -> set[int]:
    """Live child processes of this process (from /proc, no psutil needed)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                found.add(int(entry))
    return found


@pytest.mark.parametrize("protocol", ["http1", "h2c", "https", "h2", "h3"])
def test_each_protocol_is_really_spoken(protocol: str) -> None:
    server = start_server(protocol=protocol)
    try:
        client = server.client()
        response = client.post("/echo", content=b'{"n": 1}')
        assert response.content == b'{"n": 1}'
        # an h3 server's httpx client speaks HTTP/2 to its TLS listener; HTTP/3 goes over QUIC
        assert response.http_version == {"http1": "HTTP/1.1", "https": "HTTP/1.1"}.get(protocol, "HTTP/2")
        scheme = "https" if protocol in ("https", "h2", "h3") else "http"
        assert server.url.startswith(f"{scheme}://127.0.0.1:") and not server.url.endswith(":0")
        assert set(server.versions) == {response.http_version}
        if protocol == "h3":

            async def over_quic():
                async with server.async_client() as quic:
                    return await quic.post("/echo", content=b'{"n": 3}')

            answer = anyio.run(over_quic, backend="asyncio")
            assert (answer.http_version, answer.content, answer.headers["server"]) == (
                "HTTP/3",
                b'{"n": 3}',
                "hypercorn-h3",
            )
            assert server.quic_port not in (None, 0)
    finally:
        server.close()


def test_a_tls_server_offers_one_alpn_protocol_and_every_response_is_checked() -> None:
    server = start_server(protocol="h2")
    try:
        with pytest.raises(ProtocolMismatch, match="started for h2, but a response came over HTTP/1.1"):
            server.client(http1=True, http2=False).get("/")  # ALPN offered http/1.1 only: nothing agreed
    finally:
        server.close()
    assert server.tls_folder is None  # the key never was on a disk (an in-memory file)


def test_where_there_are_no_in_memory_files_the_key_folder_goes_once_the_server_has_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "memfd_create")
    server = start_server(protocol="https")
    try:
        words = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().decode().split("\0")
        key = next(Path(word) for word in words if word.endswith("key.pem"))
        assert server.tls_folder is None and not key.parent.exists()
        assert server.client().get("/").status_code == 200
    finally:
        server.close()


@pytest.mark.parametrize("protocol", ["http1", "h2c", "https", "h2", "h3"])
def test_the_lean_load_speaks_every_protocol_and_reads_both_cpus(protocol: str) -> None:
    server = start_server(protocol=protocol)
    try:
        result = load(server, concurrency=3, duration_s=0.2, warmup=3)
        assert result.errors == 0, result.first_error
        assert result.requests > 0 and result.latency is not None and len(result.latency_ns) == result.requests
        assert len(result.window_rates) == 10 and sum(result.window_rates) * 0.02 == pytest.approx(result.requests)
        assert result.client_cpu_s_per_request > 0 and math.isfinite(result.server_cpu_s_per_request)
        assert server.stats()["requests"] >= result.requests + 3  # the server counted them too
    finally:
        server.close()


def test_the_lean_load_asks_what_any_app_answers_unless_told_otherwise() -> None:
    """No options: GET / with no body (a user's app has no /echo); a body makes it a POST; a body
    with GET or HEAD is refused before any worker starts."""
    server = start_server()
    try:
        plain = load(server, duration_s=0.1, warmup=0)
        assert plain.errors == 0 and plain.requests > 0, plain.first_error
        echoed = load(server, duration_s=0.1, warmup=0, path="/echo", body=b'{"x": 1}')
        assert echoed.errors == 0 and echoed.requests > 0, echoed.first_error
        head = load(server, duration_s=0.1, warmup=0, method="HEAD")  # no body, whatever Content-Length says
        assert head.errors == 0 and head.requests > 0, head.first_error
        for method in ("GET", "head"):
            with pytest.raises(
                ValueError, match=f"method={method.upper()} with a body \\(2 bytes\\): .* use method='POST'"
            ):
                load(server, duration_s=0.1, method=method, body=b"{}")
    finally:
        server.close()


def test_a_server_that_hangs_up_is_reported_with_the_likely_cause_and_its_output() -> None:
    class Stopped:
        url, protocol = "http://127.0.0.1:1", "h2c"

        def output(self) -> str:
            return "Traceback ...\nKeyError: 3"

    text = _fatal("the server closed the connection (EOF)", Stopped())  # type: ignore[arg-type]
    assert "the server dropped the connection instead of answering" in text and text.endswith("KeyError: 3")
    assert "dropped" not in _fatal("ConnectionRefusedError: ...", Stopped())  # type: ignore[arg-type]


def test_the_lean_load_reports_a_status_and_a_refused_connection_clearly() -> None:
    server = start_server()
    try:
        failing = load(server, concurrency=2, duration_s=0.1, method="GET", path="/nowhere", warmup=0)
        assert (failing.requests, failing.first_error) == (0, "status 404") and failing.errors > 0
    finally:
        server.close()
    with pytest.raises(
        LoadError, match=r"a load worker for http://127.0.0.1:\d+ \(http1\) failed: ConnectionRefusedError"
    ):
        load(server, concurrency=1, duration_s=0.1)  # the server is gone


def test_a_load_worker_killed_mid_run_is_reported_with_its_signal() -> None:
    server = start_server()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            load(server, concurrency=1, duration_s=20.0, warmup=0)
        except LoadError as exc:
            errors.append(exc)

    runner = threading.Thread(target=run)
    try:
        before = server.stats()["requests"]
        runner.start()
        workers: set[int] = set()
        for polls in range(1, 1501):  # the state, not a time: until the load's own requests are served
            workers = {pid for pid in children() if b"loadgen" in Path(f"/proc/{pid}/cmdline").read_bytes()}
            if workers and server.stats()["requests"] - before - polls >= 5:
                break  # running, past ready (each poll of the stats is a request of its own)
            threading.Event().wait(0.02)
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        runner.join(30)
    finally:
        server.close()
    assert workers and not runner.is_alive() and len(errors) == 1
    message = str(errors[0])
    assert "stopped while the load ran: it was killed by SIGKILL" in message
    assert message.count("a load worker for") == 1 and "before it was ready" not in message


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


async def _drop_streams(server, path: str, count: int = 20) -> None:  # type: ignore[no-untyped-def]
    """Open ``count`` long streams and leave: httpx after the first bytes of each, HTTP/3 by
    closing the QUIC connection under them, one close datagram and not a word about each stream
    (its client reads whole responses only)."""
    if server.protocol == "h3":

        async def unanswered(client) -> None:  # type: ignore[no-untyped-def]
            with pytest.raises(H3Error, match="QUIC connection closed"):
                await client.get(path)

        async with server.async_client() as client, anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(unanswered, client)
            await anyio.sleep(0.3)
            await client.aclose()
        return

    async def one(client) -> None:  # type: ignore[no-untyped-def]
        async with client.stream("GET", path) as response:
            async for _ in response.aiter_raw():
                break

    async with server.async_client() as client, anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(one, client)


@pytest.mark.parametrize("protocol", ["http1", "h2c", "https", "h2", "h3"])
def test_streams_end_when_their_client_leaves_and_memory_stays_flat(protocol: str) -> None:
    """20 streams of 1 ms events, dropped: before, they stayed in flight for their whole
    length (10 s+) and the HTTP/1.1 server grew 60 -> 354 MB. HTTP/3: hypercorn's queue of 10
    datagrams, full of the client's acknowledgements, lost its close (CI: 21 in flight 5 s on)."""
    server = start_server(protocol=protocol)
    try:
        assert server.process is not None
        before = _rss_mb(server.process.pid)
        anyio.run(_drop_streams, server, "/stream?chunks=500000&size=100&delay_ms=1")
        in_flight = []
        for _ in range(50):  # 5 s at most
            in_flight.append(server.stats()["in_flight"])
            if in_flight[-1] <= 1:  # only the /_stats request itself
                break
            threading.Event().wait(0.1)
        threading.Event().wait(1.0)
        grown = _rss_mb(server.process.pid) - before
    finally:
        server.close()
    assert in_flight[-1] <= 1, in_flight
    assert grown < 30, f"the server grew {grown:.0f} MB after its clients left"


def test_an_http3_request_cancelled_stops_its_stream_while_the_connection_stays() -> None:
    server = start_server(protocol="h3")
    try:

        async def main() -> list[int]:
            async with server.async_client() as client:
                with anyio.move_on_after(0.3):
                    await client.get("/stream?chunks=500000&size=100&delay_ms=1")
                in_flight = []
                for _ in range(50):  # 5 s at most, the connection open throughout
                    in_flight.append((await client.get("/_stats")).json()["in_flight"])
                    if in_flight[-1] <= 1:
                        break
                    await anyio.sleep(0.1)
                return in_flight

        in_flight = anyio.run(main)
    finally:
        server.close()
    assert in_flight[-1] == 1, in_flight  # only the /_stats request itself


def test_requests_in_flight_at_the_deadline_leave_no_stream_open_on_the_server() -> None:
    server = start_server(protocol="h2c")
    try:

        async def main():
            async with server.async_client() as client:
                for _ in range(3):
                    await throughput(lambda: client.post("/echo", content=b"x"), concurrency=20, duration_s=0.2)

        anyio.run(main)
        assert server.stats()["in_flight"] == 1  # only the /_stats request itself (it grew 14 -> 108 before)
    finally:
        server.close()


def test_sse_starlettes_crlf_stream_is_parsed_and_timed(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(Path(__file__).parent.parent / "benchmarks")
    server = start_server("sse_app:app")
    try:
        stats = stream(server.client(), "/tokens?n=20")
        assert (stats.events, stats.last_event_id) == (20, "19")  # its timing: the injected-clock unit tests
    finally:
        server.close()


def test_a_server_in_this_event_loop_serves_and_stops_and_refuses_trio() -> None:
    async def main() -> tuple[bytes, float]:
        async with serve_in_process("overheadbench.http.apps:app") as server:
            async with server.async_client() as client:
                body = (await client.post("/echo", content=b"here")).content
            return body, server.cpu_s()

    body, cpu = anyio.run(main, backend="asyncio")
    assert body == b"here" and math.isnan(cpu)

    async def on_trio() -> None:
        async with serve_in_process("overheadbench.http.apps:app"):
            pass

    with pytest.raises(ServerError, match="not in trio"):
        anyio.run(on_trio, backend="trio")


def test_streams_are_timed_per_event_sync_and_async() -> None:
    server = start_server(protocol="h2c")
    try:
        sync_stats = stream(server.client(), "/stream?chunks=10&size=100")
        assert (sync_stats.events, sync_stats.bytes) == (10, 10 * 108)

        async def main():
            async with server.async_client() as client:
                return await astream(client, "/stream?chunks=5&size=10&delay_ms=20")

        async_stats = anyio.run(main)
        assert (async_stats.events, async_stats.bytes) == (5, 5 * 18)
    finally:
        server.close()


def test_stopping_with_a_stream_in_flight_is_prompt() -> None:
    server = start_server()
    client = server.client()
    with client.stream("GET", "/stream?chunks=100&delay_ms=100") as response:
        next(response.iter_raw())  # the stream is open and has 10 s to go
        server.close()
    # It stopped by itself (close() kills a server still running after 5 s: returncode -9),
    # within its own grace for open streams, not hypercorn's 3 s.
    assert server.process.returncode == 0
    assert config_for(0).graceful_timeout == GRACEFUL_TIMEOUT_S < 1


def test_a_size_sweep_sends_the_requests_asked_for_at_each_size() -> None:
    server = start_server(protocol="http1")
    try:
        before = server.stats()["requests"]
        points = anyio.run(lambda: size_sweep(server, (10, 1000), count=7))
        assert [(p.size, p.latency.count) for p in points] == [(10, 7), (1000, 7)]
        # the server's own count: 5 warm-up and 7 timed requests per size, then this /_stats
        assert server.stats()["requests"] - before == 2 * (5 + 7) + 1
    finally:
        server.close()


def test_the_probe_sees_requests_really_in_flight_together() -> None:
    server = start_server(protocol="http1")
    try:
        probe = anyio.run(in_flight_probe, server, 10)
        assert probe.reached and probe.seen >= 10
    finally:
        server.close()


def test_the_barriers_wait_scales_with_the_connections_and_what_one_costs() -> None:
    assert hold_wait_s(0.001, 10) == HOLD_MIN_S  # a quiet machine's few connections: the floor
    assert hold_wait_s(0.02, 300) == pytest.approx(HOLD_SAFETY * 0.02 * 300)  # 300 TLS handshakes on a busy core
    assert hold_wait_s(1.0, 1000) == HOLD_MAX_S


def test_a_level_not_reached_is_measured_with_its_shortfall_and_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy machine's c=300 over https saw 299 in flight: a shortfall of that level, not an error of the sweep."""

    async def short_by_one(server: object, level: int) -> Probe:
        return Probe(level, max(level - 1, 1), 7.5)

    monkeypatch.setattr(sweeps, "in_flight_probe", short_by_one)
    server = start_server(protocol="http1")
    try:
        with pytest.warns(
            OverheadConcurrencyWarning, match=r"asked for 3 requests in flight, the server saw at most 2"
        ):
            results = concurrency_sweep(server, (1, 3), verify=True, duration_s=0.2, warmup=2, processes=1)
    finally:
        server.close()
    assert [(r.concurrency, r.in_flight_seen, r.requests > 0) for r in results] == [(1, 1, True), (3, 2, True)]
    assert results[0].shortfall == ""
    assert results[1].shortfall.startswith("concurrency not reached: asked for 3 requests in flight, the server saw")
    assert "within 7.5 s (a serialising client, or a busy machine)" in results[1].shortfall


def test_a_probe_out_of_file_descriptors_names_the_limit_and_leaves_no_socket_behind() -> None:
    """Under ``ulimit -n 64`` a failed c=50 https check kept 45 sockets, and the next test could not start a server."""
    import resource

    server = start_server(protocol="https")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        _, before, _ = resources()
        limit = before + 30  # room for the session's own files, not for 50 more connections
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        with pytest.raises(LoadError) as failed:
            anyio.run(in_flight_probe, server, 50)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        message = str(failed.value)
        assert "check of 50 requests in flight (https) ran out of file descriptors (EMFILE)" in message
        assert f"this process may open {limit} (ulimit -n)" in message
        del failed
        assert len(os.listdir("/proc/self/fd")) <= before + 2  # every connection it opened is closed
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        server.close()
    after = start_server(protocol="h2")  # the next test's server starts and answers
    try:
        assert after.client().get("/").status_code == 200
    finally:
        after.close()


def test_an_app_that_raises_gives_500s_that_the_load_counts() -> None:
    server = start_server()
    try:

        async def main():
            async with server.async_client() as client:
                return await throughput(
                    lambda: client.get("/fail"), concurrency=2, duration_s=60, max_requests=20, warmup=0
                )

        result = anyio.run(main)
        assert (result.requests, result.errors, result.first_error) == (0, 20, "status 500")
        assert "RuntimeError: the /fail endpoint always raises" in server.output()
    finally:
        server.close()


def test_a_server_that_cannot_start_is_a_clear_error_within_seconds() -> None:
    # the error comes from the process's exit (its code and output), not from a start-up timeout
    with pytest.raises(ServerError, match=r"(?s)exited with code 1.*No module named 'no_such_module'"):
        start_server("no_such_module:app")
    with pytest.raises(ServerError, match="'module:attribute'"):
        start_server(object())  # type: ignore[arg-type]
    with pytest.raises(ServerError, match="protocol must be one of http1, h2c, https, h2, h3"):
        start_server(protocol="http3")


def resources() -> tuple[int, int, set[int]]:
    gc.collect()  # objects of earlier tests may still hold descriptors until collected
    return threading.active_count(), len(os.listdir("/proc/self/fd")), children()


CYCLES = 20
"""Start-stop cycles of the leak test: a thread, descriptor or process left per cycle shows in any
number of them (100 cycles took 26 s of the suite's time and found nothing 20 do not)."""


def test_start_stop_cycles_leak_no_threads_descriptors_or_processes() -> None:
    start_server().close()  # first use loads modules and may open lasting descriptors
    threads, descriptors, processes = resources()
    for index in range(CYCLES):
        server = start_server(protocol="h2c" if index % 2 else "http1")
        server.client().get("/delay?ms=0")
        server.close()
    after = resources()
    assert after[0] == threads and after[1] <= descriptors and after[2] == processes == set()


def _rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


TLS_CONNECTIONS = 600
TLS_GROWTH_KB = 10_240
"""The bound on a server's growth over 600 new TLS connections: 10 MB (17 KB a connection).
Measured (validation/tls_memory.py, Python 3.10-3.13): 0.3-1.3 KB a connection now;
before, with each connection held 5 s after its client left, 39-55 KB on 3.10 and 286-306 KB
on 3.11-3.13 (CPython's 256 KiB TLS read buffer per connection)."""


def _sockets(pid: int) -> int:
    """The sockets process ``pid`` holds (a descriptor closed while they are listed is not one)."""
    held = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            held += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except FileNotFoundError:
            continue
    return held


@pytest.mark.parametrize("protocol", ["https", "h2"])
def test_a_tls_server_lets_each_connection_go_when_its_client_leaves(protocol: str) -> None:
    server = start_server(protocol=protocol)
    try:
        assert server.process is not None
        pid = server.process.pid
        options = server._client_options({})
        with httpx.Client(**options) as client:  # warm: modules, the TLS context, the allocator
            client.get("/")
        warm_kb, warm_sockets = _rss_kb(pid), _sockets(pid)
        for _ in range(TLS_CONNECTIONS):
            with httpx.Client(**options) as client:  # a new connection each
                client.get("/").raise_for_status()
        growth_kb, sockets = _rss_kb(pid) - warm_kb, _sockets(pid)
    finally:
        server.close()
    assert sockets <= warm_sockets + 2  # the last connections may still be closing: none of the 600 held
    assert growth_kb <= TLS_GROWTH_KB, f"{growth_kb} KB over {TLS_CONNECTIONS} connections"


def test_tls_and_quic_servers_leave_no_thread_descriptor_process_or_key_behind() -> None:
    start_server(protocol="h3").close()
    threads, descriptors, processes = resources()
    for index in range(12):
        server = start_server(protocol=("https", "h2", "h3")[index % 3])
        assert server.process is not None and server.tls_folder is None
        words = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().decode().split("\0")
        given = [word.removeprefix("/proc/self/fd/") for word in words if word.startswith("/proc/self/fd/")]
        held = {os.readlink(f"/proc/{server.process.pid}/fd/{fd}") for fd in given}
        assert held == {"/memfd:overheadbench-cert.pem (deleted)", "/memfd:overheadbench-key.pem (deleted)"}
        server.client().get("/delay?ms=0")
        server.close()
    after = resources()
    assert after[0] == threads and after[1] <= descriptors and after[2] == processes == set()


def test_the_fixture_stops_its_servers_when_the_test_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_fails(asgi_server):
            server = asgi_server(protocol="h2c")
            assert server.client().get("/_stats").status_code == 200
            with open("pid.txt", "w") as out:
                out.write(str(server.process.pid))
            assert False, "the test fails with the server running"
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the test fails with the server running*"])
    with pytest.raises(ProcessLookupError):
        os.kill(int((pytester.path / "pid.txt").read_text()), 0)


def test_a_users_own_app_is_served_from_its_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        my_app="""
        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"mine"})
        """,
        test_own="""
        def test_own(asgi_server):
            server = asgi_server("my_app:app", protocol="h2c")
            assert server.client().get("/").text == "mine"
        """,
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)


def test_the_lean_load_sends_its_headers_over_every_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "picky.py").write_text(
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n"
        "        return\n"
        "    while (await receive()).get('more_body'):\n"
        "        pass\n"
        "    ok = dict(scope['headers']).get(b'content-type') == b'application/json'  # as FastAPI's body parsing\n"
        "    await send({'type': 'http.response.start', 'status': 200 if ok else 422,\n"
        "                'headers': [(b'content-length', b'2')]})\n"
        "    await send({'type': 'http.response.body', 'body': b'ok'})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for protocol in ("http1", "h2c", "h3"):
        server = start_server("picky:app", protocol=protocol)
        try:
            assert load(server, duration_s=0.1, warmup=1, body=b"{}").errors == 0, protocol  # a body: JSON by default
            other = load(server, duration_s=0.1, warmup=0, body=b"{}", headers={"Content-Type": "text/plain"})
            assert other.first_error == "status 422", protocol
        finally:
            server.close()


def test_an_app_on_a_pythonpath_of_its_own_is_served(tmp_path: Path) -> None:
    """``env={"PYTHONPATH": ...}`` raised ``TypeError: dict() got multiple values for keyword argument``."""
    (tmp_path / "own_app.py").write_text(
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n"
        "        return\n"
        "    await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': b'own'})\n"
    )
    server = start_server("own_app:app", env={"PYTHONPATH": str(tmp_path), "OWN_SETTING": "1"})
    try:
        assert httpx.get(f"{server.url}/").text == "own"
    finally:
        server.close()


def test_a_pairs_idle_side_keeps_its_connections_and_a_lost_one_fails_at_once() -> None:
    """Requests of 0.3 s grow a transport pair's windows to 8 s: hypercorn's 5 s keep-alive closed
    the idle side's connections meanwhile, and a request written on a closed connection waited
    forever (0 requests counted in every later window of that side, or the test hung)."""
    assert config_for(0).keep_alive_timeout >= 4 * MAX_WINDOW_S

    async def run() -> None:
        async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            await writer.drain()
            writer.close()  # as a keep-alive timeout does, between requests

        server = await asyncio.start_server(answer_once, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        job = Job(HttpProtocol.HTTP1, port, "GET", "/", "", 1, 0.1, 1, headers=())
        (connection,) = await connect(job)  # its warm-up request answered, then the connection closed
        await asyncio.sleep(0.1)
        with pytest.raises(LoadError, match="closed the connection"):
            await asyncio.wait_for(connection.send(), timeout=5)
        await connection.close()
        server.close()

    asyncio.run(run())
