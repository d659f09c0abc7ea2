"""A synchronous tool runs in a worker thread, and the threads stay bounded even when a
peer cancels calls to a tool that blocks, over and over: on asyncio the cancelled call
stopped waiting and gave its worker slot back while its thread ran on, so every call and
cancel added a thread (``aio/_workers.py``)."""

from __future__ import annotations

import threading

import anyio
import pytest

from mcpkit.exceptions import RequestTimeoutError
from mcpkit.server import Server
from mcpkit.testing import connect_memory

pytestmark = pytest.mark.anyio

#: anyio's default worker thread limiter.
WORKERS = 40


async def test_cancelled_calls_to_a_blocking_sync_tool_keep_threads_bounded() -> None:
    release = threading.Event()
    server = Server("blocking", max_in_flight=200)

    @server.tool()
    def block() -> str:
        release.wait(30)  # (bounded: a failing test must not leave threads behind)
        return "done"

    before = threading.active_count()
    try:
        async with connect_memory(server, era="handshake") as client:
            for _ in range(WORKERS + 20):
                with pytest.raises(RequestTimeoutError):
                    await client.call_tool("block", timeout=0.05)
            grown = threading.active_count() - before
            # The calls were cancelled; the threads they started are still blocked, and
            # there are no more of them than the worker slots.
            assert grown <= WORKERS + 2, grown  # (+2: threads of the event loop itself)
            release.set()
            # The slots come back as the threads end: the tool works again.
            with anyio.fail_after(10):
                assert (await client.call_tool("block")).content[0].text == "done"  # type: ignore[union-attr]
    finally:
        release.set()


async def test_a_connection_ends_without_waiting_for_a_cancelled_blocking_sync_tool() -> None:
    # On trio the handler waited for its thread, cancelled or not: the connection's end
    # (a client leaving, a server shutting down) waited as long as the tool blocked.
    started, release, returned = threading.Event(), threading.Event(), threading.Event()
    server = Server("blocking")

    @server.tool()
    def block() -> str:
        started.set()
        release.wait(30)  # (bounded: a failing test must not leave threads behind)
        returned.set()
        return "done"

    try:
        with anyio.fail_after(10):
            async with (
                connect_memory(server, era="handshake") as client,
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(client.call_tool, "block")
                await anyio.to_thread.run_sync(started.wait, 10)
                tg.cancel_scope.cancel()  # sends notifications/cancelled
            # Both ends finished while the tool's thread is still blocked.
        assert not returned.is_set()
    finally:
        release.set()
