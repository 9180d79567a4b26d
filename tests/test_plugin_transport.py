"""Real pytest sessions (pytester) with the ``transport`` fixture: budgets, verdicts, bad
input, outputs, stored runs and the gate. Rows are recorded from synthetic throughputs (no
network, deterministic); one test runs the lean load against a real server."""

from __future__ import annotations

import json

import anyio
import pytest
from helpers import sentences

from overheadbench.core.errors import OverheadConcurrencyWarning

SYNTHETIC = '''
import pytest
from overheadbench.http.load import LatencyStats, Throughput


@pytest.fixture(autouse=True)
def _made_up_rows_are_no_machines(request):
    """Recorded rows here are made up: the machine's contention says nothing of them."""
    if "transport" in request.fixturenames:
        request.getfixturevalue("transport").probe = lambda: float(request.config.getini("core_share") or 1.0)


def pytest_addoption(parser):
    parser.addini("core_share", "the share of a core the transport fixture's probe reads", default="")


def rows(rate, latency_ms=2.0, errors=0, spread=0.02):
    """A throughput whose 10 windows are rate * (1 +/- spread) and whose 1,000 latencies
    run evenly around latency_ms."""
    windows = tuple(rate * (1 + spread * (-1) ** i) for i in range(10))
    latencies = tuple(int(latency_ms * 1e6 * (0.5 + i / 1000)) for i in range(1000))
    return Throughput(100, int(rate * 2), errors, 2.0, LatencyStats.from_ns(latencies), 1e-4,
                      "status 500" if errors else "", server_cpu_s_per_request=3e-4,
                      window_rates=windows, latency_ns=latencies)
'''


@pytest.fixture
def transport_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(
        SYNTHETIC.replace("import pytest\n", "import pytest\n\n\n@pytest.fixture\ndef make():\n    return rows\n", 1)
    )
    return pytester


def test_figures_within_budget_pass_and_are_tabled_and_written(transport_project: pytest.Pytester) -> None:
    transport_project.makepyfile(
        """
        import pytest

        @pytest.mark.transport(p95="5ms", rps=1000)
        def test_gateway(transport, make):
            transport.record("h2c c=100", make(2000))
        """
    )
    result = transport_project.runpytest("--overhead", "--overhead-json=out.json", "--overhead-md=out.md")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*transport figures (server in its own process)*",
            "load:",
            "  test_gateway",
            "    h2c c=100*2,000/s*2.00 ms*2.90 ms*2.98 ms*100 µs*300 µs*0",
            "budgets:",
            "  test_gateway",
            "    h2c c=100: req/s*2,000/s*1,2*/s..3,2*/s*≥1,000/s*pass",
            "*h2c c=100*p95*≤5.00 ms*pass",
        ]
    )
    data = json.loads((transport_project.path / "out.json").read_text())
    by_metric = {figure["metric"]: figure for figure in data["figures"]}
    rps = by_metric["rps"]["check"]
    assert rps["status"] == "pass" and rps["limit"] == 1000 and rps["floor"] and rps["sentence"].endswith("rps 1,000/s")
    assert by_metric["server_cpu"]["check"]["value"] == pytest.approx(3e-4)
    assert by_metric["errors"]["check"]["status"] == "pass"
    markdown = (transport_project.path / "out.md").read_text()
    assert "## Budgets" in markdown and "test_gateway` | h2c c=100: req/s | 2,000/s" in markdown


def test_a_figure_over_its_budget_fails_the_test_naming_the_row(
    transport_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # annotated as a transport test
    transport_project.makepyfile(
        """
        import pytest

        @pytest.mark.transport(rps=1000)
        def test_gateway(transport, make):
            transport.record("h2c c=1", make(2000))
            transport.record("h2c c=100", make(500), p95="1ms")  # this row's own budget
        """
    )
    result = transport_project.runpytest("--overhead", "--overhead-github=true")
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*h2c c=100: req/s 500/s (95% CI over 10 windows, widened by 24% between sessions 3*/s..8*/s) falls below rps*",
            "*h2c c=100: p95 latency 2.90 ms (95% CI*) exceeds p95 1.00 ms*",
            "::error file=*,title=transport over budget in test_*::h2c c=100: req/s 500/s*",
        ]
    )
    sentences(result.stdout).fnmatch_lines(
        [
            "*h2c c=100: p95 latency 2.90 ms (95% CI*) exceeds p95 1.00 ms*",
        ]
    )
    assert "h2c c=1: req/s" not in sentences(result.stdout).str().split("budgets:")[0]


