"""The legacy HTTP+SSE server's stream buffer (``SSEApp(max_stream_buffer=...)``): one
message larger than the buffer reaches a client that keeps up (the buffer bounds what
waits for a slow client, not the size of a message); a client that stops reading is cut
off, and since 2024-11-05 has no resumption its session ends at once: later POSTs get 404
instead of 202 for answers that could never be delivered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.server import LowLevelServer, RequestContext, SSEApp
from mcpkit.transports import SSETransport
from mcpkit.types import TextContent, Tool

from ._httpserver import RunningServer, running_server
from .test_http_sse_legacy import INITIALIZE, INITIALIZED, raw_stream, request

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

BUFFER: Final = 64 * 1024
LIMIT: Final = 30.0


def big_server() -> LowLevelServer:
    server = LowLevelServer("big", "1.0")

    async def big(ctx: RequestContext, arguments: dict[str, object]) -> str:
        size = arguments.get("size")
        assert isinstance(size, int)
        return "x" * size

    server.add_tool(Tool(name="big", input_schema={"type": "object"}), big)
    return server


@pytest.fixture(scope="module")
def app() -> SSEApp:
    return SSEApp(big_server(), max_stream_buffer=BUFFER)


@pytest.fixture(scope="module")
def served(app: SSEApp) -> Iterator[RunningServer]:
    with running_server(app) as served:
        yield served


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_one_message_larger_than_the_buffer_reaches_a_client_that_keeps_up(
    served: RunningServer,
) -> None:
    with anyio.fail_after(LIMIT):
        async with Client(SSETransport(served.url + "/sse")) as client:
            result = await client.call_tool("big", {"size": 5 * BUFFER})
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert len(block.text) == 5 * BUFFER
            await client.ping()  # the stream goes on


async def test_a_client_that_stops_reading_loses_its_session(
    app: SSEApp, served: RunningServer
) -> None:
    with anyio.fail_after(LIMIT):
        async with raw_stream(served.url) as stream:
            assert (await stream.post(INITIALIZE)).status_code == 202
            assert (await stream.post(INITIALIZED)).status_code == 202
            # From now on nothing is read from the stream: its answers pile up in the
            # socket buffers, then in the server's, until the client is cut off.
            statuses: list[int] = []
            arguments = {"name": "big", "arguments": {"size": BUFFER // 2}}  # each fits
            for rid in range(10, 3010):
                call = request(rid, "tools/call", arguments)
                status = (await stream.post(call)).status_code
                statuses.append(status)
                if status != 202:
                    break
            assert statuses[-1] == 404, statuses[-5:]
            assert set(statuses[:-1]) == {202}
            # Ended for good: every later message is refused too.
            assert (await stream.post(request(1000, "ping"))).status_code == 404
