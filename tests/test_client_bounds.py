"""Bounds on a client call that the call itself does not control.

* Waiting for one of the client's ``max_concurrent_requests`` slots counts against the
  call's ``timeout`` and ``max_timeout``: a call queued behind long ones fails with
  RequestTimeoutError at its own bound (it is never sent), and the slots stay counted.
* A stdio server that exits while something it started still holds its stdout open: the
  pending call fails at once with ConnectionClosedError (its end was hidden by the open
  pipe until the call's timeout), and what it left running in its session is ended.
"""

from __future__ import annotations

import logging
import os
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Final

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import ConnectionClosedError, MCPDeprecationWarning, RequestTimeoutError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.transports import StdioTransport
from mcpkit.types import CreateMessageRequestParams, CreateMessageResult

pytestmark = pytest.mark.anyio

LIMIT: Final = 20.0


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def holding_server(release: anyio.Event, held: list[str]) -> Server:
    server = Server("holding", "1.0")

    @server.tool()
    async def hold(key: str) -> str:
        held.append(key)
        await release.wait()
        return key

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


@pytest.mark.parametrize("bound", ["timeout", "max_timeout"])
async def test_waiting_for_a_request_slot_counts_against_the_call_s_bounds(bound: str) -> None:
    release = anyio.Event()
    held: list[str] = []
    server = holding_server(release, held)
    with anyio.fail_after(LIMIT):
        async with connect_memory(server, max_concurrent_requests=2) as client:

            async def hold(key: str) -> None:
                await client.call_tool("hold", {"key": key})

            async with anyio.create_task_group() as tg:
                for key in ("a", "b"):
                    tg.start_soon(hold, key)
                while len(held) < 2:  # both slots taken (the handlers have started)
                    await anyio.wait_all_tasks_blocked()
                started = time.monotonic()
                queued = (
                    client.call_tool("echo", {"text": "queued"}, timeout=0.2)
                    if bound == "timeout"
                    else client.call_tool("echo", {"text": "queued"}, max_timeout=0.2)
                )
                with pytest.raises(RequestTimeoutError, match="no free request slot"):
                    await queued
                assert time.monotonic() - started < 2.0
                release.set()
            # The slots were given back: a call gets one at once.
            result = await client.call_tool("echo", {"text": "after"}, timeout=5)
    assert result.content[0].text == "after"  # type: ignore[union-attr]


SERVER: Final = textwrap.dedent(
    """
    import json, os, subprocess, sys
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "leaves", "version": "1"}}
            out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                  "result": result}).encode() + b"\\n")
            out.flush()
        elif message.get("method") == "tools/call":
            # A child inherits stdin and stdout; the server dies mid-call.
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            with open(sys.argv[1], "w") as f:
                f.write(str(child.pid))
            os._exit(0)
    """
)


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (it may be reparented to an init
    that reaps late)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_a_server_that_exits_while_its_child_holds_stdout_fails_the_call_at_once(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "child.pid"
    transport = StdioTransport(
        sys.executable, ["-c", SERVER, str(pidfile)], stderr="devnull", terminate_timeout=0.5
    )
    with anyio.fail_after(LIMIT):
        async with Client(transport, era="handshake", timeout=LIMIT) as client:
            started = time.monotonic()
            with pytest.raises(ConnectionClosedError):
                await client.call_tool("anything", {})
            assert time.monotonic() - started < 5.0  # not the call's 20 s timeout
    child = int(pidfile.read_text())
    try:
        # Not our child: its end can only be observed (bounded) through /proc.
        assert await anyio.to_thread.run_sync(gone_within, child, 5.0)
    finally:
        if running(child):
            os.kill(child, 9)


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# asyncio only: trio cannot leave a task behind, so there the process-level bound of a
# stdio server (tests/test_cli_stop.py) is what ends it.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_handler_that_ignores_cancellation_does_not_hold_the_connection_s_end(
    anyio_backend: str,
) -> None:
    release = anyio.Event()
    started = anyio.Event()
    server = Server("stubborn", "1.0")

    @server.tool()
    async def stuck() -> str:
        started.set()
        try:
            await anyio.sleep(3600)
        except BaseException:
            # Ignores its cancellation until the test is done (10 s at most, so that a
            # regression fails the test instead of hanging it).
            with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                await release.wait()
            raise
        return "never"

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            async with connect_memory(server) as client:

                async def call() -> None:
                    with pytest.raises(ConnectionClosedError):
                        await client.call_tool("stuck", {}, timeout=None)

                tg.start_soon(call)
                await started.wait()
                ending = time.monotonic()
            # The connection ended: its drain (2 s), then at most 3 s for the handler.
            assert time.monotonic() - ending < 8.0
            release.set()


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_a_client_leaving_while_a_tool_asks_it_something(
    caplog: pytest.LogCaptureFixture, era: str
) -> None:
    """Handshake era: the server's sampling request fails with ConnectionClosedError in
    the tool, which is churn, logged at info (it was an error with a traceback).
    2026-07-28: the client answers input requests in the caller's task; leaving stops
    the callback and fails the call at once (it waited on the callback for ever)."""
    asked = anyio.Event()
    server = Server("asking", "1.0")

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        result = await ctx.sample("hi", max_tokens=5)
        return str(result.content)

    async def never_answers(params: CreateMessageRequestParams) -> CreateMessageResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    outcome: list[BaseException] = []
    with (
        anyio.fail_after(LIMIT),
        caplog.at_level(logging.INFO, logger="mcpkit"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # sampling, on 2026-07-28
        async with (
            anyio.create_task_group() as tg,
            connect_memory(server, era=era, sampling=never_answers) as client,
        ):

            async def call() -> None:
                try:
                    await client.call_tool("ask", {})
                except Exception as exc:
                    outcome.append(exc)

            tg.start_soon(call)
            await asked.wait()
    assert [type(exc) for exc in outcome] == [ConnectionClosedError], outcome
    errors = [r for r in caplog.records if r.name.startswith("mcpkit") and r.levelno >= 40]
    assert errors == [], errors