def test_a_figure_over_its_budget_on_a_contended_machine_is_inconclusive_and_says_why(
    transport_project: pytest.Pytester,
) -> None:
    transport_project.makepyfile(
        """
        import pytest

        @pytest.mark.transport(rps=1000)
        def test_gateway(transport, make):
            transport.record("h2c c=100", make(500), p95="1ms")
        """
    )
    busy = transport_project.runpytest("--overhead", "-o", "core_share=0.41", "--overhead-inconclusive=warn")
    busy.assert_outcomes(passed=1)  # warned, as any inconclusive figure under this policy: never passed silently
    said = "*inconclusive: *h2c c=100: req/s 500/s * falls below rps 1,000/s, but this process got 41% of a core as*"
    sentences(busy.stdout).fnmatch_lines([said])
    quiet = transport_project.runpytest("--overhead", "-o", "core_share=0.97", "--overhead-inconclusive=warn")
    quiet.assert_outcomes(failed=1)


def test_failed_requests_fail_by_default_and_inconclusive_figures_follow_the_policy(
    transport_project: pytest.Pytester,
) -> None:
    transport_project.makepyfile(
        """
        import pytest

        def test_errors(transport, make):
            transport.record("h1 c=10", make(2000, errors=3))

        @pytest.mark.transport(rps=2000)
        def test_unsure(transport, make):
            transport.record("h1 c=10", make(2000, spread=0.2))
        """
    )
    result = transport_project.runpytest("--overhead", "-W", "default")
    result.assert_outcomes(failed=2)
    sentences(result.stdout).fnmatch_lines(
        ["*h1 c=10: failed requests 3 (a single reading) exceeds errors 0*", "*inconclusive: *"]
    )
    warned = transport_project.runpytest("--overhead", "--overhead-inconclusive=warn", "-W", "default")
    warned.assert_outcomes(failed=1, passed=1)
    sentences(warned.stdout).fnmatch_lines(["*OverheadInconclusiveWarning*straddles rps*"])


def test_without_overhead_rows_run_and_nothing_is_judged(transport_project: pytest.Pytester) -> None:
    transport_project.makepyfile(
        """
        import pytest

        @pytest.mark.transport(rps=10**9)
        def test_gateway(transport, make):
            transport.record("h2c c=100", make(2000))
        """
    )
    result = transport_project.runpytest()
    result.assert_outcomes(passed=1)
    assert "transport figures" not in result.stdout.str()


@pytest.mark.parametrize(
    "marker, call, message, outcome",
    [  # a bad marker is an error in the fixture's set-up, as for @pytest.mark.overhead; a bad call fails the test
        ('p95="fast"', "", "*test_bad: @pytest.mark.transport: p95='fast': *", "errors"),
        ("rpm=100", "", "*test_bad: @pytest.mark.transport got unknown budget(s) rpm; it accepts p50, p95*", "errors"),
        ("", ", p99='soon'", "*test_bad: transport.record(): p99='soon': *", "failed"),
        (
            "",
            ", rate=5",
            "*test_bad: transport.record() got unknown keyword(s) rate; it accepts client_cpu, errors*",
            "failed",
        ),
    ],
)
def test_a_bad_budget_fails_the_test_naming_it_and_the_mistake(
    transport_project: pytest.Pytester, marker: str, call: str, message: str, outcome: str
) -> None:
    transport_project.makepyfile(
        f"""
        import pytest

        @pytest.mark.transport({marker})
        def test_bad(transport, make):
            transport.record("row", make(2000){call})
        """
    )
    result = transport_project.runpytest("--overhead")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str()


def test_a_wrong_server_or_load_option_fails_naming_the_test_and_the_call(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_not_a_server(transport):
            transport.load("my-server")

        def test_no_callers(transport, asgi_server):
            transport.load(asgi_server(), concurrency=0)

        def test_typo(transport, asgi_server):
            transport.sweep(asgi_server(), (1, 2), duration=1)
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(failed=3)
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_not_a_server: transport.load() takes servers started by asgi_server, not str",
            "*test_no_callers: transport.load(): concurrency must be >= 1 and duration > 0 (got 0, *)",
            "*test_typo: transport.sweep() got unknown keyword(s) duration; it accepts body, client_cpu, duration_s, *",
        ]
    )
    assert "Traceback" not in sentences(result.stdout).str()


