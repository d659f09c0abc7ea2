"""The legacy HTTP+SSE client bounds each message POST by ``SSETransport(timeout=...)``:
the stream's long read timeout (``sse_read_timeout``) is for the stream only. A server
that takes a POST and never answers fails that one message with MessageNotDelivered
after about ``timeout`` seconds, and the channel stays usable."""

from __future__ import annotations

import time
from typing import Any, Final

import anyio
import pytest

from mcpkit.exceptions import MessageNotDelivered, TransportError
from mcpkit.transports import SSETransport

from ._httpserver import running_server

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 0.3
LIMIT: Final = 10.0


class SilentPosts:
    """Opens a session stream, then takes POSTs and answers none of them (until the
    client leaves); a POST whose body is ``ok`` gets its 202."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "GET":
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            endpoint = b"event: endpoint\ndata: /messages?session_id=s1\n\n"
            await send({"type": "http.response.body", "body": endpoint, "more_body": True})
        else:
            body = (await receive()).get("body", b"")
            if body == b"ok":
                await send({"type": "http.response.start", "status": 202, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        while (await receive())["type"] != "http.disconnect":
            pass


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_post_that_is_never_answered_fails_after_timeout() -> None:
    with running_server(SilentPosts()) as served:
        transport = SSETransport(served.url + "/sse", timeout=TIMEOUT, close_timeout=1.0)
        with anyio.fail_after(LIMIT):
            async with transport.connect() as channel:
                started = time.monotonic()
                with pytest.raises(MessageNotDelivered, match="ReadTimeout"):
                    await channel.send(b"never")
                assert time.monotonic() - started < 5 * TIMEOUT + 1.0
                await channel.send(b"ok")  # the channel is still usable


class ChattyBeforeEndpoint:
    """Sends ``count`` messages, then its endpoint event, then holds the stream."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        note = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'
        endpoint = b"event: endpoint\ndata: /messages?session_id=s1\n\n"
        await send({"type": "http.response.body", "body": note * self.count, "more_body": True})
        await send({"type": "http.response.body", "body": endpoint, "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass


@pytest.mark.parametrize("count", [64, 65, 1000])
async def test_messages_before_the_endpoint_event(count: int) -> None:
    """Up to 64 wait for the session; more fail at once, saying so (the stream stalled
    until endpoint_timeout, 30 s, and the error blamed a missing endpoint event)."""
    with running_server(ChattyBeforeEndpoint(count)) as served:
        transport = SSETransport(served.url + "/sse", endpoint_timeout=LIMIT, close_timeout=1.0)
        with anyio.fail_after(LIMIT / 2):
            if count <= 64:
                async with transport.connect() as channel:
                    assert channel.endpoint_url is not None
                    message = await channel.receive()
                    assert isinstance(message, bytes)
                    assert b"notifications/message" in message
            else:
                with pytest.raises(TransportError, match="messages before its endpoint event"):
                    async with transport.connect():
                        pytest.fail("connected although the stream broke the protocol")
