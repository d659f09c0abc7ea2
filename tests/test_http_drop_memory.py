"""Clients dropping their connections in the middle of a streamed call, again and again:
the server stays healthy, and once the sessions end, every mcpkit object is gone and the
memory is back to its baseline (the handshake era: a drop is not a cancellation, so each
call finishes and its result waits for a resumption that never comes)."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Final

import anyio
import anyio.to_thread
import httpx
import pytest

from ._http_testserver import GATES, build_server
from ._httpserver import running_server
from ._leakcheck import mcpkit_objects
from ._mcphttp import RawSession, call, events

pytestmark = pytest.mark.anyio

ROUNDS: Final = 100


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


async def drop_mid_call(client: httpx.AsyncClient, url: str, key: str) -> None:
    session = RawSession(client, url)
    await session.open()
    async with session.stream(call(2, "hold", key=key)) as response:
        await anext(aiter(events(response)))  # the first event arrived: the call runs
    # The connection is gone; the call finishes afterwards, its answer kept for resuming.
    assert await anyio.to_thread.run_sync(GATES.get(f"{key}:started").wait, 10)
    GATES.open(key)
    assert (await session.call(3, "ping"))["result"] == {}  # the session still works
    deleted = await client.delete(url, headers=session.headers())
    assert deleted.status_code == 204
    GATES.forget(key, f"{key}:started")


async def test_dropped_streams_leave_nothing_behind() -> None:
    app = build_server().streamable_http_app()
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            tracemalloc.start()
            try:
                for i in range(5):  # warm-up: containers grow to their working size
                    await drop_mid_call(client, url, f"warm{i}")
                http.run(app.wait_ended)
                http.call(gc.collect)
                baseline = tracemalloc.get_traced_memory()[0]
                objects = http.call(mcpkit_objects)
                lefts = []
                for batch in range(2):
                    with anyio.fail_after(60):
                        for i in range(ROUNDS):
                            await drop_mid_call(client, url, f"drop{batch}-{i}")
                    http.run(app.wait_ended)
                    assert app.sessions == {}
                    assert app.event_store is not None
                    assert len(app.event_store) == 0  # type: ignore[arg-type]
                    assert http.call(mcpkit_objects) == objects  # not one mcpkit object kept
                    lefts.append(tracemalloc.get_traced_memory()[0] - baseline)
            finally:
                tracemalloc.stop()
    # What remains is table capacity and caches (a few dozen KiB, in the test's client
    # too), not per-call state: it does not grow with more calls, where 100 calls leaving
    # even 1 KiB each would add 100 KiB.
    assert lefts[1] - lefts[0] < 32 * 1024, lefts
