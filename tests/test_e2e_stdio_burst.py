"""End to end: a burst of quick requests written at once is answered in full. The cap on
requests in flight (``max_in_flight``) refuses work beyond what is running, not requests
whose handlers simply had no turn yet."""

from __future__ import annotations

import json
import subprocess

import pytest

from ._rawstdio import INIT_PARAMS


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_burst_of_quick_requests_in_one_write_is_answered_in_full(
    echo_server_argv: list[str], backend: str
) -> None:
    # 300 requests in one write (one read), three times the default cap: 200 of them were
    # refused with "Too many requests in flight", no handler having run yet.
    count = 300
    messages = [
        {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT_PARAMS},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ] + [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": f"n{n}"}},
        }
        for n in range(count)
    ]
    burst = b"".join(json.dumps(message).encode() + b"\n" for message in messages)
    done = subprocess.run(
        [*echo_server_argv, "--backend", backend],
        input=burst,  # then end of input: what was asked is answered, the server exits
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines())}
    assert answers.pop("init")["result"]["serverInfo"]["name"] == "echo"
    refused = [answer for answer in answers.values() if "error" in answer]
    assert refused == []
    assert {rid: answer["result"]["content"][0]["text"] for rid, answer in answers.items()} == {
        n: f"n{n}" for n in range(count)
    }
