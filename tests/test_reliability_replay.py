"""The official SDK's and FastMCP's reliability bugs (``docs/anchors.md`` in the shared
notes, section 3.1), replayed against mcpkit's Streamable HTTP client and server over real
sockets on 127.0.0.1: the scripted fake of ``tests/_fake_mcp_http.py`` where a fault must
happen at an exact point, mcpkit's own server otherwise.

What the rest of the suite already covers is not repeated here: a stream that ends or
drops without the answer (``test_http_client.py::test_request_failures_are_prompt``), a
POST-only server (every fake-server test: the fake answers GET with 405), a cancelled
request left unanswered (``test_e2e_stdio_rules.py``, ``test_http_inline_handlers.py``),
lenient reading of non-compliant results (``test_client_tolerant.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.server import RequestContext, Server
from mcpkit.transports import StreamableHTTPTransport

from ._fake_mcp_http import Exchange, FakeMCPServer, answer, sse
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

#: Bound on every test's waits.
LIMIT = 20.0

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class ConnectionCounter:
    """ASGI middleware noting the client address and port of every HTTP request: requests
    from one port came over one TCP connection."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[tuple[str, tuple[str, int]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests.append((scope["method"], tuple(scope["client"])))
        await self.app(scope, receive, send)

    def connections(self, method: str, since: int = 0) -> set[tuple[str, int]]:
        return {peer for m, peer in self.requests[since:] if m == method}


# -- 2: serial calls reuse one connection ---------------------------------------------------


def answered_then_ended_on(gate: threading.Event) -> Callable[[Exchange], Awaitable[None]]:
    """An SSE answer whose stream the server ends only once ``gate`` opens (after the
    caller got its answer): a client that closes the response at the answer loses the
    connection; one that reads to the end keeps it."""

    async def handler(ex: Exchange) -> None:
        await ex.start(200, "text/event-stream")
        await ex.body(sse(answer()(ex)), more=True)
        await anyio.to_thread.run_sync(gate.wait, LIMIT)
        await ex.body(b"")

    return handler


async def test_an_answered_stream_is_read_to_its_end_so_the_connection_is_reused() -> None:
    # python-sdk#2712: the client closed SSE answers before their end, so httpx could not
    # reuse the connection (a new TCP, or TLS, handshake per call; ~260 ms against some
    # servers). One connection in the pool: each call must wait for the previous one's.
    fake = FakeMCPServer()
    counter = ConnectionCounter(fake)
    with running_server(counter) as server, anyio.fail_after(LIMIT):
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(limits=limits) as http:
            transport = StreamableHTTPTransport(server.url + "/mcp", http_client=http)
            async with Client(transport, era="handshake") as client:
                since = len(counter.requests)
                for _ in range(5):
                    gate = threading.Event()
                    fake.script("ping", answered_then_ended_on(gate))
                    await client.ping()
                    gate.set()
                await client.ping()
    assert len(fake.requests("POST", "ping")) == 6
    assert len(counter.connections("POST", since)) == 1


def progress_server() -> Server:
    server = Server("replay", "1.0")

    @server.tool()
    async def steps(ctx: RequestContext, count: int) -> str:
        """Report ``count`` progress steps, waiting a turn between them."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
            await anyio.lowlevel.checkpoint()
        return "done"

    return server


MODES: dict[str, dict[str, Any]] = {
    "sse": {},
    "json": {"json_response": True},
    "stateless": {"stateless": True},
    "stateless-json": {"stateless": True, "json_response": True},
}


@pytest.mark.parametrize("mode", list(MODES))
async def test_serial_calls_to_mcpkit_s_server_share_one_connection(mode: str) -> None:
    counter = ConnectionCounter(progress_server().streamable_http_app(**MODES[mode]))
    with running_server(counter) as server, anyio.fail_after(LIMIT):
        async with Client(StreamableHTTPTransport(server.url + "/mcp")) as client:
            since = len(counter.requests)
            for _ in range(10):
                # Asking for progress makes the server answer on an SSE stream.
                result = await client.call_tool("steps", {"count": 2}, on_progress=print)
                assert not result.is_error
    assert len(counter.connections("POST", since)) == 1
