"""The legacy HTTP+SSE and WebSocket apps shutting down (``close_all()``, which
``mcpkit run`` and ``serve_http`` call when shutdown begins) with requests still running:
each is answered -32603 "the server is shutting down" before the stream or connection
ends, exactly once (a handler's late result is never sent after it), as on Streamable
HTTP (``tests/test_http_shutdown.py``). A bare end of the connection left the client
unable to tell a call cut by the server from one lost in transit. Under ``mcpkit run``
too: ``serve_http`` awaits what its shutdown hook returns (bounded), so a WebSocket's
answers go out before uvicorn closes the connection itself."""

from __future__ import annotations

import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.lowlevel
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import MCPError, RPCError
from mcpkit.server import Server, SSEApp, WebSocketApp
from mcpkit.transports import SHUTDOWN_HOOK_TIMEOUT, SSETransport

from ._http_testserver import Gates
from ._httpserver import RunningServer, running_server
from .test_cli_stop import http_process
from .test_http_shutdown import LIMIT, SHUTTING_DOWN, blocking_server

pytestmark = pytest.mark.anyio

CALLS = 5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def app_for(transport: str, gates: Gates) -> SSEApp | WebSocketApp:
    server = blocking_server(gates)
    return SSEApp(server) if transport == "sse" else WebSocketApp(server)


def target(transport: str, http: RunningServer) -> Any:
    if transport == "sse":
        return SSETransport(http.url + "/sse")
    return http.url.replace("http://", "ws://", 1) + "/ws"


async def shut_down_during(
    transport: str,
    http: RunningServer,
    app: SSEApp | WebSocketApp,
    gates: Gates,
    calls: dict[str, Any],
) -> dict[str, BaseException | Any]:
    """Make the calls (tool name -> arguments, each opening the gate named by its key or
    the tool), shut the app down once all run, and return each call's outcome."""
    outcomes: dict[str, BaseException | Any] = {}
    async with Client(target(transport, http), era="handshake") as client:

        async def call(key: str, tool: str, arguments: dict[str, Any]) -> None:
            try:
                outcomes[key] = await client.call_tool(tool, arguments, timeout=LIMIT)
            except MCPError as exc:
                outcomes[key] = exc

        async with anyio.create_task_group() as tg:
            for key, (tool, arguments) in calls.items():
                tg.start_soon(call, key, tool, arguments)
            for key in calls:
                await gates.wait(key)
            http.call(app.close_all)
    return outcomes


def assert_shutdown_error(outcome: BaseException | Any) -> None:
    assert isinstance(outcome, RPCError), repr(outcome)
    assert outcome.code == -32603
    assert outcome.message == SHUTTING_DOWN


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_every_running_request_gets_the_shutdown_error(transport: str) -> None:
    gates = Gates()
    app = app_for(transport, gates)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        calls = {f"call {n}": ("block", {"key": f"call {n}"}) for n in range(CALLS)}
        outcomes = await shut_down_during(transport, http, app, gates, calls)
    assert sorted(outcomes) == sorted(calls)
    for outcome in outcomes.values():
        assert_shutdown_error(outcome)


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_a_handler_ignoring_its_cancellation_gets_the_error_not_its_result(
    transport: str,
) -> None:
    # Its error is given at close_all() (written at once on an SSE stream; on a WebSocket
    # once the connection's end has waited out the handler's stop grace, before the
    # close frame); its late result goes nowhere.
    gates = Gates()
    app = app_for(transport, gates)
    with running_server(app) as http:
        try:
            with anyio.fail_after(LIMIT):
                outcomes = await shut_down_during(
                    transport, http, app, gates, {"stubborn": ("stubborn", {})}
                )
                assert_shutdown_error(outcomes["stubborn"])
                await gates.wait("cancelled")  # (it was, and went on)
        finally:
            gates.open("let go")


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_mcpkit_run_answers_running_calls_on_sigterm(transport: str) -> None:
    # The real runner: its shutdown hook (awaited on WebSocket, before uvicorn closes the
    # connections itself with a bare 1012) gets the answers out first.
    with http_process("--transport", transport) as (process, url):
        target: Any = SSETransport(url) if transport == "sse" else url
        outcomes = await sigterm_during(process, target, "sleep", {"seconds": 60})
        process.wait(timeout=LIMIT)
    assert len(outcomes) == CALLS
    for outcome in outcomes:
        assert_shutdown_error(outcome)


