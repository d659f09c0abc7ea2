"""The client against servers that misbehave, and against misuse of its own lifecycle:
pagination keeps a digest per cursor (not the cursor: 10,000 pages of 1 MB cursors held
10 GB); the result cache stores nothing fetched across an invalidation and holds a bounded
number of bytes, keys included; a client is entered once at a time and starts each connection clean; a
closed client answers nothing from its cache; a discover probe answered with a non-object
falls back to initialize; a timeout must be positive; ``max_timeout`` bounds the wait for
notification callbacks too (``client/*.py``)."""

from __future__ import annotations

import json
import logging
import tracemalloc
from typing import Any

import anyio
import pytest

from mcpkit.aio import memory_channel_pair
from mcpkit.client import Client, ResultCache
from mcpkit.exceptions import ConnectionClosedError, LocalProtocolError, RemoteProtocolError
from mcpkit.server import LowLevelServer, RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import ListToolsResult, Tool

from ._fakemodern import FakeServer, discover_result, fake_client, tool_result

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


def test_the_cache_bounds_what_a_server_puts_in_its_keys_too() -> None:
    # A next page's key holds the cursor it was asked with: 20 pages asked with 1 MB
    # cursors were kept whole outside max_bytes (a server grew a "32 MiB" cache to
    # 180 MiB). A key is a digest of the params; a read's uri counts against max_bytes.
    cache = ResultCache(max_bytes=64 * 1024)
    tracemalloc.start()
    try:
        for n in range(20):
            key = ResultCache.key("tools/list", {"cursor": f"{n}" + "c" * 1_000_000})
            assert key is not None
            cache.put(key, b'{"tools":[]}', 60_000, "private")
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(cache) == 20
    assert held < 4 * 1024 * 1024, held
    uri = "u" * 20_000  # with its uri, over a quarter of max_bytes: not kept
    read = ResultCache.key("resources/read", {"uri": uri})
    assert read is not None
    cache.put(read, b"{}", 60_000, "private", uri)
    assert cache.get(read) is None


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


async def flood_blocked_callbacks(count: int, pad: int) -> int:
    """``count`` list changes of ``pad`` bytes each on a listen stream while the first
    callback blocks; how many callbacks ran once it is released."""
    calls = 0
    release = anyio.Event()

    async def blocked(kind: str) -> None:
        nonlocal calls
        calls += 1
        await release.wait()

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return discover_result()
        if method == "subscriptions/listen":
            meta = {"io.modelcontextprotocol/subscriptionId": fake.calls(method)[-1]["id"]}
            ack = {"_meta": meta, "notifications": params["notifications"]}
            await fake.notify("notifications/subscriptions/acknowledged", ack)
            for n in range(count):
                note = {"_meta": meta, "n": n, "pad": "x" * pad}
                await fake.notify("notifications/tools/list_changed", note)
            await anyio.sleep_forever()
        return tool_result("done")  # tools/call

    with anyio.fail_after(10):
        async with (
            fake_client(handle, on_list_changed=blocked) as (client, _),
            client.listen(tools=True, max_queued_bytes=2 * pad + 1024) as stream,
        ):
            # The stream keeps the newest: the last one is read once all were submitted.
            async for note in stream:
                if note.params["n"] == count - 1:
                    break
            release.set()
            await client.call_tool("done")  # returns once the callbacks caught up
    return calls


async def test_callbacks_hold_a_bounded_number_of_bytes() -> None:
    # Notifications waiting for their callbacks were bounded only in number (1,024 of up
    # to 16 MiB each); 40 MiB waited here behind one slow callback.
    calls = await flood_blocked_callbacks(40, 1024 * 1024)
    assert 0 < calls <= 33, calls  # 32 MiB at most waited


async def test_a_callback_flood_logs_once_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    # One warning per dropped notification: a flood made a log flood (one line each).
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        calls = await flood_blocked_callbacks(3000, 0)
    warnings = [r.getMessage() for r in caplog.records if "callbacks" in r.getMessage()]
    assert len(warnings) <= 2, warnings[:3]
    assert any(str(3000 - calls) in warning for warning in warnings), warnings


async def test_invalid_notifications_are_logged_within_a_bound(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One warning each: a server sending invalid notifications wrote 195,000 lines in 11 s.
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return discover_result()
        for n in range(300):
            await fake.notify("notifications/message", {"level": "bogus", "data": n})
        return tool_result("done")

    with caplog.at_level(logging.WARNING, logger="mcpkit.client"), anyio.fail_after(10):
        async with fake_client(handle) as (client, _):
            await client.call_tool("done")  # returns once the callbacks caught up
    lines = [r for r in caplog.records if "invalid notifications/message" in r.getMessage()]
    assert 20 <= len(lines) < 40


async def test_notifications_before_a_listen_acknowledgement_are_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return discover_result()
        meta = {"io.modelcontextprotocol/subscriptionId": fake.calls(method)[-1]["id"]}
        for n in range(300):
            await fake.notify("notifications/tools/list_changed", {"_meta": meta, "n": n})
        ack = {"_meta": meta, "notifications": params["notifications"]}
        await fake.notify("notifications/subscriptions/acknowledged", ack)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    with caplog.at_level(logging.WARNING, logger="mcpkit.client"), anyio.fail_after(10):
        async with fake_client(handle) as (client, _), client.listen(tools=True) as stream:
            async for note in stream:
                if note.params["n"] == 299:
                    break
    early = [r for r in caplog.records if "before its acknowledgement" in r.getMessage()]
    assert len(early) == 1


@pytest.mark.parametrize("tolerant", [False, True])
async def test_an_invalid_result_is_reported_in_one_short_line(tolerant: bool) -> None:
    # msgspec quotes the offending value (here a 100 kB content type with line breaks):
    # the error names the method and the problem, without the server's text whole.
    kind = "x\r\nforged log line\x1b[31m" * 5_000

    def answer(message: dict[str, Any]) -> Any:
        if message["method"] == "initialize":
            return INIT_RESULT
        if message["method"] == "server/discover":
            return None
        return {"content": [{"type": kind, "text": "hi"}]}

    client_end, server_end = memory_channel_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake_server, server_end, answer)
        async with Client(client_end, tolerant=tolerant) as client:
            with pytest.raises(RemoteProtocolError) as caught:
                await client.call_tool("echo", {"text": "hi"}, timeout=5)
            text = str(caught.value)
            assert text.startswith("invalid result for tools/call: "), text[:200]
            assert len(text) < 500, len(text)
            assert text.isprintable(), repr(text[:200])
            # ...and the connection goes on
            await client.ping()
        tg.cancel_scope.cancel()
