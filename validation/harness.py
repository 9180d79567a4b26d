"""What every validation script shares: one pytest session run and its run document, busy loops
beside it, the options of scripts of sessions, a git runner.

Each script ran its own ``session()`` (ten of them), each a ``subprocess.run`` of pytest with
``--overhead-json``; here is the one. The scripts are type-checked and linted with the package
(mypy, ruff), and ``tests/test_validation.py`` runs every script's ``--help``, so a rename in
``src/`` breaks a test rather than a script no one runs until the next validation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
"""The repository."""
SRC = ROOT / "src"
BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"
"""A busy loop (``python -c "while True: pass"``, bounded: it ends by itself after ``seconds``)."""

OPENAI_STREAM_APP = """
import asyncio
import json

TOKENS, PACE_S = {tokens}, {pace} / 1000


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({{"type": "lifespan.startup.complete"}})
            elif message["type"] == "lifespan.shutdown":
                await send({{"type": "lifespan.shutdown.complete"}})
                return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]
    await send({{"type": "http.response.start", "status": 200, "headers": headers}})
    for index in range(TOKENS):
        chunk = {{
            "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{{"index": 0, "delta": {{"content": f"t{{index}} "}}, "finish_reason": None}}],
        }}
        await send({{"type": "http.response.body", "body": f"data: {{json.dumps(chunk)}}\\n\\n".encode(), "more_body": True}})
        await asyncio.sleep(PACE_S)
    await send({{"type": "http.response.body", "body": b"data: [DONE]\\n\\n", "more_body": False}})
"""
"""An OpenAI-compatible chat endpoint (an ASGI app for the ``asgi_server`` fixture) that streams
``tokens`` chunks ``pace`` ms apart, then ``data: [DONE]`` (``.format(tokens=, pace=)``)."""


@dataclass
class Ran:
    """One pytest session: its run document (``results`` empty where none was written), its wall
    time, exit code and output."""

    run: dict[str, Any] = field(default_factory=lambda: {"results": [], "figures": []})
    wall_s: float = 0.0
    exit: int = 0
    output: str = ""

    @property
    def results(self) -> list[dict[str, Any]]:
        return list(self.run.get("results", []))

    @property
    def figures(self) -> list[dict[str, Any]]:
        return list(self.run.get("figures", []))


def pytest_command(python: str, *args: str, measuring: bool = True) -> list[str]:
    """A pytest session's command line, quiet and without the cache (each session fresh)."""
    return [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        *(["--overhead"] * measuring),
        *args,
    ]


def session(
    cwd: Path,
    out: Path,
    *args: str,
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
    paths: Sequence[Path] = (),
    timeout_s: float | None = None,
    measuring: bool = True,
    reuse: bool = False,
) -> Ran:
    """One fresh pytest session in ``cwd`` writing its run to ``out`` (``--overhead-json``); ``paths``
    go first on ``PYTHONPATH`` (``SRC``: this checkout's package rather than the installed one);
    ``reuse``: a run already written is read, not measured again (a validation interrupted goes on)."""
    if reuse and out.exists():
        return Ran(json.loads(out.read_text()))
    environ = {**os.environ, **(env or {})}
    if paths:
        environ["PYTHONPATH"] = os.pathsep.join([*map(str, paths), environ.get("PYTHONPATH", "")])
    started = time.perf_counter()
    done = subprocess.run(
        pytest_command(python, f"--overhead-json={out}", *args, measuring=measuring),
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    ran = Ran(wall_s=time.perf_counter() - started, exit=done.returncode, output=done.stdout + done.stderr)
    if out.exists():
        ran.run = json.loads(out.read_text())
    return ran


@contextlib.contextmanager
def busy_loops(count: int, seconds: float = 900.0) -> Iterator[None]:
    """``count`` busy loops (each ends by itself after ``seconds`` at the latest, and when this does)."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=seconds)]) for _ in range(count)]
    try:
        time.sleep(1.0 if loops else 0.0)
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def session_options(parser: argparse.ArgumentParser, sessions: int, busy: int) -> None:
    """The options every script of sessions beside busy loops takes: how many, beside how many loops, which Python."""
    parser.add_argument("--sessions", type=int, default=sessions)
    parser.add_argument("--busy", type=int, default=busy, help='loops of `python -c "while True: pass"` beside each')
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs each session")


def openai_stream_options(parser: argparse.ArgumentParser, pace_ms: float) -> None:
    """The options of a script whose project streams ``OPENAI_STREAM_APP``: where, how many chunks, how far apart."""
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--pace", type=float, default=pace_ms, help="ms between chunks")


SDK_CLIENTS = """
import contextlib

import httpx
import openai

MESSAGES = [{"role": "user", "content": "hi"}]
REQUEST = {
    "method": "POST",
    "json": {"model": "m", "messages": MESSAGES, "stream": True},
    "headers": {"Authorization": "Bearer local"},
}
PATH = "/v1/chat/completions"


@contextlib.asynccontextmanager
async def async_sides(server):
    # the SDK's client closed in the test's loop: left to the collector, it closed on a closed loop
    async with (
        httpx.AsyncClient(base_url=server.url) as raw,
        openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="local", max_retries=0) as sdk,
    ):
        yield (raw, PATH, REQUEST), lambda: sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)


