"""mcpkit's HTTP apps are plain ASGI: the same apps served by hypercorn on trio (not the
built-in uvicorn runner, not asyncio) work end to end over real sockets on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from typing import Any, Final

import anyio
import httpx
import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from mcpkit.client import Client
from mcpkit.server._http_apps import app_for
from mcpkit.types import TextContent

from ._http_testserver import build_server
from ._mcphttp import JSON_HEADERS, RawSession, initialize, messages_of, request
from .conftest import needs_websocket_client

pytestmark = pytest.mark.anyio

THREAD_TIMEOUT: Final = 10.0
TIMEOUT: Final = 10.0


@pytest.fixture
def hypercorn_apps() -> Iterator[dict[str, str]]:
    """One hypercorn server (on trio, in its own thread) per mcpkit transport app."""
    server = build_server()
    stop = threading.Event()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def wait_stop() -> None:
        await trio.to_thread.run_sync(stop.wait, abandon_on_cancel=True)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            urls = {}
            for transport in ("http", "sse", "ws"):
                config = Config()
                config.bind = ["127.0.0.1:0"]
                config.accesslog = None
                config.errorlog = None
                app = app_for(server, transport)
                binds = await nursery.start(
                    partial(serve, app, config, shutdown_trigger=wait_stop)  # type: ignore[arg-type]
                )
                urls[transport] = binds[0]
            box["urls"] = urls
            ready.set()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:
            box["error"] = exc
            ready.set()

    thread = threading.Thread(target=run, name="hypercorn-trio", daemon=True)
    thread.start()
    assert ready.wait(THREAD_TIMEOUT), "hypercorn did not start"
    if "error" in box:
        raise box["error"]
    try:
        yield box["urls"]
    finally:
        stop.set()
        thread.join(THREAD_TIMEOUT)
        assert not thread.is_alive(), "hypercorn did not stop"
        assert "error" not in box, box.get("error")


async def test_streamable_http_under_hypercorn_on_trio(hypercorn_apps: dict[str, str]) -> None:
    url = hypercorn_apps["http"] + "/mcp"
    with anyio.fail_after(TIMEOUT):
        async with Client(url, era="handshake") as client:
            assert client.protocol_version == "2025-11-25"
            result = await client.call_tool("echo", {"text": "over hypercorn"})
            assert result.content == [TextContent(text="over hypercorn")]
            seen: list[float] = []
            progressed = await client.call_tool(
                "progress", on_progress=lambda params: seen.append(params.progress)
            )
            assert progressed.content == [TextContent(text="progressed")]
            assert seen == [1, 2, 3]
        async with httpx.AsyncClient(timeout=TIMEOUT) as raw:
            session = RawSession(raw, url)
            await session.open()
            answer = await session.post(request(2, "tools/call", {"name": "nope"}))
            assert messages_of(answer)[-1]["error"]["code"] == -32602
            # The 2026-07-28 path on the same endpoint: one POST, no session.
            modern = {
                "name": "echo",
                "arguments": {"text": "modern"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            reply = await raw.post(
                url,
                content=request(3, "tools/call", modern),
                headers={
                    **JSON_HEADERS,
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": "echo",
                },
            )
            assert reply.status_code == 200, reply.text
            assert reply.json()["result"]["resultType"] == "complete"
            # DNS rebinding protection does not depend on the server either.
            evil = await raw.post(
                url, content=initialize(), headers={**JSON_HEADERS, "host": "evil.example.com"}
            )
            assert evil.status_code == 421


@pytest.mark.parametrize("transport", ["sse", "ws"])
async def test_legacy_sse_and_websocket_under_hypercorn(
    hypercorn_apps: dict[str, str], transport: str, anyio_backend: str
) -> None:
    if transport == "ws":
        needs_websocket_client(anyio_backend)
    base = hypercorn_apps[transport]
    url = base + "/sse" if transport == "sse" else base.replace("http://", "ws://") + "/ws"
    with anyio.fail_after(TIMEOUT):
        async with Client(url) as client:
            result = await client.call_tool("echo", {"text": transport})
            assert result.content == [TextContent(text=transport)]
