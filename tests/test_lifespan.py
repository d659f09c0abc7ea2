"""The server's lifespan (``Server(lifespan=...)``): startup and shutdown around everything
the server serves, its value shared by every handler as ``ctx.lifespan``.

Entered once before serving begins and exited after it ends: around a connection served
in process or over stdio, and once per run of an HTTP app, never per session (the official
SDK's per-session lifespan gives every Streamable HTTP client its own database pool).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import ConnectionClosedError, TransportError
from mcpkit.server import LowLevelServer, RequestContext, Server, SSEApp, WebSocketApp
from mcpkit.types import CallToolResult, TextContent, Tool

from ._httpserver import running_server
from ._mcphttp import RawSession
from .conftest import needs_websocket_client

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0


class Pool:
    """Stands for what a lifespan opens (a database pool, an HTTP client)."""

    count = 0

    def __init__(self) -> None:
        Pool.count += 1
        self.name = f"pool-{Pool.count}"


def recording_server(events: list[str], *, fail: bool = False) -> Server:
    """A server whose lifespan records "start" and "stop" in ``events`` and yields a
    :class:`Pool`; its tool ``pool`` answers with the name of the pool it sees."""

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        assert isinstance(server, Server)
        events.append("start")
        if fail:
            raise RuntimeError("database down")
        try:
            yield Pool()
        finally:
            events.append("stop")

    server = Server("lifespan", lifespan=lifespan)

    @server.tool()
    async def pool(*, ctx: RequestContext) -> str:
        """The name of the pool this request sees."""
        events.append("call")
        return str(ctx.lifespan.name)

    return server


def text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


# -- in process -------------------------------------------------------------------------


async def test_the_value_reaches_tools_entered_before_and_exited_after_the_connection() -> None:
    events: list[str] = []
    server = recording_server(events)
    with anyio.fail_after(LIMIT):
        async with Client(server) as client:
            assert events == ["start"]  # entered before the first request was read
            first = text(await client.call_tool("pool", {}))
            second = text(await client.call_tool("pool", {}))
            assert first == second
            assert first.startswith("pool-")
            assert events == ["start", "call", "call"]
        assert events == ["start", "call", "call", "stop"]  # exited when the client closed


async def test_overlapping_connections_share_one_run() -> None:
    events: list[str] = []
    server = recording_server(events)
    with anyio.fail_after(LIMIT):
        async with Client(server) as one, Client(server) as two:
            assert text(await one.call_tool("pool", {})) == text(await two.call_tool("pool", {}))
        assert events.count("start") == 1
        assert events[-1] == "stop"
        assert events.count("stop") == 1


async def test_a_later_connection_runs_it_again() -> None:
    events: list[str] = []
    server = recording_server(events)
    with anyio.fail_after(LIMIT):
        for _ in range(2):
            async with Client(server) as client:
                await client.ping()
    assert events == ["start", "stop", "start", "stop"]


async def test_a_failing_startup_fails_the_connection_with_its_exception() -> None:
    events: list[str] = []
    server = recording_server(events, fail=True)
    with anyio.fail_after(LIMIT):
        with pytest.raises(RuntimeError, match="database down"):
            async with Client(server) as client:
                await client.call_tool("pool", {})
        # Tried again by the next connection (and nothing was ever served).
        with pytest.raises(RuntimeError, match="database down"):
            async with Client(server):
                pass
    assert events == ["start", "start"]


async def test_without_a_lifespan_ctx_lifespan_is_none() -> None:
    server = Server("plain")

    @server.tool()
    async def probe(*, ctx: RequestContext) -> str:
        """What ctx.lifespan holds."""
        return repr(ctx.lifespan)

    with anyio.fail_after(LIMIT):
        async with Client(server) as client:
            assert text(await client.call_tool("probe", {})) == "None"


async def test_low_level_server_takes_a_lifespan() -> None:
    @asynccontextmanager
    async def lifespan(server: LowLevelServer) -> AsyncIterator[dict[str, str]]:
        yield {"greeting": "hello"}

    server = LowLevelServer("low", lifespan=lifespan)

    async def greet(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return str(ctx.lifespan["greeting"])

    server.add_tool(Tool(name="greet", input_schema={"type": "object"}), greet)
    with anyio.fail_after(LIMIT):
        async with Client(server) as client:
            assert text(await client.call_tool("greet", {})) == "hello"


# -- stdio, end to end -------------------------------------------------------------------

_STDIO_SERVER = """
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from mcpkit import Server
from mcpkit.server import RequestContext

MARKERS = Path({markers!r})


@asynccontextmanager
async def lifespan(server):
    with MARKERS.open("a") as out:
        out.write("start\\n")
    if {fail!r}:
        raise RuntimeError("database down")
    try:
        yield "the pool"
    finally:
        with MARKERS.open("a") as out:
            out.write("stop\\n")


