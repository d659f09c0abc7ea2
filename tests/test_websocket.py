"""mcpkit's WebSocket binding (``docs/websocket.md``; an extension, no MCP revision defines
one), both sides, end to end over real sockets on 127.0.0.1 (uvicorn in a thread,
``tests/_httpserver.py``).

* a full session: :class:`Client` over :class:`WebSocketTransport` against
  :class:`WebSocketApp` serving ``examples/everything.py``;
* the handshake rules: DNS-rebinding probes, the ``mcp`` subprotocol, the connection cap,
  plain HTTP, probed with hand-written handshakes (``tests/_wsraw.py``);
* the frame rules: binary frames (1003), the size limit (1009), invalid JSON (-32700);
* a client that vanishes mid-call ends its session, as does ``close_all()``;
  ``mcpkit run --transport ws``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import MutableMapping
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import RPCError, TransportError
from mcpkit.server import LowLevelServer, WebSocketApp
from mcpkit.server._http_apps import app_for
from mcpkit.transports import WebSocketChannel, WebSocketTransport
from mcpkit.types import LoggingMessageNotificationParams, ProgressNotificationParams

from ._httpserver import RunningServer, running_server
from ._wsraw import CLOSE, raw
from .conftest import EXAMPLES, ROOT
from .test_http_sse_legacy import (
    INITIALIZE,
    INITIALIZED,
    LIMIT,
    Closed,
    blocking_server,
    load,
    request,
    sample,
    texts,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def everything() -> LowLevelServer:
    server = load(EXAMPLES / "everything.py", "_ws_everything")
    assert isinstance(server.server, LowLevelServer)
    return server.server


def ws_url(server: RunningServer, path: str = "/ws") -> str:
    return server.url.replace("http", "ws", 1) + path


# --------------------------------------------------------------------------- sessions


@pytest.mark.usefixtures("websocket_client")
async def test_full_session(everything: LowLevelServer) -> None:
    app = WebSocketApp(everything)
    closed = Closed()
    app.on_session_closed = closed
    progress: list[ProgressNotificationParams] = []
    logs: list[LoggingMessageNotificationParams] = []
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with WebSocketTransport(ws_url(server)).connect() as channel:
            assert channel.connection is not None
            assert channel.connection.subprotocol == "mcp"
            async with Client(
                channel, era="handshake", sampling=sample, on_log=logs.append
            ) as client:
                assert client.server_info.name == everything.info.name
                assert client.protocol_version == "2025-11-25"
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert {"test_simple_text", "test_sampling", "echo"} <= tools
                result = await client.call_tool("test_simple_text")
                assert texts(result) == ["This is a simple text response for testing."]
                result = await client.call_tool(
                    "test_tool_with_progress", on_progress=progress.append
                )
                assert result.is_error is not True
                assert [(p.progress, p.total) for p in progress] == [
                    (0, 100),
                    (50, 100),
                    (100, 100),
                ]
                result = await client.call_tool("test_tool_with_logging")
                assert texts(result) == ["Tool with logging executed successfully"]
                assert [log.data for log in logs] == [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                result = await client.call_tool("test_sampling", {"prompt": "hello"})
                assert texts(result) == ["LLM response: re: hello"]
                text = "héllo\nwörld 🌍 " * 1000  # multi-line, non-ASCII, 20 KB
                assert texts(await client.call_tool("echo", {"text": text})) == [text]
                assert server.call(lambda: len(app.connections)) == 1
        await closed.wait()
    assert len(closed.sessions) == 1
    assert app.connections == set()
    assert everything.sessions == set()


@pytest.mark.usefixtures("websocket_client")
@pytest.mark.parametrize("ending", ["tcp-drop", "close-frame", "close_all"])
async def test_a_connection_ended_mid_call_ends_the_session(ending: str) -> None:
    """The client drops the TCP connection or sends a close frame mid-call, or the server
    shuts down (``WebSocketApp.close_all()``, which answers with close code 1001, Going
    Away, RFC 6455 section 7.4.1): the session ends, the handler is cancelled, nothing is
    left behind, and the app goes on serving."""
    started, cancelled = threading.Event(), threading.Event()
    server = blocking_server(started, cancelled)
    app = WebSocketApp(server)
    closed = Closed()
    app.on_session_closed = closed
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with raw(running.port) as socket:
            assert socket.status == 101
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1
            await socket.send(INITIALIZED)
            await socket.send(request(2, "tools/call", {"name": "block", "arguments": {}}))
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            sizes = running.call(lambda: (len(app.connections), len(server.sessions)))
            assert sizes == (1, 1)
            if ending == "close-frame":  # a closing handshake, without waiting for the answer
                await socket.send((1000).to_bytes(2, "big"), CLOSE)
            elif ending == "close_all":
                running.call(app.close_all)
                assert await socket.close_code() == 1001
        await closed.wait()
        assert cancelled.is_set()
        assert running.call(lambda: (len(app.connections), len(server.sessions))) == (0, 0)
        running.call(app.close_all)  # (with nothing open: harmless)
        async with Client(ws_url(running)) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["block"]


@pytest.mark.usefixtures("websocket_client")
async def test_a_pending_call_gets_the_shutdown_error_on_close_all() -> None:
    # Answered -32603 before the close frame: the client knows the call was cut, and by
    # the server (a bare close left it guessing whether the call had run).
    started, cancelled = threading.Event(), threading.Event()
    app = WebSocketApp(blocking_server(started, cancelled))
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with Client(ws_url(running)) as client:

            async def shut_down_once_blocked() -> None:
                await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
                running.call(app.close_all)

            async with anyio.create_task_group() as group:
                group.start_soon(shut_down_once_blocked)
                with pytest.raises(RPCError, match="the server is shutting down") as caught:
                    await client.call_tool("block")
                assert caught.value.code == -32603
        assert cancelled.is_set()


# --------------------------------------------------------------------------- handshake rules


#: DNS-rebinding probes: a Host that is not loopback (also hidden behind userinfo), the
#: Origin of a sandboxed page, the Origin of a foreign site.
PROBES: Final = [
    ("host", "evil.example.com"),
    ("host", "localhost@evil.example.com"),
    ("origin", "null"),
    ("origin", "http://evil.example.com"),
]


@pytest.mark.usefixtures("websocket_client")
async def test_dns_rebinding_refused_before_the_handshake(everything: LowLevelServer) -> None:
    app = WebSocketApp(everything)
    closed = Closed()
    app.on_session_closed = closed
    with running_server(app) as server, anyio.fail_after(LIMIT):
        for header, value in PROBES:
            async with raw(server.port, **{header: value}) as refused:
                assert refused.status == 403, (header, value)
                error = json.loads(refused.body)["error"]
                assert error["code"] == -32600
                assert error["message"].startswith("Forbidden: "), error  # the 403's reason
                assert "sec-websocket-accept" not in refused.headers
        # No session was created; a loopback Host and Origin are accepted.
        assert server.call(lambda: (len(app.connections), len(everything.sessions))) == (0, 0)
        assert closed.sessions == []
        origin = f"http://localhost:{server.port}"
        async with raw(server.port, host=f"localhost:{server.port}", origin=origin) as ok:
            assert ok.status == 101
        transport = WebSocketTransport(ws_url(server), origin=origin)
        async with Client(transport) as client:
            assert client.server_info.name == everything.info.name


async def test_subprotocol_rules(everything: LowLevelServer) -> None:
    with running_server(WebSocketApp(everything)) as server, anyio.fail_after(LIMIT):
        # Offered without "mcp": refused.
        async with raw(server.port, sec_websocket_protocol="chat, superchat") as socket:
            assert socket.status == 403
            assert "subprotocol" in json.loads(socket.body)["error"]["message"]
        # "mcp" among others: selected.
        async with raw(server.port, sec_websocket_protocol="chat, mcp") as socket:
            assert socket.status == 101
            assert socket.headers["sec-websocket-protocol"] == "mcp"
        # None offered: accepted, none selected (clients that cannot set one).
        async with raw(server.port, sec_websocket_protocol=None) as socket:
            assert socket.status == 101
            assert "sec-websocket-protocol" not in socket.headers
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1


@pytest.mark.usefixtures("websocket_client")
async def test_client_refuses_a_server_without_the_subprotocol() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":  # accepts, never selects "mcp"
            assert (await receive())["type"] == "websocket.connect"
            await send({"type": "websocket.accept"})
            while (await receive())["type"] != "websocket.disconnect":
                pass

    with (
        running_server(app) as server,
        anyio.fail_after(LIMIT),
        pytest.raises(TransportError, match="did not select the 'mcp' subprotocol"),
    ):
        async with WebSocketTransport(ws_url(server)).connect():
            pass


@pytest.mark.usefixtures("websocket_client")
async def test_connection_cap(everything: LowLevelServer) -> None:
    app = WebSocketApp(everything, max_connections=1)
    closed = Closed()
    app.on_session_closed = closed
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with Client(ws_url(server)):
            with pytest.raises(TransportError) as refused:
                async with WebSocketTransport(ws_url(server)).connect():
                    pass
            assert refused.value.status == 503
            async with raw(server.port) as socket:
                assert socket.status == 503
                assert json.loads(socket.body)["error"]["code"] == -32000
        await closed.wait()
        # The first connection is gone: there is room again.
        async with Client(ws_url(server)) as client:
            assert client.server_info.name == everything.info.name


async def test_connection_cap_counts_handshakes_in_progress(everything: LowLevelServer) -> None:
    """In process: a handshake whose ``websocket.accept`` is still being sent holds its
    slot, so a concurrent one is refused (503) instead of both passing the check."""
    app = WebSocketApp(everything, max_connections=1)
    accepting, release = anyio.Event(), anyio.Event()
    sent: list[list[dict[str, Any]]] = [[], []]

    async def handshake(index: int) -> None:
        events = [{"type": "websocket.connect"}]

        async def receive() -> dict[str, Any]:
            if events:
                return events.pop()
            if index == 0:
                await release.wait()
            return {"type": "websocket.disconnect", "code": 1000}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent[index].append(dict(message))
            if index == 0 and message["type"] == "websocket.accept":
                accepting.set()
                await release.wait()  # the first handshake is still being answered

        scope = {
            "type": "websocket",
            "path": "/ws",
            "headers": [(b"host", b"127.0.0.1")],
            "subprotocols": ["mcp"],
            "extensions": {"websocket.http.response": {}},
        }
        await app(scope, receive, send)

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(handshake, 0)
            await accepting.wait()
            await handshake(1)
            release.set()
    assert [m["type"] for m in sent[0]] == ["websocket.accept"]
    assert sent[1][0]["type"] == "websocket.http.response.start"
    assert sent[1][0]["status"] == 503
    assert app.connections == set()
    assert everything.sessions == set()


@pytest.mark.usefixtures("websocket_client")
async def test_plain_http_and_paths(everything: LowLevelServer) -> None:
    with running_server(WebSocketApp(everything)) as server, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient() as http:
            response = await http.get(server.url + "/ws")
            assert response.status_code == 426
            assert response.headers["upgrade"] == "websocket"
            assert response.json()["error"]["code"] == -32600
            response = await http.get(server.url + "/elsewhere")
            assert response.status_code == 404
            response = await http.get(server.url + "/ws", headers={"origin": "null"})
            assert response.status_code == 403
        async with raw(server.port, "/elsewhere") as socket:
            assert socket.status == 404
        with pytest.raises(TransportError) as refused:
            async with WebSocketTransport(ws_url(server, "/mcp")).connect():
                pass
        assert refused.value.status == 404


# --------------------------------------------------------------------------- frame rules


@pytest.mark.usefixtures("websocket_client")
async def test_frame_rules(everything: LowLevelServer) -> None:
    limit = 1024
    exact = INITIALIZE + b" " * (limit - len(INITIALIZE))
    app = WebSocketApp(everything, max_message_bytes=limit)
    with running_server(app) as server, anyio.fail_after(LIMIT):
        async with raw(server.port) as socket:
            # Invalid JSON: an id-less -32700, and the connection goes on.
            await socket.send(b"{nope")
            error = await socket.message()
            assert error["id"] is None
            assert error["error"]["code"] == -32700
            # Exactly at the limit: accepted.
            await socket.send(exact)
            assert (await socket.message())["id"] == 1
            await socket.send(INITIALIZED)
            await socket.send(request(2, "ping"))
            assert await socket.message() == {"jsonrpc": "2.0", "id": 2, "result": {}}
            # One byte over: closed with 1009 (Message Too Big).
            await socket.send(exact + b" ")
            assert await socket.close_code() == 1009
        async with WebSocketTransport(ws_url(server)).connect() as channel:
            # A binary frame: closed with 1003 (Unsupported Data).
            assert channel.connection is not None
            await channel.connection.send(INITIALIZE)  # bytes: a binary frame
            with pytest.raises(anyio.EndOfStream):
                await channel.receive()
            assert channel.connection.close_code == 1003
        assert server.call(lambda: len(app.connections)) == 0


@pytest.mark.usefixtures("websocket_client")
async def test_channel_send_after_close(everything: LowLevelServer) -> None:
    with running_server(WebSocketApp(everything)) as server, anyio.fail_after(LIMIT):
        channel = WebSocketTransport(ws_url(server)).connect()
        assert isinstance(channel, WebSocketChannel)
        async with channel:
            await channel.send(INITIALIZE)
            assert json.loads(await channel.receive())["id"] == 1
        with pytest.raises(anyio.ClosedResourceError):
            await channel.send(INITIALIZE)
        with pytest.raises(anyio.EndOfStream):
            await channel.receive()


@pytest.mark.usefixtures("websocket_client")
async def test_client_against_a_closed_port() -> None:
    with running_server(WebSocketApp(LowLevelServer("x"))) as server:
        url = ws_url(server)
    with anyio.fail_after(LIMIT), pytest.raises(TransportError, match="cannot open"):
        async with WebSocketTransport(url).connect():
            pass


# --------------------------------------------------------------------------- CLI, settings


@pytest.mark.usefixtures("websocket_client")
async def test_cli_serves_websocket() -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py")]
    # --path given: without it the CLI announces /mcp while WebSocketApp serves /ws.
    argv += ["--transport", "ws", "--port", "0", "--path", "/ws"]
    async with await anyio.open_process(argv, cwd=ROOT) as process:
        try:
            assert process.stderr is not None
            with anyio.fail_after(LIMIT):
                seen = ""
                while "mcpkit: serving" not in seen or not seen.endswith("\n"):
                    seen += (await process.stderr.receive()).decode()
                [line] = [x for x in seen.splitlines() if x.startswith("mcpkit: serving")]
                assert line.startswith("mcpkit: serving WebSocket on ws://127.0.0.1:"), line
                url = line.rsplit(" ", 1)[1]
                assert url.endswith("/ws")
                async with Client(url) as client:
                    assert client.server_info.name == "echo"
                    result = await client.call_tool("echo", {"text": "over ws"})
                    assert texts(result) == ["over ws"]
        finally:
            process.terminate()
            with anyio.fail_after(LIMIT):
                await process.wait()


def test_missing_websockets_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "websockets", None)
    with pytest.raises(TransportError, match=r"pip install 'mcpkit\[ws\]'"):
        WebSocketTransport("ws://127.0.0.1:1/ws")


def test_trio_without_the_trio_client_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # websockets 16 (the last release for Python 3.10) has no websockets.trio.
    for name in ("websockets.trio", "websockets.trio.client"):
        monkeypatch.setitem(sys.modules, name, None)

    async def connect() -> None:
        async with WebSocketTransport("ws://127.0.0.1:1/ws").connect():
            pass

    with pytest.raises(TransportError, match=r"on trio needs websockets >= 17"):
        anyio.run(connect, backend="trio")


def test_app_for_and_settings(everything: LowLevelServer) -> None:
    app = app_for(everything, "ws", path="/socket", max_connections=2)
    assert isinstance(app, WebSocketApp)
    assert (app.path, app.max_connections) == ("/socket", 2)
    with pytest.raises(ValueError, match="invalid option"):
        app_for(everything, "ws", nonsense=1)
    with pytest.raises(ValueError, match="must start with"):
        WebSocketApp(everything, path="ws")
    with pytest.raises(ValueError, match="positive"):
        WebSocketApp(everything, max_message_bytes=0)
