"""Streamable HTTP secure defaults, as documented: the limits an app gets when nothing is
configured, the header limit at its exact boundary, idle sessions ended by the app's own
sweeper, and the app mounted under a prefix in Starlette."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Final

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpkit.server import LowLevelServer

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import ACCEPT_BOTH, RawSession, initialize, request

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


def test_documented_defaults() -> None:
    server = build_server()
    app = server.streamable_http_app()
    assert app.path == "/mcp"
    assert app.max_body_bytes == 4 * 1024 * 1024
    assert app.max_header_bytes == 16 * 1024
    assert app.max_sessions == 1000
    assert app.session_idle_timeout == 1800.0
    assert app.stateless is False
    assert LowLevelServer("x").max_in_flight == 100
    # DNS-rebinding protection is on: loopback names only, no cross-origin callers.
    assert app.security.host_allowed("127.0.0.1:8000")
    assert app.security.host_allowed("localhost:8000")
    assert not app.security.host_allowed("evil.example.com")
    assert not app.security.host_allowed("localhost@evil.example.com")
    assert not app.security.origin_allowed(b"https://evil.example.com")
    assert not app.security.origin_allowed(b"null")


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(build_server().streamable_http_app()) as server:
        yield server


def exchange(port: int, data: bytes) -> bytes:
    """One request on a fresh connection; the answer's status line and headers."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def post_with_header_block(port: int, size: int) -> bytes:
    """An initialize POST whose header block is exactly ``size`` bytes as the app counts
    it: each header's name and value plus 4 (``": "`` and CRLF, as on the wire)."""
    body = initialize()
    fields = [
        ("host", f"127.0.0.1:{port}"),
        ("content-type", "application/json"),
        ("accept", ACCEPT_BOTH),
        ("content-length", str(len(body))),
        ("connection", "close"),
    ]
    used = sum(len(name) + len(value) + 4 for name, value in fields)
    filler = size - used - len("x-filler") - 4
    assert filler > 0
    fields.append(("x-filler", "y" * filler))
    assert sum(len(name) + len(value) + 4 for name, value in fields) == size
    head = "".join(f"{name}: {value}\r\n" for name, value in fields)
    return f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body


@pytest.mark.parametrize(("size", "status"), [(16 * 1024, b"200"), (16 * 1024 + 1, b"431")])
async def test_header_block_limit_exact_boundary(
    http: RunningServer, size: int, status: bytes
) -> None:
    answer = await anyio.to_thread.run_sync(
        exchange, http.port, post_with_header_block(http.port, size)
    )
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]


async def test_idle_sessions_are_ended_by_the_sweeper() -> None:
    app = build_server().streamable_http_app(session_idle_timeout=0.2)
    with running_server(app) as http:
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            sid = session.session_id
            assert sid is not None
            # Wait, on the server's loop, for the session's end (the sweep runs every
            # 0.05 s here); nothing touches the session meanwhile.
            ended = http.call(lambda: app.sessions[sid].ended)

            async def wait_ended() -> None:
                with anyio.fail_after(TIMEOUT):
                    await ended.wait()

            await anyio.to_thread.run_sync(http.run, wait_ended)
            assert http.call(lambda: sid in app.sessions) is False
            gone = await session.post(request(2, "ping"))
            assert gone.status_code == 404


async def test_mounted_under_a_prefix_in_starlette() -> None:
    mcp = build_server().streamable_http_app()
    app = Starlette(routes=[Mount("/api", app=mcp)], lifespan=mcp.lifespan)
    with running_server(app) as http:
        async with httpx.AsyncClient() as client:
            session = RawSession(client, http.url + "/api/mcp")
            await session.open()
            assert (await session.call(2, "ping"))["result"] == {}
            # The unprefixed path is not the endpoint.
            stray = await client.post(
                http.url + "/mcp", content=request(3, "ping"), headers=session.headers()
            )
            assert stray.status_code == 404
            ended = await client.delete(session.url, headers=session.headers())
            assert ended.status_code == 204