server = Server("stdio-lifespan", lifespan=lifespan)


@server.tool()
async def pool(*, ctx: RequestContext) -> str:
    '''The pool.'''
    return ctx.lifespan
"""


def stdio_server(tmp_path: Path, *, fail: bool = False) -> tuple[list[str], Path]:
    markers = tmp_path / "markers.txt"
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(_STDIO_SERVER.format(markers=str(markers), fail=fail)))
    return [sys.executable, "-m", "mcpkit", "run", str(script)], markers


async def test_stdio_runs_the_lifespan_around_the_connection(tmp_path: Path) -> None:
    argv, markers = stdio_server(tmp_path)
    with anyio.fail_after(LIMIT):
        async with Client(StdioTransport(argv)) as client:
            assert text(await client.call_tool("pool", {})) == "the pool"
            assert markers.read_text() == "start\n"
    # The client waited for the process to end: the shutdown ran before it did.
    assert markers.read_text() == "start\nstop\n"


async def test_stdio_startup_failure_ends_the_connection(tmp_path: Path) -> None:
    argv, markers = stdio_server(tmp_path, fail=True)
    lines: list[str] = []
    transport = StdioTransport(argv, stderr="capture", on_stderr=lines.append)
    with anyio.fail_after(LIMIT), pytest.raises(ConnectionClosedError):
        async with Client(transport):
            pass
    assert markers.read_text() == "start\n"
    assert any("database down" in line for line in lines)


# -- HTTP: once per app run --------------------------------------------------------------


async def test_streamable_http_enters_it_once_for_every_session() -> None:
    events: list[str] = []
    server = recording_server(events)
    with running_server(server.streamable_http_app()) as http, anyio.fail_after(LIMIT):
        # serve_http's ready callback (which running_server waits for) comes after it.
        assert events == ["start"]
        url = http.url + "/mcp"
        async with Client(url, era="handshake") as one, Client(url, era="handshake") as two:
            assert text(await one.call_tool("pool", {})) == text(await two.call_tool("pool", {}))
        async with Client(url) as modern:  # 2026-07-28: every POST stands alone
            assert text(await modern.call_tool("pool", {})) == "pool-" + str(Pool.count)
        assert events[0] == "start"  # before the first call
        assert events.count("start") == 1
        assert "stop" not in events  # sessions ended, the app still runs
    assert events.count("stop") == 1
    assert events[-1] == "stop"


@pytest.mark.parametrize("kind", ["sse", "ws"])
async def test_legacy_sse_and_websocket_apps_enter_it_once(kind: str, anyio_backend: str) -> None:
    if kind == "ws":
        needs_websocket_client(anyio_backend)
    events: list[str] = []
    server = recording_server(events)
    app = SSEApp(server) if kind == "sse" else WebSocketApp(server)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        url = http.url + "/sse" if kind == "sse" else http.url.replace("http", "ws", 1) + "/ws"
        async with Client(url, era="handshake") as one, Client(url, era="handshake") as two:
            assert text(await one.call_tool("pool", {})) == text(await two.call_tool("pool", {}))
        assert events.count("start") == 1
        assert "stop" not in events
    assert events.count("stop") == 1


@pytest.mark.parametrize("kind", ["http", "sse", "ws"])
async def test_a_failing_startup_stops_the_http_server_from_starting(kind: str) -> None:
    server = recording_server([], fail=True)
    app: Any = server.streamable_http_app()
    if kind != "http":
        app = SSEApp(server) if kind == "sse" else WebSocketApp(server)
    # (running_server bounds its own waits: it runs uvicorn in a thread)
    with pytest.raises(TransportError, match="lifespan startup failed"), running_server(app):
        pass


async def test_mounted_without_an_asgi_lifespan_the_first_request_enters_it() -> None:
    events: list[str] = []
    app = recording_server(events).streamable_http_app(json_response=True)
    transport = httpx.ASGITransport(app=app)  # sends no lifespan events
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(transport=transport, timeout=10) as http:
            for _ in range(2):
                session = RawSession(http, "http://127.0.0.1/mcp")
                await session.open()
                reply = await session.call(2, "tools/call", {"name": "pool", "arguments": {}})
                [answer] = reply["result"]["content"]
                assert answer["text"].startswith("pool-")
    assert events.count("start") == 1


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_mounted_a_failing_startup_answers_500(kind: str) -> None:
    server = recording_server([], fail=True)
    app = server.streamable_http_app() if kind == "http" else SSEApp(server)
    transport = httpx.ASGITransport(app=app)
    headers = {"accept": "application/json, text/event-stream"}
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(transport=transport, timeout=10) as http:
            if kind == "http":
                response = await http.post("http://127.0.0.1/mcp", content=b"{}", headers=headers)
            else:
                response = await http.get("http://127.0.0.1/sse", headers=headers)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == -32603
    assert "database down" not in response.text  # the reason is logged, not handed out
