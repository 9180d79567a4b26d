"""benchmarks/: the transport report printed at the end of a session; validation/ holds
scripts (run by hand), not tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

collect_ignore = ["validation"]


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.2f}"


@dataclass
class TransportReport:
    """Rows of the transport tables, filled by the benchmarks, printed once at the end."""

    requests: list[str] = field(default_factory=list)
    streams: list[str] = field(default_factory=list)

    def latency(self, label: str, stats, rate=None) -> None:
        rps = f"{rate.requests_per_s:,.0f}" if rate else f"{1 / stats.mean_s:,.0f} (1/mean)"
        cpu = f"{rate.client_cpu_s_per_request * 1e3:.2f}" if rate else ""
        self.requests.append(
            f"| {label} | {rps} | {_ms(stats.p50_s)} | {_ms(stats.p95_s)} | {_ms(stats.p99_s)} "
            f"| {cpu} | | {stats.count} {stats.note} |"
        )

    def throughput(self, label: str, point) -> None:
        stats = point.latency
        self.requests.append(
            f"| {label} | {point.requests_per_s:,.0f} | {_ms(stats.p50_s if stats else None)} "
            f"| {_ms(stats.p95_s if stats else None)} | {_ms(stats.p99_s if stats else None)} "
            f"| {point.client_cpu_s_per_request * 1e3:.2f} | {point.server_max_in_flight} "
            f"| {point.requests} ok, {point.errors} errors |"
        )

    def stream(self, label: str, stats) -> None:
        self.streams.append(
            f"| {label} | {_ms(stats.first_event_s)} | {_ms(stats.total_s)} | {stats.events_per_s:,.0f} "
            f"| {stats.bytes:,} | {stats.reads} | {_ms(stats.gap_p50_s)} | {_ms(stats.gap_p95_s)} |"
        )

    def lines(self) -> list[str]:
        lines = []
        if self.requests:
            lines += [
                "| transport | req/s | p50 ms | p95 ms | p99 ms | client CPU ms/req | server max in flight | requests |",
                "|---|---|---|---|---|---|---|---|",
                *self.requests,
                "",
            ]
        if self.streams:
            lines += [
                "| stream | first event ms | total ms | events/s | bytes | reads | gap p50 ms | gap p95 ms |",
                "|---|---|---|---|---|---|---|---|",
                *self.streams,
            ]
        return lines


REPORT = TransportReport()


@pytest.fixture
def transport_report() -> TransportReport:
    return REPORT


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session) -> None:
    """Append the transport tables to the --overhead-md report (written just before)."""
    path = session.config.getoption("--overhead-md", None)
    if path and (REPORT.requests or REPORT.streams):
        from overheadbench.jsonio import write_text_atomic

        with open(path, encoding="utf-8") as report:
            text = report.read()
        write_text_atomic(
            path,
            text
            + "\n## Transport (server in its own process, httpx client here)\n\n"
            + "\n".join(REPORT.lines())
            + "\n",
        )


def pytest_terminal_summary(terminalreporter) -> None:
    if REPORT.requests or REPORT.streams:
        terminalreporter.write_sep("-", "transport (server in its own process, httpx client here)")
        for line in REPORT.lines():
            terminalreporter.write_line(line)
