"""The built-in runner gives uvicorn the app's message limit, whether through
``Server.serve_http("ws")`` (what ``mcpkit run --transport ws`` uses) or
``mcpkit.transports.serve_http`` handed a ``WebSocketApp``: a frame declaring more is
refused from its header (close 1009, RFC 6455 section 7.4.1), before any of its payload
is buffered; a message at the limit works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Final

import anyio
import pytest
from websockets.exceptions import ConnectionClosed

from mcpkit.server import LowLevelServer, WebSocketApp

from ._http_testserver import build_server
from ._httpserver import RunningServer, running, running_server
from ._wsraw import CLOSE, TEXT, raw
from .test_http_sse_legacy import INITIALIZE

pytestmark = pytest.mark.anyio

LIMIT: Final = 1024
TIMEOUT: Final = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


@pytest.fixture(scope="module", params=["Server.serve_http", "transports.serve_http"])
def served(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    server: LowLevelServer = build_server()
    if request.param == "Server.serve_http":
        with running(
            lambda ready: server.serve_http("ws", port=0, ready=ready, max_message_bytes=LIMIT)
        ) as served:
            yield served
    else:  # no ws_max_size given: the runner takes the app's own limit
        with running_server(WebSocketApp(server, max_message_bytes=LIMIT)) as served:
            yield served


async def test_a_message_at_the_limit_is_served(served: RunningServer) -> None:
    exact = INITIALIZE + b" " * (LIMIT - len(INITIALIZE))
    with anyio.fail_after(TIMEOUT):
        async with raw(served.port) as socket:
            assert socket.status == 101
            await socket.send(exact)
            assert (await socket.message())["id"] == 1


async def test_a_frame_declared_over_the_limit_is_refused_before_its_payload(
    served: RunningServer,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with raw(served.port) as socket:
            assert socket.status == 101
            # A frame header that announces 1 MiB (over the app's 1 KiB, under uvicorn's own
            # default of 16 MiB), and only 4 bytes of it: the server must not wait for the rest.
            mask = b"\x00\x00\x00\x00"
            header = bytes([0x80 | TEXT, 0x80 | 127]) + (1 << 20).to_bytes(8, "big") + mask
            await socket.stream.send(header + b'{"js')
            opcode, payload = await socket.receive()
            assert opcode == CLOSE
            assert int.from_bytes(payload[:2], "big") == 1009


async def test_a_fragmented_compressed_message_at_the_limit_is_served(
    served: RunningServer,
) -> None:
    """websockets ends a fragmented message with an empty final frame, which
    permessage-deflate turns into one byte: the runner leaves uvicorn that slack, and the
    app itself holds the message to the limit (it was refused with 1009)."""
    from websockets.asyncio.client import connect
    from websockets.typing import Subprotocol

    text = (INITIALIZE + b" " * (LIMIT - len(INITIALIZE))).decode()
    with anyio.fail_after(TIMEOUT):
        async with connect(
            f"ws://127.0.0.1:{served.port}/ws",
            subprotocols=[Subprotocol("mcp")],
            compression="deflate",
        ) as socket:
            await socket.send([text[start : start + 256] for start in range(0, LIMIT, 256)])
            assert json.loads(await socket.recv())["id"] == 1
            # One byte more is still refused, by the app.
            await socket.send([text[start : start + 256] for start in range(0, LIMIT, 256)] + [" "])
            with pytest.raises(ConnectionClosed) as closed:
                await socket.recv()
            assert closed.value.rcvd is not None
            assert closed.value.rcvd.code == 1009
