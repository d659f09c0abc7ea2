"""mcpkit's ASGI apps inside a Starlette application, served by uvicorn on 127.0.0.1:
Streamable HTTP mounted at ``/api`` (MCP at ``/api/mcp``) and the legacy HTTP+SSE app
mounted at ``/legacy`` side by side with an ordinary route; each is reached only under
its prefix, and the SSE endpoint event names the prefixed message path, which works.
Everything again behind a ``BaseHTTPMiddleware`` (what FastAPI's ``@app.middleware``
and most auth and logging middlewares are): its ``receive`` opens a task group, which
the body reader's first step used to leave out of order (every POST answered 500)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route

from mcpkit.server import SSEApp, StreamableHTTPApp

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, RawSession, call, initialize, notification, request

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


async def health(_: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


class Passthrough(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        return await call_next(request)


class Apps:
    def __init__(self, middleware: bool) -> None:
        self.mcp: StreamableHTTPApp = build_server().streamable_http_app()
        self.sse = SSEApp(build_server())
        self.starlette = Starlette(
            routes=[
                Route("/health", health),
                Mount("/api", app=self.mcp),
                Mount("/legacy", app=self.sse),
            ],
            lifespan=self.mcp.lifespan,
            middleware=[Middleware(Passthrough)] if middleware else [],
        )


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "behind-middleware"])
def apps(request: pytest.FixtureRequest) -> Apps:
    return Apps(middleware=request.param)


@pytest.fixture(scope="module")
def http(apps: Apps) -> Iterator[RunningServer]:
    with running_server(apps.starlette) as server:
        yield server


async def test_the_ordinary_route_is_served_beside_the_mounts(http: RunningServer) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        response = await client.get(http.url + "/health")
    assert (response.status_code, response.text) == (200, "ok")


async def test_streamable_http_at_api_mcp(http: RunningServer, apps: Apps) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        session = RawSession(client, http.url + "/api/mcp")
        answer = await session.open()
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        sid = session.session_id
        assert sid is not None
        assert http.call(lambda: sid in apps.mcp.sessions)
        echoed = await session.call(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert echoed["result"]["content"][0]["text"] == "hi"
        # A streamed answer comes through the mount as well.
        streamed = await session.post(
            request(
                3,
                "tools/call",
                {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}},
            )
        )
        assert streamed.headers["content-type"] == "text/event-stream"
        assert b'"id":3' in streamed.content
        # Only under the prefix, and only at the app's path below it.
        for path in ("/mcp", "/api/other", "/legacy/mcp"):
            stray = await client.post(http.url + path, content=initialize(), headers=JSON_HEADERS)
            assert stray.status_code == 404, (path, stray.text)
        deleted = await client.delete(session.url, headers=session.headers())
        assert deleted.status_code == 204
        assert http.call(lambda: sid in apps.mcp.sessions) is False


async def next_event(lines: Any) -> tuple[str, str]:
    kind, data = "message", ""
    while True:
        line = await anext(lines)
        if line == "":
            if data:
                return kind, data
            continue
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()


async def test_legacy_sse_at_legacy_sse(http: RunningServer, apps: Apps) -> None:
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        unprefixed = await client.get(http.url + "/sse", headers={"accept": "text/event-stream"})
        assert unprefixed.status_code == 404
        async with client.stream(
            "GET", http.url + "/legacy/sse", headers={"accept": "text/event-stream"}
        ) as stream:
            assert stream.status_code == 200
            lines = aiter(stream.aiter_lines())
            with anyio.fail_after(TIMEOUT):
                kind, endpoint = await next_event(lines)
                assert kind == "endpoint"
                path, _, query = endpoint.partition("?")
                assert path == "/legacy/messages"
                session_id = query.removeprefix("session_id=")
                assert http.call(lambda: session_id in apps.sse.sessions)
                for body in (
                    initialize(),
                    notification("notifications/initialized"),
                    call(2, "echo", text="through the mount"),
                ):
                    posted = await client.post(
                        http.url + endpoint, content=body, headers=JSON_HEADERS
                    )
                    assert posted.status_code == 202, posted.text
                answers = [json.loads((await next_event(lines))[1]) for _ in range(2)]
            assert [a["id"] for a in answers] == [1, 2]
            assert answers[1]["result"]["content"][0]["text"] == "through the mount"
        # The unprefixed message path is not served.
        stray = await client.post(
            http.url + "/messages?" + query, content=request(3, "ping"), headers=JSON_HEADERS
        )
        assert stray.status_code == 404