def test_a_marked_test_that_never_uses_the_fixture_fails(transport_project: pytest.Pytester) -> None:
    transport_project.makepyfile(
        """
        import pytest

        @pytest.mark.transport(rps=10)
        def test_forgot():
            pass
        """
    )
    result = transport_project.runpytest("--overhead")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_forgot: marked @pytest.mark.transport but never used the transport fixture*"])


def test_stored_figures_are_compared_and_a_worse_one_is_gated(transport_project: pytest.Pytester) -> None:
    test = """
        import pytest

        def test_gateway(transport, make):
            transport.record("h2c c=100", make({rate}))
        """
    transport_project.makepyfile(test.format(rate=2000))
    transport_project.runpytest("--overhead", "--overhead-save=before").assert_outcomes(passed=1)
    transport_project.makepyfile(test.format(rate=500))  # a fall beyond req/s's ~24% between sessions here
    pairs_only = transport_project.runpytest("--overhead", "--overhead-compare=before", "--overhead-fail-above=pairs:5")
    pairs_only.assert_outcomes(passed=1)  # a threshold for pairs only leaves transport figures shown, not gated
    gate = ("--overhead", "--overhead-compare=before", "--overhead-fail-above=5")
    result = transport_project.runpytest(*gate)
    result.assert_outcomes(failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_gateway: h2c c=100 req/s regressed against 0001_before.json: req/s 2,000/s -> 500/s (-75.0%, "
            "95% CI *), more than --overhead-fail-above=5%",
            "*transport: compared with 0001_before.json*",
            "*h2c c=100*req/s*2,000/s*500/s*-75.0%*",
        ]
    )
    same = transport_project.runpytest(*gate)
    same.assert_outcomes(failed=1)  # the stored run is still "before" (nothing saved by the compare runs)


def test_the_lean_load_against_a_real_server_records_every_figure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import math
        import pytest

        @pytest.mark.transport(rps=1)
        def test_load(transport, asgi_server):
            result = transport.load(asgi_server(protocol="h2c"), concurrency=4)
            assert result.errors == 0 and result.requests > 0
            assert math.isfinite(result.server_cpu_s_per_request) and result.client_cpu_s_per_request > 0
        """
    )
    result = pytester.runpytest("--overhead", "--overhead-time-budget=0.3s", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    metrics = {figure["metric"] for figure in json.loads((pytester.path / "out.json").read_text())["figures"]}
    assert metrics == {"rps", "p50", "p95", "p99", "client_cpu", "server_cpu", "errors"}


def test_count_mode_warns_when_a_server_in_another_process_served_the_pair(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.overhead(max=0.5, mode="count")
        def test_counted(overhead, asgi_server):
            client = asgi_server().client()
            overhead.compare(baseline=lambda: client.get("/delay?ms=0"), framework=lambda: client.post("/echo"))
        """
    )
    result = pytester.runpytest("--overhead", "-W", "default")
    result.stdout.fnmatch_lines(
        ["*OverheadCountingWarning*count mode counted this process only, while server process*"]
    )


def test_without_overhead_a_load_that_fails_its_requests_fails_the_test(transport_project: pytest.Pytester) -> None:
    """Smoke mode judges nothing timed, but failed requests are a count: all 404s is a broken test."""
    transport_project.makepyfile(
        """
        def test_broken(transport, make):
            transport.record("h1 c=1", make(100, errors=40))

        def test_fine(transport, make):
            transport.record("h1 c=1", make(100))

        def test_allowed(transport, make):
            transport.record("h1 c=1", make(100, errors=40), errors=50)
        """
    )
    result = transport_project.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["h1 c=1: failed requests 40 (a single reading) exceeds errors 0 (the first: status 500)"]
    )
    assert "transport figures" not in result.stdout.str()  # nothing measured, nothing tabled


