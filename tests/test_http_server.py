"""Real servers in real processes: protocols, streaming, errors, clean stops, no leaks."""

from __future__ import annotations

import gc
import os
import threading

import anyio
import pytest

from overheadbench.http import ServerError, astream, in_flight_probe, size_sweep, start_server, stream, throughput
from overheadbench.http.child import GRACEFUL_TIMEOUT_S, config_for


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


@pytest.mark.parametrize("protocol", ["http1", "h2c"])
def test_each_protocol_is_really_spoken(protocol: str) -> None:
    server = start_server(protocol=protocol)
    try:
        client = server.client()
        response = client.post("/echo", content=b'{"n": 1}')
        assert response.content == b'{"n": 1}'
        assert response.http_version == {"http1": "HTTP/1.1", "h2c": "HTTP/2"}[protocol]
        assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith(":0")
        assert set(server.versions) == {response.http_version}
    finally:
        server.close()


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
        assert anyio.run(in_flight_probe, server, 10) >= 10
    finally:
        server.close()


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
    with pytest.raises(ServerError, match="protocol must be one of http1, h2c"):
        start_server(protocol="http3")


def test_200_start_stop_cycles_leak_no_threads_descriptors_or_processes() -> None:
    def resources() -> tuple[int, int, set[int]]:
        gc.collect()  # objects of earlier tests may still hold descriptors until collected
        return threading.active_count(), len(os.listdir("/proc/self/fd")), children()

    start_server().close()  # first use loads modules and may open lasting descriptors
    threads, descriptors, processes = resources()
    for index in range(200):
        server = start_server(protocol="h2c" if index % 2 else "http1")
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
