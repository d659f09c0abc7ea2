"""A server that ends or breaks the connection under a pending call, over the WebSocket
and the legacy HTTP+SSE client transports, end to end on 127.0.0.1: the call fails at
once with a :class:`ConnectionClosedError` that says why (the server's close code and
reason, the frame or event it sent), and so do the calls made afterwards.

The server (:class:`Ending`) answers ``initialize`` and ``ping``, and meets
``tools/list`` with the row's ending.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Final

import anyio
import anyio.abc
import pytest
from anyio.streams.memory import MemoryObjectSendStream

from mcpkit.client import Client
from mcpkit.exceptions import ConnectionClosedError
from mcpkit.transports import SSETransport, WebSocketTransport

from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
#: The transports' size limit in these tests (the server's large messages exceed it).
SMALL: Final = 1000


def answer(message: dict[str, Any]) -> str | None:
    """The server's answer to a request other than ``tools/list`` (none to the rest)."""
    result: dict[str, Any] = {}
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ending", "version": "1"},
        }
    elif "id" not in message:
        return None
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})


class Ending:
    """Speaks both bindings; ``tools/list`` meets ``ending``."""

    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.stream: MemoryObjectSendStream[bytes | None] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await self.websocket(receive, send)
        elif scope["type"] == "http" and scope["method"] == "GET":
            await self.sse_stream(send)
        elif scope["type"] == "http":
            await self.sse_post(receive, send)

    async def websocket(self, receive: Any, send: Any) -> None:
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept", "subprotocol": "mcp"})
        while (event := await receive())["type"] == "websocket.receive":
            message = json.loads(event["text"])
            if message.get("method") != "tools/list":
                if (text := answer(message)) is not None:
                    await send({"type": "websocket.send", "text": text})
            elif self.ending == "binary":
                await send({"type": "websocket.send", "bytes": b"{}"})
            elif self.ending == "too-large":
                await send({"type": "websocket.send", "text": " " * (SMALL + 1)})
            else:  # a close code of the private range, and a reason on two lines
                await send({"type": "websocket.close", "code": 4321, "reason": "going\naway"})
                return

    async def sse_stream(self, send: Any) -> None:
        self.stream, events = anyio.create_memory_object_stream[bytes | None](16)
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        endpoint = b"event: endpoint\ndata: /messages\n\n"
        await send({"type": "http.response.body", "body": endpoint, "more_body": True})
        with self.stream, events:
            async for event in events:
                if event is None:  # the ending
                    if self.ending == "broken":
                        raise RuntimeError("the connection breaks mid-stream")
                    break
                await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def sse_post(self, receive: Any, send: Any) -> None:
        message = json.loads((await receive())["body"])
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        assert self.stream is not None
        if message.get("method") == "tools/list":
            if self.ending == "too-large":
                await self.stream.send(b"data: " + b" " * SMALL + b"\n\n")
            await self.stream.send(None)
        elif (text := answer(message)) is not None:
            await self.stream.send(b"data: " + text.encode() + b"\n\n")


def ws(url: str) -> WebSocketTransport:
    return WebSocketTransport(url.replace("http", "ws", 1), max_message_bytes=SMALL)


def sse(url: str) -> SSETransport:
    return SSETransport(url, max_event_bytes=SMALL)


@pytest.mark.usefixtures("websocket_client")
@pytest.mark.parametrize(
    ("transport", "ending", "why"),
    [
        (ws, "binary", "the server sent a binary frame (MCP messages are text frames)"),
        (ws, "too-large", f"a message from the server exceeded max_message_bytes ({SMALL})"),
        (ws, "close", "the server closed the WebSocket (4321: going away)"),
        (sse, "end", "the server ended the SSE stream"),
        (sse, "broken", "the SSE stream broke: RemoteProtocolError"),
    ],
    ids=["ws-binary", "ws-too-large", "ws-close-4321", "sse-end", "sse-broken"],
)
async def test_a_call_cut_short_by_the_server_says_why(
    transport: Any, ending: str, why: str
) -> None:
    with running_server(Ending(ending)) as server, anyio.fail_after(LIMIT):
        async with Client(transport(server.url), timeout=LIMIT) as client:
            await client.ping()
            with pytest.raises(ConnectionClosedError) as pending:
                await client.list_tools()
            with pytest.raises(ConnectionClosedError) as later:
                await client.ping()
    for error in (pending.value, later.value):
        assert str(error).startswith("the connection closed: "), error
        assert why in str(error), error


async def frozen(stream: anyio.abc.ByteStream) -> None:
    """A WebSocket server that completes the opening handshake (RFC 6455 section 4.2.2),
    then freezes: it reads nothing, answers no ping."""
    async with stream:
        await answer_the_handshake(stream)
        await anyio.sleep_forever()


async def answer_the_handshake(stream: anyio.abc.ByteStream) -> None:
    head = b""
    while b"\r\n\r\n" not in head:
        head += await stream.receive()
    (key,) = [
        line.split(b":", 1)[1].strip()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    ]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    await stream.send(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Protocol: mcp\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )


@pytest.mark.usefixtures("websocket_client")
async def test_a_server_that_stops_answering_pings_is_named() -> None:
    # websockets closes the connection itself (1011) when no pong comes in time; the call
    # cut short says so, not that the connection was lost.
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    transport = WebSocketTransport(
        f"ws://127.0.0.1:{port}", ping_interval=0.1, ping_timeout=0.1, close_timeout=0.1
    )
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, frozen)
        with (
            anyio.fail_after(LIMIT),
            pytest.raises(ConnectionClosedError, match=r"closed the WebSocket \(1011: keepalive"),
        ):
            async with Client(transport, timeout=LIMIT):
                pass
        group.cancel_scope.cancel()
