"""The built-in runner's header deadline ends connections that send no request in time;
a connection upgraded to WebSocket is no longer waiting for a request and lives until
one side closes it, however long after the deadline that is (it was cut, without a close
frame, ``header_timeout`` seconds after it opened)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Final

import anyio
import anyio.abc
import pytest

from mcpkit.client import Client
from mcpkit.server import WebSocketApp
from mcpkit.transports import WebSocketTransport

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server

pytestmark = pytest.mark.anyio

HEADER_TIMEOUT: Final = 0.2
LIMIT: Final = 10.0


@pytest.fixture(scope="module")
def served() -> Iterator[RunningServer]:
    app = WebSocketApp(build_server())
    with running_server(app, header_timeout=HEADER_TIMEOUT) as served:
        yield served


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.usefixtures("websocket_client")
async def test_a_websocket_session_outlives_the_header_deadline(served: RunningServer) -> None:
    url = f"ws://127.0.0.1:{served.port}/ws"
    with anyio.fail_after(LIMIT):
        async with Client(WebSocketTransport(url), timeout=5) as client:
            await client.ping()
            # The deadline passes three times over while the session is idle: the
            # passing time is what is tested here.
            await anyio.sleep(3 * HEADER_TIMEOUT)
            await client.ping()
            result = await client.call_tool("echo", {"text": "still here"})
    assert result.content[0].text == "still here"  # type: ignore[union-attr]


async def test_a_connection_that_sends_no_request_is_still_closed(
    served: RunningServer,
) -> None:
    with anyio.fail_after(LIMIT):
        stream = await anyio.connect_tcp("127.0.0.1", served.port)
        async with stream:
            await stream.send(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                await drain(stream)


async def drain(stream: anyio.abc.ByteStream) -> None:
    """Read until the server closes the connection."""
    while True:
        await stream.receive()


@pytest.fixture(scope="module")
def slow_deadline() -> Iterator[RunningServer]:
    app = WebSocketApp(build_server())
    with running_server(app, header_timeout=60.0) as served:
        yield served


def websocket_protocols() -> int:
    """uvicorn's WebSocket protocol objects alive (run on the server's thread)."""
    gc.collect()
    count = 0
    for obj in gc.get_objects():
        module = getattr(type(obj), "__module__", None)
        if isinstance(module, str) and module.startswith("uvicorn.protocols.websockets"):
            count += 1
    return count


@pytest.mark.usefixtures("websocket_client")
async def test_a_closed_websocket_is_freed_before_the_header_deadline(
    slow_deadline: RunningServer,
) -> None:
    """The header deadline's timer kept each upgraded connection's protocols, and their
    compression state, alive until it fired (60 s here), however soon the client left:
    a client reconnecting in a loop made the server hold rate x deadline of them."""
    url = f"ws://127.0.0.1:{slow_deadline.port}/ws"
    with anyio.fail_after(LIMIT):
        for _ in range(5):
            async with Client(WebSocketTransport(url), timeout=5) as client:
                await client.ping()
        for _ in range(100):  # a bounded poll: the server's thread frees them
            if not slow_deadline.call(websocket_protocols):
                break
            await anyio.sleep(0.05)
        assert slow_deadline.call(websocket_protocols) == 0
