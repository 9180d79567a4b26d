"""Identical trees never fail the gate for a limit (issue 68): an LLM client SDK's streams at 8 in
flight, gated main against main.

    python validation/sdk_streams.py --out DIR --sessions 3 --busy 2     # ~25 min a session here

A project in a git repository: an OpenAI-compatible chat endpoint (an ASGI app served by the
``asgi_server`` fixture) that streams ``--tokens`` chunks ``--pace`` ms apart, and a transport pair
(``acompare_streams``) of the ``openai`` SDK's async client, 8 streams in flight merged into one,
bare against the same client behind a thin layer that validates each chunk (its ``model_dump``). Each
session runs ``pytest --overhead-against=HEAD --overhead-fail-above=5`` beside ``--busy`` busy loops:
the base tree's replica measures the test for minutes, as long as the head does. Per session: the
exit code, the test's outcome, and whether any replica was ended for its silence ("sent nothing").
The promise: no failure in any session. Needs ``pip install openai``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import harness

TEST = """
import asyncio

import openai
import pytest

IN_FLIGHT = 8


@pytest.fixture
def anyio_backend():
    return "asyncio"


def merged(client, layer):
    async def source():
        queue = asyncio.Queue()

        async def one():
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            async for chunk in stream:
                await queue.put(layer(chunk))

        gathered = asyncio.gather(*(one() for _ in range(IN_FLIGHT)))
        while not (gathered.done() and queue.empty()):
            try:
                yield await asyncio.wait_for(queue.get(), 0.05)
            except asyncio.TimeoutError:
                pass
        await gathered

    return source


@pytest.mark.anyio
@pytest.mark.transport
async def test_sdk_streams(transport, asgi_server):
    server = asgi_server("server_app:app")
    client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="local", max_retries=0)
    await transport.acompare_streams(
        merged(client, lambda chunk: chunk), merged(client, lambda chunk: chunk.model_dump()), label="sdk 8 in flight"
    )
"""


SESSION_BOUND_S = 3600.0
"""How long the busy loops may run per session (they end with the script): a session here lasts
~25 min, past the loops' own 15-minute bound, which let the first run's loops end 15 minutes into it."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.openai_stream_options(parser, pace_ms=20.0)
    harness.session_options(parser, sessions=3, busy=2)
    args = parser.parse_args()
    folder = harness.openai_stream_project(args, TEST)
    harness.git(folder, "add", "-A")
    harness.git(folder, "commit", "-qm", "main")
    failures = 0
    with harness.busy_loops(args.busy, seconds=args.sessions * SESSION_BOUND_S):
        for number in range(args.sessions):
            started = time.monotonic()
            ran = subprocess.run(
                harness.pytest_command(
                    args.python, "--overhead-against=HEAD", "--overhead-fail-above=5", "-p", "anyio", measuring=False
                ),
                cwd=folder,
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "PYTHONPATH": str(harness.SRC)},
            )
            output = ran.stdout + ran.stderr
            silent = "sent nothing" in output
            failures += ran.returncode != 0
            (args.out / f"session{number}.txt").write_text(output)
            tail = output.strip().splitlines()[-1] if output.strip() else ""
            print(
                f"session {number}: exit {ran.returncode}, silence {silent}, {time.monotonic() - started:.0f} s: {tail}"
            )
    print(f"{failures} of {args.sessions} sessions failed")


if __name__ == "__main__":
    main()