def test_rows_of_one_label_in_one_test_stay_apart(transport_project: pytest.Pytester) -> None:
    """A load and a sweep's first level are both "h1 c=1": two rows, never one merged."""
    transport_project.makepyfile(
        """
        def test_twice(transport, make):
            transport.record("h1 c=1", make(1000))
            transport.record("h1 c=1", make(3000))
        """
    )
    result = transport_project.runpytest("--overhead", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    rows = {f["row"] for f in json.loads((transport_project.path / "out.json").read_text())["figures"]}
    assert rows == {"h1 c=1", "h1 c=1 (2)"}
    result.stdout.fnmatch_lines(["*h1 c=1 *1,000/s*", "*h1 c=1 (2)*3,000/s*"])


PAIR_OF_CALLABLES = """
import anyio
import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def bare():
    return None


async def stacked():  # a client stack that waits 20 ms per request: its added p50 is at least that, and
    await anyio.sleep(0.02)  # its interval far from 0.5 ms beside busy loops too (at 2 ms it straddled there)


@pytest.mark.anyio
async def test_within(transport):
    await transport.acompare(bare, stacked, label="stack vs bare", max_abs={"p50": "1s"}, rounds=4)


@pytest.mark.anyio
async def test_over(transport):
    await transport.acompare(bare, stacked, label="stack vs bare", max_abs={"p50": "0.5ms"})
"""


@pytest.mark.every_plugin
def test_a_pair_of_callables_is_judged_on_what_the_framework_side_adds(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PAIR_OF_CALLABLES)
    pytester.makeconftest(SYNTHETIC)  # a quiet machine's judgement, however busy this one is (its probe pinned)
    result = pytester.runpytest("--overhead", "--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=1, failed=1)
    # what a 20 ms sleep adds is at least 20 ms; how much more is the machine's (no figure asserted)
    over = "*stack vs bare: p50 latency added +* ms (95% CI, paired over * rounds, widened by *) exceeds max_abs?p50? +500 µs*"
    sentences(result.stdout).fnmatch_lines([over])
    figures = json.loads((pytester.path / "out.json").read_text())["figures"]
    within = [f for f in figures if f["nodeid"].endswith("test_within")]
    rows = {(f["row"], f["metric"], f["measure"]) for f in within}
    assert {("stack vs bare", metric, "max") for metric in ("rps", "p50", "p95", "p99", "client_cpu")} <= rows
    assert ("stack vs bare", "p50", "max_abs") in rows and ("stack vs bare", "p95", "max_abs") not in rows
    assert {("stack vs bare [baseline]", "rps", "figure"), ("stack vs bare [framework]", "errors", "figure")} <= rows
    added = next(f for f in within if f["measure"] == "max_abs")
    assert added["check"]["status"] == "pass" and added["check"]["value"] >= 0.02 and len(added["samples"]) == 4
    assert (
        "stack vs bare (change)" in sentences(result.stdout).str()
        and "stack vs bare [framework]" in sentences(result.stdout).str()
    )


@pytest.mark.every_plugin
def test_a_pair_budget_that_names_no_figure_fails_the_test_saying_how(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.anyio
        async def test_pair(transport):
            async def send():
                return None
            await transport.acompare(send, send, max=0.25)

        @pytest.mark.anyio
        async def test_rounds(transport):
            async def send():
                return None
            await transport.acompare(send, send, rounds=1)
        """
    )
    result = pytester.runpytest("--overhead")
    result.assert_outcomes(failed=2)
    sentences(result.stdout).fnmatch_lines(["*test_rounds: rounds=1: a transport pair needs two rounds or more*"])
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_pair: transport.acompare(): max=0.25: a transport pair's budgets name their "
            "figures, e.g. max={'p95': 0.25, 'rps': 0.2}*"
        ]
    )
    assert "Traceback" not in sentences(result.stdout).str()


def test_two_servers_alternate_windows_and_each_servers_cpu_is_in_the_rows(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        greeter="""
        import os

        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": os.environ["GREETING"].encode()})
        """,
        test_pair="""
        import pytest
        from overheadbench.http.loadrun import Target

        @pytest.mark.transport(max={"rps": 0.99})
        def test_pair(transport, asgi_server):
            echo = asgi_server()
            greeter = asgi_server("greeter:app", env={"GREETING": "hello"})
            assert greeter.client().get("/").text == "hello"
            base, framework = transport.compare(Target(echo, path="/"), greeter, concurrency=2, label="greeter vs echo")
            assert base.requests > 0 and framework.requests > 0 and len(base.window_rates) == 6
            names = dict(framework.server_cpu_by_server)
            assert set(names) == {"overheadbench.http.apps:app (http1)", "greeter:app (http1)"}
        """,
    )
    result = pytester.runpytest("--overhead", "--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)
    figures = json.loads((pytester.path / "out.json").read_text())["figures"]
    rows = {(f["row"], f["metric"], f["measure"]) for f in figures}
    assert ("greeter vs echo", "rps", "max") in rows and ("greeter vs echo", "server_cpu", "max") in rows
    assert ("greeter vs echo [framework] · greeter:app (http1)", "server_cpu", "figure") in rows
    assert ("greeter vs echo [baseline] · overheadbench.http.apps:app (http1)", "server_cpu", "figure") in rows
    judged = [f for f in figures if f["check"]["limit"] is not None and f["measure"] == "max"]
    assert [f["metric"] for f in judged] == ["rps"] and judged[0]["check"]["limit"] == -0.99


SDK_STREAMS = """
import anyio
import httpx
import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


seen = []


async def app(scope, receive, send):  # an OpenAI-style streaming API: a POST with JSON, answered as SSE
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = dict(scope["headers"])
    seen.append((scope["method"], body, headers.get(b"authorization")))
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for index in range(4):
        await send({"type": "http.response.body", "body": b"data: %d\\n\\n" % index, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def raw():  # an SDK's stream object: an async iterator of parsed events
    for index in range(5):
        await anyio.sleep(0)
        yield {"delta": str(index)}


async def sdk():
    for index in range(5):
        await anyio.sleep(0.002)
        yield {"delta": str(index)}


@pytest.mark.anyio
async def test_post(transport):
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")
    request = {"method": "POST", "json": {"model": "m", "stream": True}, "headers": {"Authorization": "Bearer k"}}
    stats = await transport.astream(client, "/v1/chat", label="post", runs=3, **request)
    assert stats.events == 4
    assert seen[0] == ("POST", b'{"model":"m","stream":true}', b"Bearer k")
    await transport.acompare_streams((client, "/v1/chat", request), sdk, label="sdk vs raw api", rounds=2)


@pytest.mark.anyio
async def test_sdk(transport):
    stats = await transport.aevents(sdk, label="sdk alone", runs=3, max_abs={"ttfe": "1s"})
    assert stats.events == 5
    await transport.acompare_streams(raw, sdk, label="sdk vs raw", rounds=2)


@pytest.mark.anyio
async def test_misshapen(transport):
    await transport.acompare_streams(("only a client",), sdk)
"""


@pytest.mark.every_plugin
def test_streams_as_sdks_have_them_a_post_with_json_and_an_iterator_of_events(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SDK_STREAMS)
    result = pytester.runpytest("--overhead", "--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=2, failed=1)
    sentences(result.stdout).fnmatch_lines(
        [
            "*test_misshapen: transport.acompare_streams(): a stream side is (client, url), "
            "(client, url, request) or a callable; got ('only a client',)*"
        ]
    )
    figures = json.loads((pytester.path / "out.json").read_text())["figures"]
    rows = {(f["row"], f["metric"]) for f in figures}
    assert {("post", "ttfe"), ("sdk alone", "ttfe"), ("sdk alone", "events_per_s")} <= rows
    assert {("sdk vs raw", "ttfe"), ("sdk vs raw [framework]", "ttfe"), ("sdk vs raw api", "events_per_s")} <= rows


def test_an_sdk_stream_is_timed_event_by_event_as_its_iterator_yields() -> None:
    from overheadbench.http.streaming import aevents, stream_opener

    ticks = iter(range(0, 10_000_000, 1_000_000))

    async def source():
        for index in range(3):
            yield index

    stats = anyio.run(lambda: aevents(source, clock_ns=lambda: next(ticks)))
    assert (stats.events, stats.first_event_s, stats.total_s) == (3, 0.001, 0.004)
    with pytest.raises(ValueError, match="a stream's request takes method, headers, json, content; got body"):
        stream_opener((object(), "/s", {"body": b"x"}))


def test_windows_are_never_shorter_than_the_requests_they_count() -> None:
    """A gateway at 16 in flight, its requests 0.2-0.6 s, counted 0 or 1 request in most 0.25 s windows."""
    from overheadbench.http.load import Throughput
    from overheadbench.transport.windows import MAX_WINDOW_S, MIN_PER_SLOT, short_of, sized

    def window(requests: int) -> Throughput:
        return Throughput(16, requests, 0, 0.25, None, 1e-4)

    assert sized(0.25, [window(16 * MIN_PER_SLOT), window(200)]) == 0.25  # every slot finished enough
    assert sized(0.25, [window(16 * MIN_PER_SLOT), window(32)]) == pytest.approx(0.25 * MIN_PER_SLOT / 2)
    assert sized(0.25, [window(0)]) == pytest.approx(0.25 * MIN_PER_SLOT * 2)  # an empty window: it grows most
    assert sized(1.0, [window(0)]) == MAX_WINDOW_S
    assert short_of("gw c=16", 8.0, [window(16 * MIN_PER_SLOT)]) is None
    said = short_of("gw c=16", 8.0, [window(16)])
    assert said is not None and said.startswith("gw c=16: its requests take as long as its windows (8 s")
    # a pair whose first windows were too short is measured again, in longer ones, its first windows dropped
    from overheadbench.transport.fixture import window_lengths

    windows: tuple[list[Throughput], list[Throughput]] = ([], [])
    lengths = window_lengths("t.py::test_gw", True, "gw c=16", 0.25, windows)
    assert next(lengths) == 0.25
    windows[0].append(window(16 * MIN_PER_SLOT))
    windows[1].append(window(0))  # nothing finished within the window
    assert next(lengths) == pytest.approx(0.25 * 2 * MIN_PER_SLOT) and windows == ([], [])
    windows[0].append(window(16 * MIN_PER_SLOT))
    windows[1].append(window(16))
    with pytest.warns(OverheadConcurrencyWarning, match="t.py::test_gw: gw c=16: its requests take as long"):
        assert next(lengths, None) is None  # measured once more at most, and said where still too short


SLOW_SIDE = """
import anyio
import pytest


async def bare():
    await anyio.sleep(0.001)


async def slow():  # a request much longer than a 0.25 s window lets 4 slots finish 8 of
    await anyio.sleep(0.1)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_slow(transport):
    await transport.acompare(bare, slow, concurrency=4, label="slow vs bare", rounds=2)
"""


@pytest.mark.every_plugin
def test_a_pair_whose_requests_outlast_its_windows_is_measured_again_in_longer_ones(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SLOW_SIDE)
    result = pytester.runpytest("--overhead", "--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=1)  # measured again in windows of about 1 s (8 requests a slot)
    figures = json.loads((pytester.path / "out.json").read_text())["figures"]
    change = next(f for f in figures if f["metric"] == "rps" and f["measure"] == "max")
    assert change["interval"] == "95% CI, paired over 2 rounds"  # both rounds counted requests: none dropped


STREAM_PAIR_FORMS = """
import time

import anyio
import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


def sync_raw():  # a sync SDK's stream: an iterator of parsed events
    for index in range(4):
        yield {"delta": str(index)}


def sync_sdk():
    for index in range(4):
        time.sleep(0.001)
        yield {"delta": str(index)}


in_flight = {"now": 0, "most": 0}


async def counted():
    in_flight["now"] += 1
    in_flight["most"] = max(in_flight["most"], in_flight["now"])
    for index in range(3):
        await anyio.sleep(0.001)
        yield {"delta": str(index)}
    in_flight["now"] -= 1


def test_sync_pair(transport):
    raw, sdk = transport.compare_streams(sync_raw, sync_sdk, label="sync sdk vs raw", rounds=2)
    assert len(raw) == len(sdk) == 6 and all(s.events == 4 for s in sdk)


def test_sync_pair_in_flight(transport):
    raw, sdk = transport.compare_streams(sync_raw, sync_sdk, label="sync c=4", rounds=2, concurrency=4)
    assert len(raw) == len(sdk) == 8


@pytest.mark.anyio
async def test_async_pair_in_flight(transport):
    raw, sdk = await transport.acompare_streams(counted, counted, rounds=2, concurrency=4)
    assert len(raw) == len(sdk) == 8 and in_flight["most"] == 4


def test_no_streams_in_flight(transport):
    transport.compare_streams(sync_raw, sync_sdk, concurrency=0)
"""


@pytest.mark.every_plugin
def test_stream_pairs_sync_and_in_flight_per_stream_figures(pytester: pytest.Pytester) -> None:
    """A sync SDK's stream needed a wrapper around its iterator, and a stream pair had no concurrency:
    at 8 in flight only whole-stream latency existed. Now both, each stream's own figures."""
    pytester.makepyfile(STREAM_PAIR_FORMS)
    result = pytester.runpytest("--overhead", "--overhead-quick", "--overhead-json=out.json")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_no_streams_in_flight: concurrency=0: a stream pair needs at least 1*"])
    figures = json.loads((pytester.path / "out.json").read_text())["figures"]
    rows = {(f["row"], f["metric"]) for f in figures}
    for row in ("sync sdk vs raw", "sync c=4", "framework vs baseline c=4"):
        assert {(row, "ttfe"), (row, "events_per_s"), (row, "total")} <= rows, row
        assert (f"{row} [framework]", "ttfe") in rows
