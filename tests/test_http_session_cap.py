"""Streamable HTTP at its session cap, over a real socket on 127.0.0.1: a new session takes
the place of the one idle longest (``session_evict_after``), never of a busy one, so that
clients leaving without a DELETE cannot shut everyone else out for the idle timeout.
(503 below the eviction age: test_http_server_rules.py.)"""

from __future__ import annotations

import logging

import httpx
import pytest

from mcpkit.exceptions import LocalProtocolError

from ._http_testserver import build_server
from ._httpserver import running_server
from ._mcphttp import JSON_HEADERS, RawSession, initialize, request

pytestmark = pytest.mark.anyio

SERVER = build_server()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


async def _ping(session: RawSession) -> int:
    return (await session.post(request(7, "ping"))).status_code


async def test_a_new_session_replaces_the_one_idle_longest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = SERVER.streamable_http_app(max_sessions=2, session_evict_after=0)
    with running_server(app) as http, caplog.at_level(logging.INFO, "mcpkit.server.http"):
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            first, second, third = (RawSession(client, url) for _ in range(3))
            await first.open()
            await second.open()
            assert await _ping(second) == 200  # second is now the more recently active
            await third.open()  # at the cap: first, idle longest, makes room
            assert await _ping(first) == 404  # its client must start a new session
            assert await _ping(second) == 200
            assert await _ping(third) == 200
            assert len(app.sessions) == 2
    assert any(
        f"session {first.session_id} ended after" in r.getMessage()
        and "to make room for a new one (max_sessions=2)" in r.getMessage()
        for r in caplog.records
    )


async def test_a_busy_session_is_never_replaced() -> None:
    app = SERVER.streamable_http_app(max_sessions=1, session_evict_after=0)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            busy = RawSession(client, url)
            await busy.open()
            stream = busy.headers(accept="text/event-stream")
            async with client.stream("GET", url, headers=stream) as standalone:
                assert standalone.status_code == 200  # the GET stream is open: not idle
                full = await client.post(url, content=initialize(), headers=JSON_HEADERS)
                assert full.status_code == 503
                assert full.headers["retry-after"]
                assert await _ping(busy) == 200


async def test_without_eviction_the_cap_answers_503() -> None:
    app = SERVER.streamable_http_app(max_sessions=1, session_evict_after=None)
    with running_server(app) as http:
        url = http.url + "/mcp"
        async with httpx.AsyncClient() as client:
            idle = RawSession(client, url)
            await idle.open()
            full = await client.post(url, content=initialize(), headers=JSON_HEADERS)
            assert full.status_code == 503
            assert await _ping(idle) == 200


@pytest.mark.parametrize("value", [-1.0, float("nan")])
def test_the_eviction_age_is_checked(value: float) -> None:
    with pytest.raises(LocalProtocolError, match="session_evict_after"):
        SERVER.streamable_http_app(session_evict_after=value)
