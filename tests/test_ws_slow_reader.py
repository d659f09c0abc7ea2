"""A WebSocket client that stops reading is disconnected and its session released, once a
message has waited ``send_timeout`` to be written (``server/_ws_app.py``): the backed-up
socket held the session, its handlers and their results for as long as the TCP connection
lived, on every connection slot a peer cared to open."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import LowLevelServer, RequestContext, ServerSession, WebSocketApp
from mcpkit.types import Tool

from ._httpserver import running_server
from ._wsraw import raw
from .test_http_sse_legacy import INITIALIZE, INITIALIZED, LIMIT, request

pytestmark = pytest.mark.anyio

MIB = "x" * (1024 * 1024)


def flooding_server() -> LowLevelServer:
    server = LowLevelServer("flood")

    async def big(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return MIB

    server.add_tool(Tool(name="big", input_schema={"type": "object"}), big)
    return server


async def test_a_client_that_stops_reading_is_let_go() -> None:
    app = WebSocketApp(flooding_server(), send_timeout=0.5)
    ended = threading.Event()

    def closed(session: ServerSession) -> None:
        ended.set()

    app.on_session_closed = closed
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with raw(running.port) as socket:
            await socket.send(INITIALIZE)
            assert (await socket.message())["id"] == 1
            await socket.send(INITIALIZED)
            # 64 MiB of answers, never read: far more than the socket buffers hold.
            for rid in range(2, 66):
                await socket.send(request(rid, "tools/call", {"name": "big", "arguments": {}}))
            await anyio.to_thread.run_sync(ended.wait, abandon_on_cancel=True)
            assert running.call(lambda: len(app.connections)) == 0


def test_send_timeout_must_be_positive() -> None:
    with pytest.raises(LocalProtocolError):
        WebSocketApp(LowLevelServer("x"), send_timeout=0)
