"""The built-in runner and the apps against clients that hold resources without sending:
a header block that never ends (httptools, unlike h11, has no limit of its own: it was
held whole, hundreds of MiB, before the app could answer 431), a POST whose headers came
and whose body never does (it was held forever, past the 408 deadline that a body
trickling one byte did get), and the runner's connection limit, which must leave the
app's own session cap (with its clear answer) to be reached first."""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from typing import Final

import anyio
import anyio.abc
import pytest

from mcpkit.server import SSEApp, StreamableHTTPApp, WebSocketApp

from ._http_testserver import build_server
from ._httpserver import RunningServer, running_server

pytestmark = pytest.mark.anyio

SERVER = build_server()
BODY_TIMEOUT: Final = 0.5
LIMIT: Final = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the client side only; the server runs in its own thread


@pytest.fixture(scope="module", params=["http", "sse", "ws"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, RunningServer]]:
    app: StreamableHTTPApp | SSEApp | WebSocketApp
    if request.param == "http":
        app = StreamableHTTPApp(SERVER)
        path = "/mcp"
    elif request.param == "sse":
        app = SSEApp(SERVER)
        path = "/messages?session_id=x"
    else:
        app = WebSocketApp(SERVER)
        path = "/ws"
    with running_server(app) as served:
        yield path, served


async def read_all(stream: anyio.abc.ByteStream) -> bytes:
    """Everything until the server closes the connection."""
    data = b""
    try:
        while True:
            data += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return data


async def test_a_header_block_past_the_limit_is_refused_while_it_arrives(
    served: tuple[str, RunningServer],
) -> None:
    """16 KiB by default, plus room for the request line: 64 KiB of a header block that
    has not ended is answered 431 at once (not at the 10 s header deadline, or whenever
    the block ends), and the server stays up."""
    path, http = served
    filler = (b"x-filler: " + b"a" * 1000 + b"\r\n") * 64
    with anyio.fail_after(5):
        stream = await anyio.connect_tcp("127.0.0.1", http.port)
        async with stream:
            await stream.send(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + filler)
            answer = await read_all(stream)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b'"code":-32600' in answer
    await assert_serving(http)


@pytest.fixture(scope="module", params=["http", "sse"])
def posted(request: pytest.FixtureRequest) -> Iterator[tuple[str, RunningServer]]:
    app: StreamableHTTPApp | SSEApp
    if request.param == "http":
        app = StreamableHTTPApp(SERVER, body_timeout=BODY_TIMEOUT)
    else:
        app = SSEApp(SERVER, body_timeout=BODY_TIMEOUT)
    with running_server(app) as served:
        yield request.param, served


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_post_whose_body_never_comes_gets_408(
    posted: tuple[str, RunningServer], framing: str
) -> None:
    kind, http = posted
    length = "Content-Length: 100" if framing == "content-length" else "Transfer-Encoding: chunked"
    with anyio.fail_after(LIMIT):
        async with contextlib.AsyncExitStack() as stack:
            path = "/mcp"
            if kind == "sse":  # a legacy session first: its POSTs need one
                sse = await stack.enter_async_context(
                    await anyio.connect_tcp("127.0.0.1", http.port)
                )
                path = await legacy_endpoint(sse)
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\n{length}\r\n\r\n"
            )
            started = time.monotonic()
            stream = await stack.enter_async_context(
                await anyio.connect_tcp("127.0.0.1", http.port)
            )
            await stream.send(head.encode())  # and no body at all
            answer = await read_all(stream)
            waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert waited >= BODY_TIMEOUT
    await assert_serving(http)


async def legacy_endpoint(stream: anyio.abc.ByteStream) -> str:
    """Open a legacy SSE session on ``stream``; returns the URI its POSTs go to (the data
    of the ``endpoint`` event, 2024-11-05 ``basic/transports.mdx``)."""
    await stream.send(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    data = b""
    while True:
        data += await stream.receive()
        match = re.search(rb"event: endpoint\r?\ndata: ([^\r\n]+)\r?\n", data)
        if match is not None:
            return match.group(1).decode()


async def assert_serving(http: RunningServer) -> None:
    """Another client is served normally: the runner answers a plain request."""
    with anyio.fail_after(LIMIT):
        stream = await anyio.connect_tcp("127.0.0.1", http.port)
        async with stream:
            await stream.send(
                b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            )
            answer = await read_all(stream)
    assert answer.startswith(b"HTTP/1.1 4"), answer[:200]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: StreamableHTTPApp(SERVER), 2064),
        (lambda: SSEApp(SERVER, max_sessions=3000), 6064),
        (lambda: WebSocketApp(SERVER, max_connections=10), 1000),
    ],
    ids=["streamable default", "sse 3000 sessions", "ws 10 connections"],
)
def test_the_connection_limit_leaves_room_for_the_apps_own_cap(make: object, expected: int) -> None:
    """A legacy SSE session holds its stream and a POST at once: with uvicorn's limit at
    the app's session cap, the runner's bare 503 came first, even for the POSTs of
    sessions already open."""
    app = make()  # type: ignore[operator]
    with running_server(app) as http:
        assert http.http.limit_concurrency == expected


def test_an_explicit_connection_limit_is_kept() -> None:
    with running_server(StreamableHTTPApp(SERVER), limit_concurrency=50) as http:
        assert http.http.limit_concurrency == 50


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_uvicorns_warning_about_each_malformed_request_is_bounded() -> None:
    # uvicorn logs one WARNING per request it cannot parse: 5,600 lines/s from one client.
    # (One runner for every app: the filter is the process's, on uvicorn's logger.)
    collect = _Collect()
    error_log = logging.getLogger("uvicorn.error")
    with running_server(StreamableHTTPApp(SERVER)) as server, anyio.fail_after(LIMIT):
        error_log.addHandler(collect)  # (once uvicorn configured its logging: it resets it)
        try:
            for _ in range(200):
                async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
                    await stream.send(b"NOT HTTP AT ALL\r\n\r\n")
                    await read_all(stream)
        finally:
            error_log.removeHandler(collect)
    invalid = [line for line in collect.lines if line.startswith("Invalid HTTP request")]
    assert 1 <= len(invalid) < 40, len(invalid)
