"""Hostile clients against the HTTP server apps over a real socket on 127.0.0.1: resume
positions a session never gave out, the session cap meeting the idle timeout, and clients
of the legacy HTTP+SSE and WebSocket apps leaving by the hundred, half of them mid-call.
Each gets the right status and error, other sessions are unharmed, and what a client held
is freed (``basic/transports.mdx`` 2025-11-25: "Resumability and Redelivery", "Session
Management"; 2024-11-05 for HTTP+SSE; ``docs/websocket.md``)."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
import anyio.to_thread
import httpx
import pytest

from mcpkit.server import LowLevelServer, SSEApp, WebSocketApp

from ._httpserver import RunningServer, running_server
from ._leakcheck import mcpkit_objects, until
from ._mcphttp import JSON_HEADERS, RawSession, call, events, initialize, request
from ._wsraw import raw
from .test_http_sse_legacy import INITIALIZE, INITIALIZED, blocking_server, raw_stream
from .test_http_sse_legacy import request as legacy_request
from .test_leaks_outcomes import leaky_server, settled

pytestmark = pytest.mark.anyio

LIMIT: Final = 60.0
ROUNDS: Final = 100  # clients of each app, half of them leaving mid-call


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


# -- Streamable HTTP: resumption ---------------------------------------------------------------

#: Last-Event-ID values that name no event of the session (its first POST stream is "1").
CRAFTED: Final = [
    "9_1",  # a stream it never had
    "0_1",  # the GET stream, never opened: nothing was stored
    "1_" + "9" * 18,  # past the stream's last event
    "1_" + "9" * 40,  # no number the store could have made
    "1_-1",
    "1_",
    "_1",
    "1_1_1",
    "x" * 8000,
]


async def test_resume_positions_the_session_never_gave_are_refused() -> None:
    started, release = threading.Event(), threading.Event()
    app = leaky_server(started, release).streamable_http_app()
    with running_server(app) as http, anyio.fail_after(LIMIT):
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            alice, bob = RawSession(client, url), RawSession(client, url)
            await alice.open()
            await bob.open()
            async with alice.stream(call(2, "gated")) as response:
                first = await anext(aiter(events(response)))  # the priming event
            assert first.id is not None
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            release.set()
            await until(lambda: settled(http, app))
            refused = [(bob, first.id)] + [(alice, crafted) for crafted in CRAFTED]
            for session, last in refused:
                async with session.stream(None, last_event_id=last) as answer:
                    assert answer.status_code == 400, last
                    assert (await answer.aread()).count(b'"code":-32600') == 1, last
            # Nothing was harmed: the stream resumes, twice at once (each gets the
            # answer: the client asked twice), and the other session works.
            async with (
                alice.stream(None, last_event_id=first.id) as one,
                alice.stream(None, last_event_id=first.id) as two,
            ):
                for resumed in (one, two):
                    assert resumed.status_code == 200
                    assert b'"text":"released"' in await resumed.aread()
            assert (await bob.call(3, "ping"))["result"] == {}
            # Once the session is gone, so is every stream of it.
            assert (await client.delete(url, headers=alice.headers())).status_code == 204
            async with alice.stream(None, last_event_id=first.id) as gone:
                assert gone.status_code == 404
            http.run(app.wait_ended)
            assert http.call(lambda: len(app.event_store)) == 0  # type: ignore[arg-type]


# -- Streamable HTTP: the session cap and the idle timeout ---------------------------------------


async def test_at_the_cap_expired_sessions_make_room_and_busy_ones_are_kept() -> None:
    started, release = threading.Event(), threading.Event()
    app = leaky_server(started, release).streamable_http_app(
        max_sessions=2, session_idle_timeout=3600
    )
    with running_server(app) as http, anyio.fail_after(LIMIT):
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client, anyio.create_task_group() as group:
            idle, busy = RawSession(client, url), RawSession(client, url)
            await idle.open()
            await busy.open()
            answers: list[dict[str, Any]] = []

            async def running_call() -> None:
                answers.append(await busy.call(2, "tools/call", {"name": "gated"}))

            group.start_soon(running_call)
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            # Both sessions are past the timeout now: at the cap, the one without a call
            # expires to make room, the one with a call in flight stays.
            http.call(lambda: setattr(app, "session_idle_timeout", 0.0))
            newcomer = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            assert newcomer.status_code == 200, newcomer.text
            assert (await idle.post(request(3, "ping"))).status_code == 404
            assert http.call(lambda: busy.session_id in app.sessions)
            http.call(lambda: setattr(app, "session_idle_timeout", 3600))
            full = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            assert full.status_code == 503
            assert full.json()["error"]["code"] == -32000
            assert full.headers["retry-after"]
            release.set()  # the busy session's call was never cut short
        assert answers[0]["result"]["content"][0]["text"] == "released"


# -- HTTP+SSE and WebSocket: clients leaving by the hundred ------------------------------------


async def legacy_client(http: RunningServer, mid_call: bool, started: threading.Event) -> str:
    """One legacy HTTP+SSE session, left (its GET closed) idle or mid-call; returns its
    message endpoint."""
    async with raw_stream(http.url) as stream:
        assert (await stream.post(INITIALIZE)).status_code == 202
        assert (await stream.next_message())["id"] == 1
        assert (await stream.post(INITIALIZED)).status_code == 202
        if mid_call:
            block = legacy_request(2, "tools/call", {"name": "block", "arguments": {}})
            assert (await stream.post(block)).status_code == 202
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            started.clear()
    return stream.endpoint


async def ws_client(http: RunningServer, mid_call: bool, started: threading.Event) -> str:
    """One WebSocket session, left (the TCP connection dropped) idle or mid-call."""
    async with raw(http.port) as socket:
        assert socket.status == 101
        await socket.send(INITIALIZE)
        assert (await socket.message())["id"] == 1
        await socket.send(INITIALIZED)
        if mid_call:
            await socket.send(legacy_request(2, "tools/call", {"name": "block", "arguments": {}}))
            await anyio.to_thread.run_sync(started.wait, abandon_on_cancel=True)
            started.clear()
    return ""


Client = Callable[[RunningServer, bool, threading.Event], Awaitable[str]]


@pytest.mark.parametrize(
    ("make", "client"), [(SSEApp, legacy_client), (WebSocketApp, ws_client)], ids=["sse", "ws"]
)
async def test_clients_leaving_mid_call_leave_nothing_behind(
    make: Callable[[LowLevelServer], SSEApp | WebSocketApp], client: Client
) -> None:
    started, cancelled = threading.Event(), threading.Event()
    server = blocking_server(started, cancelled)
    app = make(server)

    def held() -> tuple[int, int, Counter[str]]:  # tasks, sessions, mcpkit objects
        return len(asyncio.all_tasks()), len(server.sessions), mcpkit_objects()

    with running_server(app) as http, anyio.fail_after(LIMIT):
        tasks = http.call(held)[0]  # no client yet
        for i in range(10):  # warm-up: tables and caches at their working size
            await client(http, i % 2 == 1, started)
        await until(lambda: http.call(held)[:2] == (tasks, 0))
        baseline = http.call(held)
        for i in range(ROUNDS):
            endpoint = await client(http, i % 2 == 1, started)
        now = [baseline]

        def back() -> bool:  # (objects of other tests may go meanwhile: none may come)
            now[0] = http.call(held)
            return now[0][:2] == baseline[:2] and not now[0][2] - baseline[2]

        try:
            await until(back)
        except TimeoutError:
            tasks, sessions, objects = now[0]
            gained = objects - baseline[2]
            raise AssertionError(f"{tasks=} {sessions=} {baseline[:2]=} {gained=}") from None
        if endpoint:  # the legacy session is gone for its POSTs too
            async with httpx.AsyncClient() as other:
                late = await other.post(http.url + endpoint, content=INITIALIZE, headers=JSON)
            assert late.status_code == 404


JSON: Final = {"content-type": "application/json"}