@contextlib.contextmanager
def sync_sides(server):
    with (
        httpx.Client(base_url=server.url) as raw,
        openai.OpenAI(base_url=server.url + "/v1", api_key="local", max_retries=0) as sdk,
    ):
        yield (raw, PATH, REQUEST), lambda: sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)
"""
"""The raw API's side and the SDK's stream of one chat request (``sdk_clients.py`` of the project)."""
CONFTEST = 'import pytest\n\n\n@pytest.fixture\ndef anyio_backend():\n    return "asyncio"\n'


def openai_stream_project(args: argparse.Namespace, test: str) -> Path:
    """A fresh project (:func:`git_project`) of ``OPENAI_STREAM_APP`` as ``server_app.py``, the SDK's and
    the raw API's sides as ``sdk_clients.py``, asyncio for anyio's tests, and ``test`` as ``test_sdk.py``."""
    server = OPENAI_STREAM_APP.format(tokens=args.tokens, pace=args.pace)
    files = {"server_app.py": server, "sdk_clients.py": SDK_CLIENTS, "conftest.py": CONFTEST, "test_sdk.py": test}
    return git_project(args.out, files)


def git_project(out: Path, files: Mapping[str, str]) -> Path:
    """A fresh git repository at ``out/project`` (anything there before removed) holding ``files``
    (name -> text), not yet committed: a validation's generated project."""
    folder = out / "project"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "init", "-q", "-b", "main")
    return folder


def git(folder: Path, *args: str) -> str:
    """``git`` in ``folder`` as a validation's own user; its output."""
    environ = {**os.environ, "GIT_AUTHOR_NAME": "v", "GIT_AUTHOR_EMAIL": "v@v"}
    environ.update(GIT_COMMITTER_NAME="v", GIT_COMMITTER_EMAIL="v@v")
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True, env=environ).stdout


def base_changes(
    run: dict[str, Any], rows: Sequence[str], metrics: Sequence[str], threshold: float
) -> dict[tuple[str, str], tuple[float, float, str]]:
    """Each of these rows' figures' change at the base tree of an A/B run: (percent, what it detects,
    the gate's finding at ``threshold`` percent)."""
    from overheadbench.engine.changes import Change

    found = {}
    for figure in run.get("figures", []):
        if figure["row"] in rows and figure["metric"] in metrics and figure["places"]:
            change = Change.from_json(figure["places"][0]["change"], "change", figure["row"])
            found[(figure["row"], figure["metric"])] = (
                change.percent,
                change.detectable,
                change.finding(threshold).value,
            )
    return found
