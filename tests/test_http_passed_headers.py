"""Streamable HTTP server: POSTs whose header values already passed every check.

The app remembers a set of Host, Origin, Content-Type, Accept and MCP-Protocol-Version
values once a POST carrying them passed every check that depends on them alone, and a
later POST with the same values skips those checks. Everything that is not part of those
values (the session, the path, duplicated headers, the body) must still be checked: each
probe here is sent right after a POST with the very same values succeeded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, RawSession, initialize, messages_of, request

pytestmark = pytest.mark.anyio

SERVER = build_server()
LIMIT = 4096


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    app = SERVER.streamable_http_app(max_body_bytes=LIMIT, json_response=True)
    with running_server(app) as server:
        yield server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def _ping(rid: int = 7) -> bytes:
    return request(rid, "ping")


# (name, how the probe differs from the warm POST, body, expected status)
PROBES: list[tuple[str, dict[str, Any], bytes, int]] = [
    ("unknown session", {"mcp-session-id": "0" * 32}, _ping(), 404),
    ("malformed session", {"mcp-session-id": "has space"}, _ping(), 400),
    ("no session, not initialize", {"mcp-session-id": None}, _ping(), 400),
    ("wrong path", {"path": "/other"}, _ping(), 404),
    ("duplicated session header", {"duplicate": "mcp-session-id"}, _ping(), 400),
    ("body over the limit", {}, request(7, "ping", {"pad": "x" * LIMIT}), 413),
    ("invalid JSON", {}, b'{"jsonrpc": "2.0", "id": 7,', 400),
]


def _probe_request(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    change: dict[str, Any],
    body: bytes,
) -> httpx.Request:
    hdrs = dict(headers)
    for name, value in change.items():
        if name in ("path", "duplicate"):
            continue
        if value is None:
            hdrs.pop(name, None)
        else:
            hdrs[name] = value
    pairs = list(hdrs.items())
    if "duplicate" in change:
        name = change["duplicate"]
        pairs.append((name, hdrs[name]))
    if "path" in change:
        url = url.rsplit("/", 1)[0] + change["path"]
    return client.build_request("POST", url, content=body, headers=pairs)


@pytest.mark.parametrize(
    ("change", "body", "status"), [p[1:] for p in PROBES], ids=[p[0] for p in PROBES]
)
async def test_checks_beyond_the_remembered_values_still_apply(
    http: RunningServer, change: dict[str, Any], body: bytes, status: int
) -> None:
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        assert (await session.call(1, "ping"))["result"] == {}  # these values passed
        probe = _probe_request(client, url, session.headers(), change, body)
        response = await client.send(probe)
        assert response.status_code == status, response.text
        # The session is unharmed.
        assert (await session.call(2, "ping"))["result"] == {}


async def test_a_duplicated_host_header_is_still_refused(http: RunningServer) -> None:
    """Two Host headers (an HTTP client cannot send them, so the request is written by
    hand): 400 (RFC 9112 section 3.2), although each carries the remembered value, and the
    operator is not told to allow a name that is allowed."""
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        assert (await session.call(1, "ping"))["result"] == {}
        host = f"127.0.0.1:{http.port}"
        body = _ping()
        head = ["POST /mcp HTTP/1.1", f"Host: {host}", f"Host: {host}"]
        head += [f"{name}: {value}" for name, value in session.headers().items()]
        head += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
        with anyio.fail_after(10):
            stream = await anyio.connect_tcp("127.0.0.1", http.port)
            async with stream:
                await stream.send("\r\n".join(head).encode() + body)
                answer = b""
                with contextlib.suppress(anyio.EndOfStream):
                    while True:
                        answer += await stream.receive()
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b"more than one Host header" in answer, answer
        assert (await session.call(2, "ping"))["result"] == {}


async def test_a_session_of_another_version_is_still_refused(http: RunningServer) -> None:
    """The same header values, sent to a session that negotiated another version: 400
    (basic/transports.mdx 2025-06-18, "Protocol Version Header")."""
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        new = RawSession(client, url)
        await new.open("2025-11-25")
        assert (await new.call(1, "ping"))["result"] == {}
        old = RawSession(client, url)
        await old.open("2025-06-18")
        response = await client.post(
            url,
            content=_ping(),
            headers={**new.headers(), "mcp-session-id": old.session_id or ""},
        )
        assert response.status_code == 400, response.text
        assert "does not match the negotiated version" in response.json()["error"]["message"]
        assert (await old.call(2, "ping"))["result"] == {}


async def test_an_ended_session_is_still_gone(http: RunningServer) -> None:
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        assert (await session.call(1, "ping"))["result"] == {}
        deleted = await client.delete(url, headers=session.headers())
        assert deleted.status_code == 204
        response = await session.post(_ping())
        assert response.status_code == 404, response.text


async def test_initialize_with_remembered_values_starts_a_session(http: RunningServer) -> None:
    """A client that sends MCP-Protocol-Version with its initialize too: the remembered
    values lead to a new session, not to "session required"."""
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        assert (await session.call(1, "ping"))["result"] == {}
        headers = session.headers()
        del headers["mcp-session-id"]
        response = await client.post(url, content=initialize(), headers=headers)
        assert response.status_code == 200, response.text
        assert response.headers["mcp-session-id"] != session.session_id
        assert messages_of(response)[0]["result"]["protocolVersion"] == "2025-11-25"


async def test_many_distinct_header_sets_stay_correct(http: RunningServer) -> None:
    """More distinct sets than the memo holds (64): each is still checked and served,
    and a refused value stays refused."""
    url = http.url + "/mcp"
    async with httpx.AsyncClient() as client:
        session = RawSession(client, url)
        await session.open()
        for port in range(3000, 3100):
            origin = f"http://localhost:{port}"
            response = await session.post(_ping(port), origin=origin)
            assert response.status_code == 200, (port, response.text)
            assert response.headers["access-control-allow-origin"] == origin
        refused = await session.post(_ping(), origin="http://evil.example.com")
        assert refused.status_code == 403


async def test_stateless_posts_with_remembered_values() -> None:
    app = SERVER.streamable_http_app(stateless=True, json_response=True)
    with running_server(app) as http:
        url = http.url + "/mcp"
        headers = {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"}
        async with httpx.AsyncClient() as client:
            for rid in range(3):
                response = await client.post(
                    url,
                    content=request(
                        rid, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}
                    ),
                    headers=headers,
                )
                assert response.status_code == 200, response.text
                assert response.json()["result"]["content"][0]["text"] == "hi"
            bad = await client.post(url, content=b"[", headers=headers)
            assert bad.status_code == 400
