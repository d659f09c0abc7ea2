"""Streamable HTTP: the ``MCP-Protocol-Version`` header on every method (2025-06-18+,
``basic/transports.mdx`` "Protocol Version Header"), on a server that also serves the
stateless 2026-07-28 revision. An unsupported value is a 400 that names the supported
versions, never routed as a 2026-07-28 request; an unknown session is 404 first (the
session is looked up before its headers are judged, as for every session request)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, RawSession, request

pytestmark = pytest.mark.anyio

SERVER = build_server()
BOGUS = ["1999-01-01", "2025-13-45", "latest", ""]


@pytest.fixture(scope="module")
def stateful() -> Iterator[RunningServer]:
    assert SERVER.modern_versions, "the point: a server that also serves 2026-07-28"
    with running_server(SERVER.streamable_http_app()) as server:
        yield server


@pytest.fixture(scope="module")
def stateless() -> Iterator[RunningServer]:
    with running_server(SERVER.streamable_http_app(stateless=True)) as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def assert_unsupported(response: httpx.Response, value: str) -> None:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == -32600, error
    assert f"unsupported MCP-Protocol-Version {value!r}" in error["message"], error
    assert "2025-11-25" in error["message"], error


@pytest.mark.parametrize("value", BOGUS)
async def test_post_with_an_unsupported_version(stateful: RunningServer, value: str) -> None:
    url = stateful.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        # In a session.
        assert_unsupported(
            await session.post(request(2, "ping"), mcp_protocol_version=value), value
        )
        # Without a session (what would otherwise start one).
        headers = {**JSON_HEADERS, "mcp-protocol-version": value}
        fresh = await client.post(url, content=request(3, "ping"), headers=headers)
        assert_unsupported(fresh, value)
        # An unknown session: 404, whatever the version says.
        headers["mcp-session-id"] = "no-such-session"
        unknown = await client.post(url, content=request(4, "ping"), headers=headers)
        assert unknown.status_code == 404, unknown.text
        # The session is unharmed.
        assert (await session.call(5, "ping"))["result"] == {}


@pytest.mark.parametrize("value", BOGUS)
async def test_stateless_post_with_an_unsupported_version(
    stateless: RunningServer, value: str
) -> None:
    headers = {**JSON_HEADERS, "mcp-protocol-version": value}
    async with httpx.AsyncClient() as client:
        response = await client.post(
            stateless.url + "/mcp", content=request(1, "ping"), headers=headers
        )
    assert_unsupported(response, value)


@pytest.mark.parametrize("value", [*BOGUS, "2025-06-18"])
async def test_delete_with_a_bad_version_keeps_the_session(
    stateful: RunningServer, value: str
) -> None:
    url = stateful.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()  # negotiates 2025-11-25
        refused = await client.delete(url, headers=session.headers(mcp_protocol_version=value))
        assert refused.status_code == 400, refused.text
        assert (await session.call(2, "ping"))["result"] == {}
        ended = await client.delete(url, headers=session.headers())
        assert ended.status_code == 204
        gone = await session.post(request(3, "ping"))
        assert gone.status_code == 404
