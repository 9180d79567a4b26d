"""The lean load generator against wrk and h2load, on the same server, in one session.

For each protocol one built-in-app server is started; at each concurrency level the fixture's
``load()`` and the reference tool (wrk for HTTP/1.1 and HTTPS, h2load for h2c, HTTP/2 over TLS
and HTTP/3) take turns on it, ``--rounds`` times, and the table gives the medians and the
ratio (the issue's target: the fixture's req/s at least 60% of wrk's). Run alone, on a quiet
machine: it is all timing.

    .venv/bin/python validation/wrk_compare.py [--seconds 2] [--rounds 3]

Needs wrk and h2load (Debian: ``apt-get install wrk nghttp2-client``); a tool that is missing
is reported as missing, not guessed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import tempfile

from overheadbench.http import start_server
from overheadbench.http.loadrun import DEFAULT_BODY, load

LEVELS = (1, 10, 100)
TOOL = {"http1": "wrk", "https": "wrk", "h2c": "h2load", "h2": "h2load", "h3": "h2load"}


def reference(protocol: str, url: str, concurrency: int, seconds: float, body_file: str, lua: str) -> float | None:
    """req/s of wrk or h2load at ``concurrency`` requests in flight (None: the tool is missing)."""
    tool = TOOL[protocol]
    if shutil.which(tool) is None:
        return None
    if tool == "wrk":
        command = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds:g}s", "-s", lua, url + "/echo"]
        output = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout
        match = re.search(r"Requests/sec:\s+([\d.]+)", output)
    else:
        connections = 1 if concurrency <= 50 else 2  # as the lean client: up to 50 streams a connection
        streams = -(-concurrency // connections)
        command = ["h2load", f"-D{seconds:g}", "-t1", f"-c{connections}", f"-m{streams}", "-d", body_file]
        command += ["--npn-list=h3"] if protocol == "h3" else []
        output = subprocess.run(command + [url + "/echo"], capture_output=True, text=True, timeout=seconds + 30).stdout
        match = re.search(r"finished in [\d.]+s, ([\d.]+) req/s", output)
        if protocol == "h3" and match and float(match.group(1)) == 0:
            return None  # Debian 12's h2load 1.52 is built without QUIC: it made no request at all
    return float(match.group(1)) if match else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--protocols", default="http1,h2c,https,h2,h3")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="overheadbench-wrk-")
    body_file, lua = f"{folder}/body.json", f"{folder}/post.lua"
    with open(body_file, "wb") as out:
        out.write(DEFAULT_BODY)
    with open(lua, "w") as out:
        out.write(f'wrk.method = "POST"\nwrk.body = {DEFAULT_BODY.decode()!r}\n')
        out.write('wrk.headers["Content-Type"] = "application/json"\n')
    print(
        "| protocol | c | fixture req/s | reference | reference req/s | fixture / reference | client CPU ms/req | server CPU ms/req |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for protocol in args.protocols.split(","):
        server = start_server(protocol=protocol)
        try:
            port = server.quic_port if protocol == "h3" else int(server.url.rsplit(":", 1)[1])
            url = f"{'https' if protocol in ('https', 'h2', 'h3') else 'http'}://127.0.0.1:{port}"
            for level in LEVELS:
                ours, theirs, client, served = [], [], [], []
                for _ in range(args.rounds):
                    result = load(server, concurrency=level, duration_s=args.seconds, path="/echo", body=DEFAULT_BODY)
                    ours.append(result.requests_per_s)
                    client.append(result.client_cpu_s_per_request)
                    served.append(result.server_cpu_s_per_request)
                    theirs.append(reference(protocol, url, level, args.seconds, body_file, lua))
                fixture = statistics.median(ours)
                known = [value for value in theirs if value is not None]
                tool = statistics.median(known) if known else None
                shown = f"{tool:,.0f}" if tool is not None else "none (missing, or no HTTP/3 in it)"
                ratio = f"{fixture / tool:.0%}" if tool else ""
                print(
                    f"| {protocol} | {level} | {fixture:,.0f} | {TOOL[protocol]} | {shown} | {ratio} "
                    f"| {statistics.median(client) * 1e3:.3f} | {statistics.median(served) * 1e3:.3f} |"
                )
        finally:
            server.close()


if __name__ == "__main__":
    main()
