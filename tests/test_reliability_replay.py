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

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import anyio.lowlevel
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import MessageNotDelivered
from mcpkit.server import RequestContext, Server
from mcpkit.transports import StreamableHTTPTransport
from mcpkit.types import ProgressNotificationParams

from ._fake_mcp_http import DropConnection, Exchange, FakeMCPServer, answer, reply, sse
from ._http_testserver import Gates
from ._httpserver import running_server
from .test_http_client import peer, shared_peer

__all__ = ["peer", "shared_peer"]  # fixtures, shared with test_http_client

pytestmark = pytest.mark.anyio

#: Bound on every test's waits.
LIMIT = 20.0

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class ConnectionCounter:
    """ASGI middleware noting, for every HTTP request, its method, the client's address and
    port (requests from one port came over one TCP connection) and the content type of
    the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[tuple[str, tuple[str, int]]] = []
        self.content_types: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        self.requests.append((method, tuple(scope["client"])))

        async def noting(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                kind = headers.get(b"content-type", b"").decode()
                self.content_types.append((method, kind))
            await send(message)

        await self.app(scope, receive, noting)

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


def progress_server(gates: Gates | None = None) -> Server:
    server = Server("replay", "1.0")

    @server.tool()
    async def steps(ctx: RequestContext, count: int, wait: bool = False) -> str:
        """Report ``count`` progress steps; with ``wait``, each once the client got the
        previous one (gate ``step-<n>``), so that none can arrive after the answer."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count)
            if wait and gates is not None:
                await gates.wait(f"step-{step}")
            else:
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


# -- 15: progress on every Streamable HTTP mode ---------------------------------------------


@pytest.mark.parametrize(
    ("mode", "era", "arrives", "post_answer"),
    [
        ("sse", "handshake", True, "text/event-stream"),
        # Documented: the notifications go on the session's GET stream.
        ("json", "handshake", True, "application/json"),
        ("stateless", "handshake", True, "text/event-stream"),
        # Documented: no GET stream, so they have nowhere to go; the call is unharmed.
        ("stateless-json", "handshake", False, "application/json"),
        # 2026-07-28 requests stand alone and stream their notifications in every mode.
        ("json", "2026-07-28", True, "text/event-stream"),
        ("stateless-json", "2026-07-28", True, "text/event-stream"),
    ],
)
async def test_progress_reaches_the_caller_in_every_mode_that_can_carry_it(
    mode: str,
    era: Literal["handshake", "2026-07-28"],
    arrives: bool,
    post_answer: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # python-sdk#2001, #953: progress silently dropped on Streamable HTTP and stateless.
    gates = Gates()
    counter = ConnectionCounter(progress_server(gates).streamable_http_app(**MODES[mode]))
    seen: list[float] = []

    def on_progress(params: ProgressNotificationParams) -> None:
        seen.append(params.progress)
        gates.open(f"step-{len(seen)}")

    with running_server(counter) as server, anyio.fail_after(LIMIT):
        async with Client(StreamableHTTPTransport(server.url + "/mcp"), era=era) as client:
            since = len(counter.content_types)
            result = await client.call_tool(
                "steps", {"count": 3, "wait": arrives}, on_progress=on_progress
            )
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert seen == ([1, 2, 3] if arrives else [])
    assert ("POST", post_answer) in counter.content_types[since:]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


# -- 13: HTTP errors reach the caller, naming the status ------------------------------------

STATUSES = [400, 401, 403, 405, 406, 413, 415, 429, 500, 502, 503, 504]
BODIES: dict[str, tuple[bytes, str | None]] = {
    "html": (b"<html><body><h1>Bad Gateway</h1></body></html>", "text/html"),
    "empty": (b"", None),
}


@pytest.mark.parametrize("body", list(BODIES))
@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("stage", ["initialize", "notifications/initialized", "tools/list"])
async def test_an_http_error_anywhere_fails_its_caller_at_once_naming_the_status(
    peer: tuple[FakeMCPServer, str], stage: str, status: int, body: str
) -> None:
    # python-sdk#1010, fastmcp#2595: 4xx/5xx swallowed, the caller waited for ever.
    fake, url = peer
    payload, content_type = BODIES[body]
    fake.script(stage, reply(status, payload, content_type=content_type))
    with anyio.fail_after(LIMIT):
        transport = StreamableHTTPTransport(url)
        with pytest.raises(MessageNotDelivered) as info:
            async with Client(transport, era="handshake", timeout=3600) as client:
                await client.list_tools()
    assert info.value.status == status
    assert f"HTTP {status}" in str(info.value)


async def truncated_json(ex: Exchange) -> None:
    """A JSON answer that promises 200 bytes and is cut off after 20."""
    await ex.start(200, "application/json", [("content-length", "200")])
    await ex.body(answer()(ex)[:20], more=True)
    raise DropConnection


async def test_a_json_answer_cut_off_mid_body_fails_its_call_at_once(
    peer: tuple[FakeMCPServer, str],
) -> None:
    fake, url = peer
    fake.script("tools/list", truncated_json)
    with anyio.fail_after(LIMIT):
        transport = StreamableHTTPTransport(url)
        async with Client(transport, era="handshake", timeout=3600) as client:
            with pytest.raises(MessageNotDelivered, match="failed"):
                await client.list_tools()
            await client.ping()  # that call's failure, not the session's


async def test_a_failing_get_stream_leaves_the_session_working(
    peer: tuple[FakeMCPServer, str],
) -> None:
    # python-sdk#1941: against a server refusing GET (405) the background task died and a
    # race hung the client. 405 is what every other test's fake answers; here the GET
    # fails otherwise, until the client gives the stream up; calls go on all along.
    fake, url = peer
    fake.script(
        "GET",
        reply(500, BODIES["html"][0], content_type="text/html"),
        reply(200, b"{}"),  # not an SSE stream
    )
    with anyio.fail_after(LIMIT):
        transport = StreamableHTTPTransport(url, reconnect_initial=0.01, reconnect_max=0.05)
        async with Client(transport, era="handshake") as client:
            await client.ping()
            await fake.wait_seen("GET", count=2)
            await client.ping()
