"""``serve_http`` (``Server.serve_http``) stopped by cancelling it, as a program embedding
the server in its own task group does: it shuts down as a stop does, before the
cancellation completes. uvicorn left it all undone: the app's lifespan exited only when the
event loop closed (after the caller had moved on, say closed its database pool), with
"Exception in 'lifespan' protocol" logged at ERROR, and open connections and streams were
left to the loop's end."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from mcpkit.server import Server
from mcpkit.transports import HttpServer

from ._mcphttp import JSON_HEADERS, initialize

pytestmark = pytest.mark.anyio

LIMIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn runs on asyncio


def recording_server(events: list[str]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[None]:
        events.append("start")
        try:
            yield None
        finally:
            events.append("stop")

    return Server("cancelled", "1.0", lifespan=lifespan)


@pytest.mark.parametrize("transport", ["http", "sse", "ws"])
async def test_cancelling_it_exits_the_lifespan_before_the_cancellation_completes(
    transport: str,
) -> None:
    events: list[str] = []
    server = recording_server(events)
    ready = anyio.Event()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.serve_http(transport, port=0, ready=lambda _: ready.set()))
            await ready.wait()
            assert events == ["start"]
            tg.cancel_scope.cancel()
        events.append("cancelled")
    assert events == ["start", "stop", "cancelled"]


async def test_an_open_stream_ends_and_the_port_is_free_once_cancelled() -> None:
    events: list[str] = []
    server = recording_server(events)
    started: list[HttpServer] = []
    ready, done = anyio.Event(), anyio.Event()
    serving = anyio.CancelScope()

    def on_ready(http: HttpServer) -> None:
        started.append(http)
        ready.set()

    async def serve() -> None:
        with serving:
            await server.serve_http("http", port=0, ready=on_ready)
        done.set()

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg, httpx.AsyncClient(timeout=LIMIT) as client:
            tg.start_soon(serve)
            await ready.wait()
            url = started[0].url + "/mcp"
            opened = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            headers = {
                "accept": "text/event-stream",
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            async with client.stream("GET", url, headers=headers) as stream:
                assert stream.status_code == 200
                serving.cancel()
                with contextlib.suppress(httpx.HTTPError):
                    async for _ in stream.aiter_bytes():
                        pass
            await done.wait()
            assert events == ["start", "stop"]
            with pytest.raises(httpx.ConnectError):
                await client.post(url, content=initialize(), headers=JSON_HEADERS)
