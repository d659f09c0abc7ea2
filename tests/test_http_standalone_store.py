"""The standalone stream stores nothing before a client first opens it with GET: nothing
is sent then, so there is nothing to resume (the events took store space, counted against
the per-session and total bounds, and a crafted Last-Event-ID replayed them, a request
the server had already given up on included)."""

from __future__ import annotations

from typing import Final

import anyio
import httpx
import pytest

from mcpkit.aio import MemoryEventStore
from mcpkit.server import Server

from ._httpserver import running_server
from ._mcphttp import RawSession

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0


def build() -> Server:
    server = Server("standalone", "1.0")

    @server.resource("test://watched")
    def watched() -> str:
        return "watched"

    @server.tool()
    async def touch(times: int) -> str:
        """Announce that test://watched changed."""
        for _ in range(times):
            await server.notify_resource_updated("test://watched")
        return "touched"

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_nothing_is_stored_for_a_stream_nobody_opened(json_response: bool) -> None:
    store = MemoryEventStore()
    app = build().streamable_http_app(event_store=store, json_response=json_response)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            watcher = RawSession(client, http.url + "/mcp")
            await watcher.open()
            assert (await watcher.call(2, "resources/subscribe", {"uri": "test://watched"})) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {},
            }
            toucher = RawSession(client, http.url + "/mcp")
            await toucher.open()
            before = len(store)
            await toucher.call(3, "tools/call", {"name": "touch", "arguments": {"times": 50}})
            # The toucher's own answer may be stored (its POST stream); nothing of the
            # watcher's, who never opened its GET stream.
            assert len(store) - before <= 3
            resumed = await client.get(
                http.url + "/mcp",
                headers={**watcher.headers(accept="text/event-stream"), "last-event-id": "0_1"},
            )
            assert resumed.status_code in (400, 404), resumed.text
