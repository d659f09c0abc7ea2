"""The life of one StreamableHTTPApp object across lifespans and event loops.

Without lifespan events (a Starlette ``Mount`` does not forward them) the app starts its
background task group on the first request. That group used to be left behind, dead,
when its event loop ended (a test suite with one loop per test, an in-process restart):
every later ``initialize`` was a 500. One app served by two servers on one loop (IPv4 and
IPv6 listeners) ran two lifespans, and the first to end took every session with it.
Driven in process with httpx's ASGI transport; JSON answers (the transport buffers).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
import httpx
import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import StreamableHTTPApp

from ._http_testserver import build_server
from ._mcphttp import RawSession

URL: Final = "http://127.0.0.1/mcp"
BACKENDS: Final = ["asyncio", "trio"]


def make_app() -> StreamableHTTPApp:
    return build_server().streamable_http_app(json_response=True)


@asynccontextmanager
async def session_on(app: StreamableHTTPApp) -> AsyncIterator[RawSession]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, timeout=10) as http:
        session = RawSession(http, URL)
        await session.open()
        yield session


async def echo(session: RawSession, rid: int) -> str:
    answer = await session.call(rid, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    text: str = answer["result"]["content"][0]["text"]
    return text


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_app_serves_successive_event_loops_without_a_lifespan(backend: str) -> None:
    app = make_app()

    async def once() -> str:
        with anyio.fail_after(10):
            async with session_on(app) as session:
                return await echo(session, 2)

    assert [anyio.run(once, backend=backend) for _ in range(3)] == ["x", "x", "x"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lifespan_after_the_auto_start_leaves_the_app_working(backend: str) -> None:
    app = make_app()

    async def main() -> None:
        with anyio.fail_after(10):
            async with session_on(app) as session:  # started by the first request
                assert await echo(session, 2) == "x"
            async with app.lifespan(), session_on(app) as session:
                assert await echo(session, 2) == "x"
            async with session_on(app) as session:  # started again
                assert await echo(session, 2) == "x"

    anyio.run(main, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_lifespans_end_the_sessions_with_the_last(backend: str) -> None:
    app = make_app()

    async def main() -> None:
        with anyio.fail_after(10):
            async with app.lifespan():
                async with app.lifespan(), session_on(app) as session:
                    sid = session.session_id
                    assert sid in app.sessions
                    first = session
                    async with session_on(app) as other:
                        # the inner lifespan ends here, the outer one still runs:
                        pass
                assert sid in app.sessions
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, timeout=10) as http:
                    first.http = http
                    assert await echo(first, 3) == "x"
            assert not app.sessions  # the last lifespan ended them
            assert other.session_id not in app.sessions

    anyio.run(main, backend=backend)


def test_a_lifespan_on_a_second_event_loop_is_refused() -> None:
    app = make_app()
    running, release = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    async def hold() -> None:
        async with app.lifespan():
            running.set()
            await anyio.to_thread.run_sync(release.wait, 10)

    def first() -> None:
        anyio.run(hold)

    async def second() -> None:
        try:
            async with app.lifespan():
                outcome.append(None)
        except LocalProtocolError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert running.wait(10)
        anyio.run(second)
    finally:
        release.set()
        thread.join(10)
    assert isinstance(outcome[0], LocalProtocolError)
    assert "another event loop" in str(outcome[0])
    # The first loop's lifespan ended normally: a later loop may run the app again.
    anyio.run(second)
    assert outcome[1] is None
