"""The client against servers that misbehave, and against misuse of its own lifecycle:
pagination keeps a digest per cursor (not the cursor: 10,000 pages of 1 MB cursors held
10 GB); the result cache stores nothing fetched across an invalidation and holds a bounded
number of bytes; a client is entered once at a time and starts each connection clean; a
closed client answers nothing from its cache; a discover probe answered with a non-object
falls back to initialize; a timeout must be positive; ``max_timeout`` bounds the wait for
notification callbacks too (``client/*.py``)."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import anyio
import pytest

from mcpkit.aio import memory_channel_pair
from mcpkit.client import Client, ResultCache
from mcpkit.exceptions import ConnectionClosedError, LocalProtocolError
from mcpkit.server import LowLevelServer, RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import ListToolsResult, Tool

pytestmark = pytest.mark.anyio

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "fake", "version": "1"},
}


async def fake_server(channel: Any, answer: Any) -> None:
    """A raw server: ``answer(message)`` gives the result of each request."""
    try:
        while True:
            try:
                raw = await channel.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            message = json.loads(raw)
            if "id" not in message:
                continue
            result = answer(message)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            await channel.send(json.dumps(reply).encode())
    finally:
        with anyio.CancelScope(shield=True):
            await channel.aclose()


async def test_pagination_keeps_digests_not_cursors() -> None:
    pages = 200
    big = "c" * 100_000

    def answer(message: dict[str, Any]) -> Any:
        if message["method"] == "initialize":
            return INIT_RESULT
        if message["method"] == "server/discover":
            return None  # (a non-object: a legacy server, see below)
        cursor = (message.get("params") or {}).get("cursor")
        n = 0 if cursor is None else int(cursor[-8:]) + 1
        return {"tools": []} | ({} if n == pages else {"nextCursor": big + f"{n:08d}"})

    client_end, server_end = memory_channel_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake_server, server_end, answer)
        async with Client(client_end) as client:
            assert client.era == "handshake"  # the null discover answer fell back
            tracemalloc.start()
            try:
                assert [tool async for tool in client.iter_tools()] == []
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        tg.cancel_scope.cancel()
    # 200 cursors of 100 KB kept would be 20 MB; a few pages in flight are not.
    assert peak < 4 * 1024 * 1024, peak


def test_the_cache_stores_nothing_fetched_across_an_invalidation() -> None:
    cache = ResultCache()
    key = ResultCache.key("tools/list", {})
    assert key is not None
    mark = cache.mark()
    cache.invalidate("notifications/tools/list_changed")  # while the request was out
    cache.put(key, b'{"tools":[]}', 60_000, "private", mark=mark)
    assert cache.get(key) is None
    cache.put(key, b'{"tools":[]}', 60_000, "private", mark=cache.mark())
    assert cache.get(key) == b'{"tools":[]}'


def test_the_cache_holds_a_bounded_number_of_bytes() -> None:
    cache = ResultCache(max_bytes=1000)
    keys = [("resources/read", str(n).encode()) for n in range(10)]
    cache.put(keys[0], b"x" * 300, 60_000, "private")  # over a quarter: not kept
    assert cache.get(keys[0]) is None
    for key in keys:
        cache.put(key, b"x" * 200, 60_000, "private")
    assert len(cache) == 5  # the oldest went
    assert cache.get(keys[-1]) is not None
    assert cache.get(keys[0]) is None


async def test_a_client_is_entered_once_at_a_time() -> None:
    async with connect_memory(LowLevelServer("x")) as client:
        with pytest.raises(LocalProtocolError, match="already connected"):
            await client.__aenter__()
        await client.ping()  # the connection it has is untouched


async def test_closing_a_client_from_another_task_is_refused() -> None:
    # The connection's task groups were left from the wrong task: a RuntimeError on
    # asyncio, and on trio a corrupted cancel scope stack (TrioInternalError at the end).
    async with connect_memory(LowLevelServer("x")) as client:

        async def close() -> None:
            with pytest.raises(LocalProtocolError, match="task that connected"):
                await client.aclose()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(close)
            await client.ping()  # the connection it has is untouched


async def test_a_closed_client_answers_nothing_from_its_cache() -> None:
    server = Server("cached", cache_ttl_ms=60_000)
    async with connect_memory(server) as client:
        assert client.era == "2026-07-28"
        assert isinstance(await client.list_tools(), ListToolsResult)  # now cached
    with pytest.raises(ConnectionClosedError):
        await client.list_tools()


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan")])
async def test_timeouts_must_be_positive(timeout: float) -> None:
    async with connect_memory(LowLevelServer("x")) as client:
        with pytest.raises(LocalProtocolError, match="positive"):
            await client.request("ping", {}, dict, timeout=timeout)


async def test_max_timeout_bounds_the_wait_for_callbacks_too() -> None:
    # The answer waits for the callbacks of the notifications that came before it, but
    # not past the call's absolute bound: a slow callback held the call for 8 s.
    server = LowLevelServer("logs")

    async def chatty(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        await ctx.log("info", "before the answer")
        return "done"

    server.add_tool(Tool(name="chatty", input_schema={"type": "object"}), chatty)
    release = anyio.Event()

    async def slow_callback(record: Any) -> None:
        await release.wait()

    async with connect_memory(server, era="handshake", on_log=slow_callback) as client:
        with anyio.fail_after(5):
            result = await client.call_tool("chatty", max_timeout=0.3)
        release.set()
    assert result.content[0].text == "done"  # type: ignore[union-attr]
