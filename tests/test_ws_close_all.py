"""``WebSocketApp.close_all()``, the shutdown hook the other two HTTP apps have: every
connection ends with a close frame 1001 (Going Away, RFC 6455 section 7.4.1), its handlers
are cancelled, a client's pending call fails at once, and the app goes on accepting new
connections (``mcpkit run`` and ``Server.serve_http`` call it when shutdown begins)."""

from __future__ import annotations

import threading

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import ConnectionClosedError
from mcpkit.server import WebSocketApp

from ._httpserver import running_server
from ._wsraw import raw
from .test_http_sse_legacy import INITIALIZE, INITIALIZED, LIMIT, Closed, blocking_server, request

pytestmark = pytest.mark.anyio


async def test_close_all_sends_going_away_and_cancels_handlers() -> None:
    started, cancelled = threading.Event(), threading.Event()
    server = blocking_server(started, cancelled)
    app = WebSocketApp(server)
    closed = Closed()
    app.on_session_closed = closed
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with raw(running.port) as socket:
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1
            await socket.send(INITIALIZED)
            await socket.send(request(2, "tools/call", {"name": "block", "arguments": {}}))
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            running.call(app.close_all)
            assert await socket.close_code() == 1001
        await closed.wait()
        assert cancelled.is_set()
        assert running.call(lambda: (len(app.connections), len(server.sessions))) == (0, 0)
        # Closing nothing is harmless; new connections are served as before.
        running.call(app.close_all)
        async with raw(running.port) as socket:
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1


@pytest.mark.usefixtures("websocket_client")
async def test_a_pending_call_fails_promptly_on_close_all() -> None:
    started, cancelled = threading.Event(), threading.Event()
    app = WebSocketApp(blocking_server(started, cancelled))
    with running_server(app) as running, anyio.fail_after(LIMIT):
        url = running.url.replace("http", "ws", 1) + "/ws"
        async with Client(url) as client:

            async def shut_down_once_blocked() -> None:
                await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
                running.call(app.close_all)

            async with anyio.create_task_group() as group:
                group.start_soon(shut_down_once_blocked)
                with pytest.raises(ConnectionClosedError):
                    await client.call_tool("block")
        assert cancelled.is_set()