async def sigterm_during(
    process: subprocess.Popen[bytes], target: Any, tool: str, arguments: dict[str, Any]
) -> list[BaseException | Any]:
    """Make :data:`CALLS` calls of ``tool`` (which reports progress once it runs), send
    the server SIGTERM once all run, and return each call's outcome."""
    outcomes: list[BaseException | Any] = []
    with anyio.fail_after(LIMIT):
        async with Client(target, era="handshake") as client:
            running = [anyio.Event() for _ in range(CALLS)]

            async def call(started: anyio.Event) -> None:
                try:
                    outcomes.append(
                        await client.call_tool(
                            tool,
                            arguments,
                            on_progress=lambda _: started.set(),  # (it runs)
                            timeout=LIMIT,
                        )
                    )
                except MCPError as exc:
                    outcomes.append(exc)

            async with anyio.create_task_group() as tg:
                for started in running:
                    tg.start_soon(call, started)
                for started in running:
                    await started.wait()
                process.send_signal(signal.SIGTERM)
    return outcomes


@pytest.mark.parametrize("hangs", [False, True], ids=["finishes", "hangs"])
def test_serve_http_awaits_what_its_shutdown_hook_returns_within_a_bound(
    hangs: bool, caplog: pytest.LogCaptureFixture
) -> None:
    finished = threading.Event()

    async def ending() -> None:
        await anyio.lowlevel.checkpoint()  # (a real wait: awaited, not just called)
        if hangs:
            await anyio.sleep_forever()
        finished.set()

    app = SSEApp(Server("hook"))
    with running_server(app, on_shutdown=ending):
        started = time.monotonic()
    took = time.monotonic() - started
    assert finished.is_set() is not hangs
    if hangs:  # given up after SHUTDOWN_HOOK_TIMEOUT, and said so
        assert took >= SHUTDOWN_HOOK_TIMEOUT
        assert "the shutdown hook did not finish within 2 s" in caplog.text
    assert took < SHUTDOWN_HOOK_TIMEOUT + LIMIT


STUBBORN: Final = textwrap.dedent(
    """
    import anyio
    from mcpkit import Server
    from mcpkit.server import RequestContext

    server = Server("stubborn", "1.0")

    @server.tool()
    async def stuck(ctx: RequestContext) -> str:
        await ctx.report_progress(0)  # (it runs)
        for _ in range(300):
            try:
                await anyio.sleep(0.1)
            except anyio.get_cancelled_exc_class():
                continue  # ignores its cancellation (misbehaving on purpose)
        return "late"
    """
)


@pytest.mark.parametrize(
    "flags",
    [("--transport", "ws"), ("--transport", "http", "--json-response")],
    ids=["websocket", "streamable http json"],
)
async def test_mcpkit_run_answers_stubborn_calls_on_sigterm(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    # The answers go out at the shutdown hook, not once the handlers' stop grace (3 s)
    # has passed: by then uvicorn's own close (1012) would have cut them. (A JSON POST's
    # handler runs in the POST's own task: it waited until uvicorn gave up, 5 s, then the
    # client saw the connection drop, unable to tell whether its call had run.)
    (tmp_path / "stubborn.py").write_text(STUBBORN)
    script = tmp_path / "stubborn.py"
    with http_process(*flags, script=script) as (process, url):
        outcomes = await sigterm_during(process, url, "stuck", {})
    assert len(outcomes) == CALLS
    for outcome in outcomes:
        assert_shutdown_error(outcome)
