"""A missing Host, or Host or Origin given twice, on every HTTP-based transport: a
malformed request (RFC 9112 section 3.2: 400 for "more than one Host header field line"
or none), refused as such, 403 in a WebSocket handshake (docs/websocket.md section 2),
with a message that says which, and without the operator being told to allow a name that
is allowed (``mcpkit.server.http`` warns only of unlisted values). The requests are
written by hand over real sockets: an HTTP client sends neither two Hosts nor none."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Final

import anyio
import pytest

from mcpkit.server import LowLevelServer
from mcpkit.server._http_apps import app_for

from ._httpserver import RunningServer, running_server
from ._mcphttp import initialize

pytestmark = pytest.mark.anyio

TIMEOUT: Final = 10.0
ORIGIN: Final = "http://127.0.0.1"
INITIALIZE: Final = initialize()

#: Per transport: the request line and headers of a request that passes every check
#: but the one a case breaks (the WebSocket handshake: an upgrade).
REQUESTS: Final = {
    "http": (
        "POST /mcp HTTP/1.1",
        [
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(INITIALIZE)}",
        ],
    ),
    "sse": ("GET /sse HTTP/1.1", ["Accept: text/event-stream"]),
    "ws-http": ("GET /ws HTTP/1.1", []),
    "ws": (
        "GET /ws HTTP/1.1",
        [
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Protocol: mcp",
        ],
    ),
}

#: (case, header lines given the server's Host value, status, status in a handshake,
#: what the answer says). Two Origins in a WebSocket handshake never reach the app under
#: uvicorn: its websockets library answers 400 itself (in plain text).
CASES: Final = [
    ("no Host", lambda host: [], 400, 403, b"Host header is missing"),
    (
        "two Hosts",
        lambda host: [f"Host: {host}", f"Host: {host}"],
        400,
        403,
        b"more than one Host header",
    ),
    (
        "two Origins",
        lambda host: [f"Host: {host}", f"Origin: {ORIGIN}", f"Origin: {ORIGIN}"],
        400,
        400,
        b"Origin header",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


@pytest.fixture(scope="module", params=["http", "sse", "ws"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, RunningServer]]:
    transport: str = request.param
    with running_server(app_for(LowLevelServer("malformed-host"), transport)) as http:
        yield transport, http


async def exchange(http: RunningServer, lines: list[str], body: bytes = b"") -> bytes:
    """Send one hand-written request; the response's head, and its body when it has a
    length (an SSE stream or a WebSocket stays open: its head is enough)."""
    if not any(line.startswith("Connection:") for line in lines):
        lines = [*lines, "Connection: close"]
    head = "\r\n".join([*lines, "", ""]).encode("latin-1")
    answer = b""
    with anyio.fail_after(TIMEOUT):
        stream = await anyio.connect_tcp("127.0.0.1", http.port)
        async with stream:
            await stream.send(head + body)
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while not _complete(answer):
                    answer += await stream.receive()
    return answer


def _complete(answer: bytes) -> bool:
    head, end, body = answer.partition(b"\r\n\r\n")
    if not end:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return True


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize(("case", "headers", "status", "handshake", "message"), CASES)
async def test_a_malformed_host_or_origin_is_a_bad_request(
    served: tuple[str, RunningServer],
    caplog: pytest.LogCaptureFixture,
    case: str,
    headers: Callable[[str], list[str]],
    status: int,
    handshake: int,
    message: bytes,
) -> None:
    transport, http = served
    host = f"127.0.0.1:{http.port}"
    kinds = ["ws-http", "ws"] if transport == "ws" else [transport]
    for kind in kinds:
        line, rest = REQUESTS[kind]
        lines = [line, *headers(host), *rest]
        body = INITIALIZE if kind == "http" else b""
        with caplog.at_level(logging.INFO, logger="mcpkit.server.http"):
            answer = await exchange(http, lines, body)
        assert status_of(answer) == (handshake if kind == "ws" else status), (case, kind, answer)
        assert message in answer.partition(b"\r\n\r\n")[2], (case, kind, answer)
        assert not [r for r in caplog.records if "allowed_" in r.getMessage()], caplog.text
        # The same request with its one Host (and Origin) passes those checks.
        fixed = [line, f"Host: {host}", f"Origin: {ORIGIN}", *rest]
        answer = await exchange(http, fixed, body)
        assert not answer.startswith((b"HTTP/1.1 400", b"HTTP/1.1 403")), (kind, answer)
