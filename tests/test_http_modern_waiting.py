"""2026-07-28 POSTs whose handler has to wait before answering.

The answer is JSON when the handler's response is its only message and an SSE stream once
it emits anything before it, however long it waits in between; closing that stream (or,
before it opens, the connection) cancels the request (2026-07-28
``basic/transports/streamable-http.mdx``). On asyncio the handler runs in the POST's own
task and a task of its own follows it once it waits, so the cases are driven over a real
socket on 127.0.0.1 (uvicorn), and in process on both anyio backends (where trio runs the
handler in a task of its own).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager
from typing import Any, Final, cast

import anyio
import anyio.lowlevel
import httpx
import pytest

from mcpkit.server import RequestContext, Server

from ._http_testserver import hang_until_cancelled
from ._httpserver import RunningServer, running_server
from ._leakcheck import settled, until
from ._mcphttp import JSON_HEADERS, messages_of
from ._wire import MODERN, meta

LIMIT: Final = 15.0
URL: Final = "http://127.0.0.1/mcp"
GO = threading.Event()
CANCELLED = threading.Event()


def build() -> Server:
    server = Server("modern-waiting", "1.0")

    @server.tool()
    async def later(text: str, hop: bool = False) -> str:
        """Waits (gives up its turn a few times, or for a worker thread), then answers."""
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        if hop:
            await anyio.to_thread.run_sync(lambda: None)
        return text

    @server.tool()
    async def talks_when_told(ctx: RequestContext) -> str:
        """Logs, waits until the test has read that message (so its stream is open),
        logs again and answers."""
        await anyio.lowlevel.checkpoint()
        await ctx.info("first")
        assert await anyio.to_thread.run_sync(GO.wait, LIMIT)
        await ctx.info("second")
        return "done"

    @server.tool()
    async def talks_later(ctx: RequestContext) -> str:
        """Waits, logs, waits, logs, waits, answers."""
        await anyio.lowlevel.checkpoint()
        await ctx.info("first")
        await anyio.lowlevel.checkpoint()
        await ctx.info("second")
        await anyio.lowlevel.checkpoint()
        return "done"

    @server.tool()
    async def talks_then_hangs(ctx: RequestContext) -> str:
        """Waits, logs, then waits until cancelled."""
        await anyio.lowlevel.checkpoint()
        await ctx.info("streaming")
        return await hang_until_cancelled(CANCELLED, LIMIT * 2)

    return server


def request(name: str, arguments: dict[str, Any], log_level: str | None = None) -> dict[str, Any]:
    """The content and headers of a 2026-07-28 ``tools/call`` POST."""
    params = {"name": name, "arguments": arguments, "_meta": meta(log_level=log_level)}
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    headers = {
        **JSON_HEADERS,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return {"content": json.dumps(message).encode(), "headers": headers}


def check_json(response: httpx.Response, text: str) -> None:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["content"] == [{"type": "text", "text": text}]


def check_stream(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = messages_of(response)
    assert [m.get("params", {}).get("data") for m in messages[:-1]] == ["first", "second"]
    assert messages[-1]["id"] == 7
    assert messages[-1]["result"]["content"][0]["text"] == "done"


APP: Final = build().streamable_http_app()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client's side; the server runs in its own thread (uvicorn)


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(APP) as server:
        yield server


@pytest.mark.anyio
async def test_a_handler_that_waits_then_answers_alone_gets_json(http: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        for i in range(20):
            arguments = {"text": f"{i}", "hop": i % 2 == 0}
            response = await client.post(http.url + "/mcp", **request("later", arguments))
            check_json(response, f"{i}")


@pytest.mark.anyio
async def test_messages_between_waits_make_a_stream_with_all_of_them(
    http: RunningServer,
) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        for _ in range(20):
            response = await client.post(
                http.url + "/mcp", **request("talks_later", {}, log_level="info")
            )
            check_stream(response)
        # Without logLevel nothing is emitted: the same waits end in a JSON answer.
        response = await client.post(http.url + "/mcp", **request("talks_later", {}))
        check_json(response, "done")


@asynccontextmanager
async def streamed(
    client: httpx.AsyncClient, http: RunningServer, tool: str
) -> AsyncIterator[AsyncGenerator[str, None]]:
    """Call ``tool`` (asking for info logs), expect an SSE answer and yield its lines;
    the response is closed on leaving."""
    built = client.build_request("POST", http.url + "/mcp", **request(tool, {}, log_level="info"))
    response = await client.send(built, stream=True)
    try:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = cast(AsyncGenerator[str, None], response.aiter_lines())
        async with aclosing(lines):
            yield lines
    finally:
        await response.aclose()


async def first_data(lines: AsyncGenerator[str, None]) -> Any:
    """The next SSE ``data`` line's message."""
    async for line in lines:
        if line.startswith("data:"):
            return json.loads(line[5:])
    raise AssertionError("the stream ended")


@pytest.mark.anyio
async def test_a_stream_opened_while_the_handler_waits_carries_everything_after(
    http: RunningServer,
) -> None:
    GO.clear()
    with anyio.fail_after(LIMIT):
        async with (
            httpx.AsyncClient(timeout=LIMIT) as client,
            streamed(client, http, "talks_when_told") as lines,
        ):
            assert (await first_data(lines))["params"]["data"] == "first"
            GO.set()  # the handler goes on while its stream is open
            assert (await first_data(lines))["params"]["data"] == "second"
            assert (await first_data(lines))["result"]["content"][0]["text"] == "done"
            assert [line async for line in lines if line.startswith("data:")] == []
        await until(lambda: settled(http, APP))


@pytest.mark.anyio
async def test_closing_the_stream_after_its_first_message_cancels_the_request(
    http: RunningServer,
) -> None:
    CANCELLED.clear()
    with anyio.fail_after(LIMIT):
        async with (
            httpx.AsyncClient(timeout=LIMIT) as client,
            streamed(client, http, "talks_then_hangs") as lines,
        ):
            # (then the client gives up: the response, and so the connection, is closed)
            assert (await first_data(lines))["params"]["data"] == "streaming"
        assert await anyio.to_thread.run_sync(CANCELLED.wait, LIMIT)
        await until(lambda: settled(http, APP))  # the one-request session is gone too


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_in_process_on_both_backends(backend: str) -> None:
    app = build().streamable_http_app()

    async def main() -> None:
        with anyio.fail_after(LIMIT):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
                check_json(await client.post(URL, **request("later", {"text": "x"})), "x")
                arguments = {"text": "y", "hop": True}
                check_json(await client.post(URL, **request("later", arguments)), "y")
                check_stream(await client.post(URL, **request("talks_later", {}, "info")))
                check_json(await client.post(URL, **request("talks_later", {})), "done")
            assert not app.sessionless

    anyio.run(main, backend=backend)
