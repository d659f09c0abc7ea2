"""Replays of the incumbent SDKs' session leak reports against the Streamable HTTP server,
over a real HTTP server on 127.0.0.1.

- python-sdk#3300 / #1283 (and LibreChat#14248, prowler#12235): stateful sessions that
  are never DELETEd (most clients never send one) were never freed, about 9 kB each. Here
  the app's idle timeout, set through its public constructor, ends them on its own, and
  the session table, the server's set of sessions, the tasks and streams, the stored
  events and the memory all return to their baseline.
- python-sdk#756 (and #1076, fastmcp#941): stateless mode leaked one task per request (its
  task group never exited). Here 500 stateless POSTs, and 500 2026-07-28 POSTs (which
  stand alone too), leave no task, no session and no memory behind.

Session Management: ``basic/transports.mdx`` 2025-03-26 .. 2025-11-25; 2026-07-28
``basic/transports/streamable-http.mdx`` (no session).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
import anyio.to_thread
import httpx
import pytest

from mcpkit.exceptions import ToolError
from mcpkit.server import RequestContext, Server, StreamableHTTPApp

from ._httpserver import RunningServer, running_server
from ._leakcheck import (
    OLD_HEADERS,
    back_to,
    modern_body,
    modern_headers,
    settled,
    state,
    traced,
    traced_bytes,
    until,
)
from ._mcphttp import RawSession, call, initialize, messages_of, request

pytestmark = pytest.mark.anyio

#: The idle timeout of the abandoned sessions' app (it sweeps every quarter of it).
IDLE: Final = 0.5
LIMIT: Final = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def build(started: threading.Event | None = None, release: threading.Event | None = None) -> Server:
    server = Server("leaks", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def chatty(ctx: RequestContext, text: str) -> str:
        """Logs, then answers (a streamed answer)."""
        await ctx.log("info", f"working on {text}")
        return text

    @server.tool()
    async def fail() -> str:
        """Always fails (a ToolError: an unexpected exception would be logged, and
        pytest's log capture keeps every record, which would count as a leak here)."""
        raise ToolError("broken on purpose")

    @server.tool()
    async def gated() -> str:
        """Waits for the test's gate (the server runs in a thread of its own)."""
        assert started is not None
        assert release is not None
        started.set()
        await anyio.to_thread.run_sync(release.wait, LIMIT, abandon_on_cancel=True)
        return "released"

    return server


# -- 6: sessions never DELETEd ---------------------------------------------------------------


async def abandon(url: str, count: int) -> None:
    """Open ``count`` sessions that do some work, then leave without a DELETE: some
    open the standalone GET stream and drop it. The client's connections are closed at
    the end (an idle keep-alive connection would hold server objects until uvicorn's
    keep-alive timeout)."""
    async with httpx.AsyncClient() as client:
        await abandon_with(client, url, count)


async def abandon_with(client: httpx.AsyncClient, url: str, count: int) -> None:
    for i in range(count):
        session = RawSession(client, url)
        await session.open()
        answer = await session.post(call(2, "chatty", text=f"s{i}"))
        assert messages_of(answer)[-1]["result"]["content"][0]["text"] == f"s{i}"
        if i % 3 == 0:
            async with session.stream(None) as stream:  # the GET stream, dropped at once
                assert stream.status_code == 200


async def test_sessions_never_deleted_are_freed_by_the_idle_timeout() -> None:
    # There is no injectable clock (sessions read time.monotonic): a short idle timeout
    # through the public constructor, and a bounded poll for the sessions' end.
    server = build()
    app = server.streamable_http_app(session_idle_timeout=IDLE)
    with running_server(app) as http, traced():
        url = http.url + "/mcp"
        # Traced from the start: a first round grows the server's tables (and anyio's,
        # and the event store's) to their working size; tracing it too means a table
        # reallocated later frees a traced block instead of adding one.
        await abandon(url, 100)
        await until(lambda: not http.call(lambda: len(app.sessions)))
        await until(lambda: settled(http, app))
        http.run(app.wait_ended)
        base = state(http, app, server)
        assert (*base.held, base.stored) == (0, 0, 0, 0)
        baseline = traced_bytes(http)
        with anyio.fail_after(LIMIT):
            await abandon(url, 300)
            # Not one DELETE: the idle sweep alone ends them.
            await until(lambda: not http.call(lambda: len(app.sessions)))
            await back_to(http, app, server, base)  # tasks, sessions, objects, events
        left = traced_bytes(http) - baseline
    # 9 kB per session (the reported leak) would leave 2.7 MB; the bound catches 900
    # bytes per session. What remains is hash-table capacity and caches, not sessions.
    assert left < 256 * 1024, left


# -- 7: POSTs that stand alone ----------------------------------------------------------------


StandAlone = Callable[[httpx.AsyncClient, str, int], Awaitable[None]]


async def stateless_posts(client: httpx.AsyncClient, url: str, count: int) -> None:
    """Handshake-era POSTs to a stateless app: initialize, a plain and a streamed answer,
    a tool error, a JSON-RPC error."""
    kinds: Final = [
        initialize(),
        call(2, "echo", text="x"),
        call(3, "chatty", text="y"),
        call(4, "fail"),
        request(5, "no/such/method"),
    ]
    for i in range(count):
        answer = await client.post(url, content=kinds[i % len(kinds)], headers=OLD_HEADERS)
        assert answer.status_code == 200, answer.text


async def modern_posts(client: httpx.AsyncClient, url: str, count: int) -> None:
    """2026-07-28 POSTs (no session) to a stateful app: the same mix."""
    kinds: Final = [
        ("tools/list", None, {}),
        ("tools/call", "echo", {"name": "echo", "arguments": {"text": "x"}}),
        ("tools/call", "chatty", {"name": "chatty", "arguments": {"text": "y"}}),
        ("tools/call", "fail", {"name": "fail", "arguments": {}}),
        ("tools/call", "nope", {"name": "nope", "arguments": {}}),
    ]
    for i in range(count):
        method, name, params = kinds[i % len(kinds)]
        answer = await client.post(
            url, content=modern_body(i, method, params), headers=modern_headers(method, name)
        )
        assert answer.status_code in (200, 400, 404), answer.text


@pytest.mark.parametrize(
    ("stateless", "posts"),
    [(True, stateless_posts), (False, modern_posts)],
    ids=["stateless", "2026-07-28"],
)
async def test_requests_standing_alone_leave_no_task_session_or_memory(
    stateless: bool, posts: StandAlone
) -> None:
    started, release = threading.Event(), threading.Event()
    server = build(started, release)
    app = server.streamable_http_app(stateless=stateless)
    with running_server(app) as http, traced():
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:  # (closed: see abandon())
            await posts(client, url, 100)  # warm-up (see the test above)
            await while_one_runs(http, app, server, client, url, stateless, started, release)
        await until(lambda: settled(http, app))
        http.run(app.wait_ended)
        base = state(http, app, server)
        assert base.held == (0, 0, 0)
        baseline = traced_bytes(http)
        with anyio.fail_after(LIMIT):
            async with httpx.AsyncClient() as client:
                await posts(client, url, 500)
            await back_to(http, app, server, base)  # tasks, sessions, objects
        left = traced_bytes(http) - baseline
    # One task per request (the reported leak) would keep 500 of them, about 1 KiB each
    # with its coroutine: 500 KiB; the bound catches 260 bytes per request.
    assert left < 128 * 1024, left


async def while_one_runs(
    http: RunningServer,
    app: StreamableHTTPApp,
    server: Server,
    client: httpx.AsyncClient,
    url: str,
    stateless: bool,
    started: threading.Event,
    release: threading.Event,
) -> None:
    """While a request standing alone runs, its one-POST session is in the server's set
    of sessions (notifications to every session reach it) and the app's; it is in
    neither once its POST is answered."""
    if stateless:
        content, headers = call(9, "gated"), OLD_HEADERS
    else:
        content = modern_body(9, "tools/call", {"name": "gated", "arguments": {}})
        headers = modern_headers("tools/call", "gated")
    async with anyio.create_task_group() as group:

        async def post() -> None:
            answer = await client.post(url, content=content, headers=headers, timeout=LIMIT)
            assert answer.status_code == 200, answer.text

        group.start_soon(post)
        assert await anyio.to_thread.run_sync(started.wait, LIMIT)
        now = state(http, app, server)
        assert now.held == (0, 1, 1)
        release.set()
    # (The POST's end follows its answer a little later, on the server's loop.)
    await until(lambda: state(http, app, server).held == (0, 0, 0))
