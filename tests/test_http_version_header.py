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


# -- the whole table: every method, with and without a session, stateful and stateless ----

#: (id, stateless, method, session, MCP-Protocol-Version, expected status). ``session``:
#: "live" (a session negotiated at 2025-11-25), "unknown" (an id never issued), "none".
#: An unknown session is 404 whatever its version says: the session is looked up before
#: its headers are judged, on every method (spec 2025-11-25 basic/transports#session-
#: management: a request with an id the server does not know MUST get 404, upon which the
#: client starts a new session, and with it negotiates a version again). A stateless app
#: has no GET stream and no sessions to end: 405 comes first there.
TABLE: list[tuple[str, bool, str, str, str, int]] = [
    ("POST live bogus", False, "POST", "live", "1999-01-01", 400),
    ("POST live not negotiated", False, "POST", "live", "2025-06-18", 400),
    ("POST none bogus", False, "POST", "none", "1999-01-01", 400),
    ("POST unknown bogus", False, "POST", "unknown", "1999-01-01", 404),
    ("GET live bogus", False, "GET", "live", "1999-01-01", 400),
    ("GET unknown bogus", False, "GET", "unknown", "1999-01-01", 404),
    ("DELETE live bogus", False, "DELETE", "live", "1999-01-01", 400),
    ("DELETE unknown bogus", False, "DELETE", "unknown", "1999-01-01", 404),
    ("DELETE live valid", False, "DELETE", "live", "2025-11-25", 204),
    ("stateless POST none bogus", True, "POST", "none", "1999-01-01", 400),
    ("stateless POST unknown bogus", True, "POST", "unknown", "1999-01-01", 400),
    ("stateless GET bogus", True, "GET", "none", "1999-01-01", 405),
    ("stateless DELETE bogus", True, "DELETE", "unknown", "1999-01-01", 405),
]


@pytest.mark.parametrize(
    ("stateless_app", "method", "session_kind", "version", "status"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
async def test_version_header_table(
    stateful: RunningServer,
    stateless: RunningServer,
    stateless_app: bool,
    method: str,
    session_kind: str,
    version: str,
    status: int,
) -> None:
    url = (stateless if stateless_app else stateful).url + "/mcp"
    async with httpx.AsyncClient() as client:
        headers = {**JSON_HEADERS, "mcp-protocol-version": version}
        session = RawSession(client, url)
        if session_kind == "live":
            await session.open()
            headers = session.headers(mcp_protocol_version=version)
        elif session_kind == "unknown":
            headers["mcp-session-id"] = "no-such-session"
        if method == "GET":
            headers["accept"] = "text/event-stream"
        content = request(7, "ping") if method == "POST" else None
        response = await client.request(method, url, content=content, headers=headers)
        assert response.status_code == status, response.text
        if status == 400 and version == "1999-01-01":
            assert_unsupported(response, version)  # never a 2026-07-28 answer (-32020)
        if session_kind == "live" and status != 204:
            # A refused request leaves the session as it was.
            assert (await session.call(8, "ping"))["result"] == {}
