"""``subscriptions/listen`` end to end over Streamable HTTP, with the everything server on
127.0.0.1: one POST answered with a long-lived SSE stream, filters, closing the stream
ends the listen, the server ends it gracefully.
2026-07-28 ``basic/patterns/subscriptions.mdx``, ``basic/transports/streamable-http.mdx``."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any, Final, cast

import anyio
import anyio.to_thread
import httpx
import pytest

from mcpkit.protocol import SSEParser
from mcpkit.server import Server

from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, RawSession, messages_of, request
from ._mcphttp import events as sse_events
from ._wire import (
    ACK,
    MODERN,
    PROMPTS,
    SUB,
    TOOLS,
    UPDATED,
    call_params,
    listen_params,
)
from .conftest import EXAMPLES, load_module

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0
EVERYTHING: Final = EXAMPLES / "everything.py"
WATCHED: Final = "test://watched-resource"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread (uvicorn)


# -- Streamable HTTP --------------------------------------------------------------------------

_loads = itertools.count()


@pytest.fixture(scope="module")
def everything() -> Iterator[ModuleType]:
    """A fresh import of examples/everything.py (its server and state)."""
    yield from load_module(EVERYTHING, f"_everything_listen_{next(_loads)}")


@pytest.fixture(scope="module")
def http(everything: ModuleType) -> Iterator[RunningServer]:
    with running_server(everything.server.streamable_http_app()) as server:
        yield server


def headers(method: str, name: str | None = None) -> dict[str, str]:
    out = {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    return out


def body(rid: Any, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


class Stream:
    """The messages of one listen's SSE response, as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._chunks = cast(AsyncGenerator[bytes, None], response.aiter_bytes())
        self._parser = SSEParser()
        self._ready: list[dict[str, Any]] = []

    async def next(self) -> dict[str, Any] | None:
        """The next message, or ``None`` when the stream ended."""
        with anyio.fail_after(LIMIT):
            while not self._ready:
                try:
                    chunk = await anext(self._chunks)
                except StopAsyncIteration:
                    return None
                events = self._parser.feed(chunk)
                self._ready += [json.loads(e.data) for e in events if e.data]
        return self._ready.pop(0)

    async def aclose(self) -> None:
        await self._chunks.aclose()


@asynccontextmanager
async def listen(http: RunningServer, rid: Any, **notifications: Any) -> AsyncIterator[Stream]:
    async with (
        httpx.AsyncClient(timeout=LIMIT) as client,
        client.stream(
            "POST",
            http.url + "/mcp",
            content=body(rid, "subscriptions/listen", listen_params(**notifications)),
            headers=headers("subscriptions/listen"),
        ) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        stream = Stream(response)
        try:
            yield stream
        finally:
            await stream.aclose()


async def call_tool(http: RunningServer, tool: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        response = await client.post(
            http.url + "/mcp",
            content=body(99, "tools/call", call_params(tool)),
            headers=headers("tools/call", tool),
        )
    answer: dict[str, Any] = response.json()
    assert answer["result"]["content"][0]["text"], answer
    return answer


async def subscriptions(http: RunningServer, everything: ModuleType) -> int:
    count: int = await anyio.to_thread.run_sync(
        http.call, lambda: everything.server.bus.subscriptions
    )
    return count


async def test_listen_over_http_delivers_what_was_asked(
    http: RunningServer, everything: ModuleType
) -> None:
    async with (
        listen(http, 11, toolsListChanged=True, resourceSubscriptions=[WATCHED]) as wide,
        listen(http, "narrow", promptsListChanged=True) as narrow,
    ):
        ack = await wide.next()
        assert ack is not None
        assert ack["method"] == ACK
        assert ack["params"]["_meta"] == {SUB: 11}
        assert (await narrow.next() or {}).get("method") == ACK
        await call_tool(http, "test_trigger_tool_change")
        await call_tool(http, "test_watched_resource_update")
        await call_tool(http, "test_trigger_prompt_change")
        tools, updated = await wide.next(), await wide.next()
        prompts = await narrow.next()  # the tools change, published first, skipped it
    assert tools == {"jsonrpc": "2.0", "method": TOOLS, "params": {"_meta": {SUB: 11}}}
    assert updated is not None
    assert updated["params"] == {"uri": WATCHED, "_meta": {SUB: 11}}
    assert prompts == {"jsonrpc": "2.0", "method": PROMPTS, "params": {"_meta": {SUB: "narrow"}}}


async def test_closing_the_stream_ends_the_listen(
    http: RunningServer, everything: ModuleType
) -> None:
    async with listen(http, 21, toolsListChanged=True) as stream:
        assert (await stream.next() or {}).get("method") == ACK
        assert await subscriptions(http, everything) == 1
    with anyio.fail_after(LIMIT):
        while await subscriptions(http, everything):
            pass  # each check is a round trip to the server's loop
    await call_tool(http, "test_trigger_tool_change")  # nobody left to tell


async def test_the_server_ends_the_stream_gracefully(
    http: RunningServer, everything: ModuleType
) -> None:
    async with listen(http, "g", toolsListChanged=True) as stream:
        assert (await stream.next() or {}).get("method") == ACK
        await anyio.to_thread.run_sync(http.call, everything.server.end_subscriptions)
        final = await stream.next()
        assert await stream.next() is None  # then the stream closes
    assert final is not None
    assert final["id"] == "g"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUB] == "g"


@pytest.mark.parametrize("close_all", [False, True], ids=["end_subscriptions", "close_all"])
async def test_shutting_the_server_down_ends_listens_gracefully(close_all: bool) -> None:
    """``serve_http`` ends open listens as shutdown begins (``LowLevelServer.serve_http``
    passes ``end_subscriptions``): each stream gets its final result, not a cut. Its
    shutdown hook and the README's own-uvicorn recipe then call ``app.close_all()``,
    which must not cut it either ("Graceful Closure")."""
    server = Server("shutdown-test")

    @server.tool()
    async def noop() -> str:
        """Nothing."""
        return ""

    app = server.streamable_http_app()

    def on_shutdown() -> None:
        server.end_subscriptions()
        if close_all:
            app.close_all()

    with running_server(app, on_shutdown=on_shutdown) as running:
        async with listen(running, "s", toolsListChanged=True) as stream:
            assert (await stream.next() or {}).get("method") == ACK
            running.http.stop()
            final = await stream.next()
            assert await stream.next() is None
    assert final is not None
    assert final["id"] == "s"
    assert final["result"]["_meta"][SUB] == "s"


async def test_a_resource_update_reaches_each_subscriber_on_its_own_session(
    http: RunningServer,
) -> None:
    """Handshake era: session A's tool publishes an update; subscribed session B gets it on
    its GET stream, and A's answer carries nothing of B's."""
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        a, b = RawSession(client, http.url + "/mcp"), RawSession(client, http.url + "/mcp")
        await a.open()
        await b.open()
        await b.call(1, "resources/subscribe", {"uri": WATCHED})
        async with b.stream(None) as standalone:
            assert standalone.status_code == 200
            events = aiter(sse_events(standalone))
            response = await a.post(
                request(2, "tools/call", {"name": "test_watched_resource_update", "arguments": {}})
            )
            answer = messages_of(response)
            with anyio.fail_after(LIMIT):
                update = None
                while update is None:
                    event = await anext(events)
                    update = json.loads(event.data) if event.data else None
            await events.aclose()  # type: ignore[attr-defined]
    assert [m.get("method") for m in answer] == [None], (answer, response.headers)
    assert update == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": WATCHED}}
