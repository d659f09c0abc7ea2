"""``HTTP1Transport``: the HTTP/1.1 connection layer under the HTTP clients' httpx client.

Against a scripted server on 127.0.0.1 that writes exact bytes: every framing of a
response body, keep-alive and when a connection must not be reused, informational
answers, every way a response can break (each an httpx transport error saying what
happened, never a hang), the timeouts, the pool's bound, request bodies of both framings,
and headers that would split the request refused before anything is sent.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import httpx
import pytest

from mcpkit.transports import HTTP1Transport

pytestmark = pytest.mark.anyio

LIMIT = 10.0

Script = Callable[["Peer", bytes], Awaitable[bool]]  # answers one request; False: hang up


@dataclass
class Peer:
    """One accepted connection of the scripted server."""

    stream: anyio.abc.SocketStream
    number: int

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)


@dataclass
class Server:
    url: str
    requests: list[tuple[int, bytes]] = field(default_factory=list)  # (connection, request)
    connections: int = 0


async def read_request(stream: anyio.abc.SocketStream, buffer: bytearray) -> bytes | None:
    """One request off the connection (Content-Length or chunked body), or None at its end."""
    while b"\r\n\r\n" not in buffer:
        try:
            buffer += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return None
    end = buffer.index(b"\r\n\r\n") + 4
    head = bytes(buffer[:end]).lower()
    if b"transfer-encoding: chunked" in head:
        while b"0\r\n\r\n" not in buffer[end:]:
            buffer += await stream.receive()
        end = buffer.index(b"0\r\n\r\n", end) + 5
    elif b"content-length:" in head:
        length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
        while len(buffer) < end + length:
            buffer += await stream.receive()
        end += length
    request = bytes(buffer[:end])
    del buffer[:end]
    return request


@asynccontextmanager
async def scripted(script: Script, host: str = "127.0.0.1") -> AsyncIterator[Server]:
    listener = await anyio.create_tcp_listener(local_host=host)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    server = Server(f"http://{'[::1]' if host == '::1' else host}:{port}/mcp")

    async def serve(stream: anyio.abc.SocketStream) -> None:
        server.connections += 1
        peer = Peer(stream, server.connections)
        buffer = bytearray()
        async with stream:
            while (request := await read_request(stream, buffer)) is not None:
                server.requests.append((peer.number, request))
                if not await script(peer, request):
                    return

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


async def until_closed(peer: Peer) -> None:
    """Answer nothing more: wait until the client closes the connection."""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
        while await peer.stream.receive():
            pass


def answer(data: bytes, *, keep: bool = True) -> Script:
    async def script(peer: Peer, request: bytes) -> bool:
        await peer.send(data)
        return keep

    return script


def ok(body: bytes, *extra: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + b"".join(extra)
    return head + b"content-length: %d\r\n\r\n%s" % (len(body), body)


@asynccontextmanager
async def client(**options: object) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=HTTP1Transport(**options),  # type: ignore[arg-type]
        timeout=httpx.Timeout(LIMIT),
    ) as c:
        yield c


BODY = b'{"jsonrpc":"2.0","id":1,"result":{}}'

# (name, what the server writes, the body read, whether the connection is reused)
FRAMINGS = [
    ("content-length", ok(BODY), BODY, True),
    (
        "chunked",
        b'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"jso\r\n'
        + b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY) - 5, BODY[5:]),
        BODY,
        True,
    ),
    ("connection-close", ok(BODY, b"connection: close\r\n"), BODY, False),
    ("http-1.0", ok(BODY).replace(b"HTTP/1.1", b"HTTP/1.0", 1), BODY, False),
    (
        "informational-first",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\n\r\n" + ok(BODY),
        BODY,
        True,
    ),
    ("no-content", b"HTTP/1.1 204 No Content\r\n\r\n", b"", True),
    ("bytes-after-the-answer", ok(BODY) + b"HTTP/1.1 200 OK\r\n", BODY, False),
]


@pytest.mark.parametrize(("name", "wire", "body", "reused"), FRAMINGS, ids=[f[0] for f in FRAMINGS])
async def test_framings_and_reuse(name: str, wire: bytes, body: bytes, reused: bool) -> None:
    async with scripted(answer(wire)) as server, client() as c:
        with anyio.fail_after(LIMIT):
            for _ in range(2):
                response = await c.post(server.url, content=b"{}")
                assert response.status_code in (200, 204)
                assert response.content == body
                assert response.headers.get("content-type") in ("application/json", None)
    assert server.connections == (1 if reused else 2)


async def test_a_body_that_runs_to_the_connections_end() -> None:
    wire = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n" + BODY
    async with scripted(answer(wire, keep=False)) as server, client() as c:
        with anyio.fail_after(LIMIT):
            assert (await c.get(server.url)).content == BODY
            assert (await c.get(server.url)).content == BODY
    assert server.connections == 2


async def test_a_streamed_body_arrives_as_it_is_written() -> None:
    release = anyio.Event()

    async def sse(peer: Peer, request: bytes) -> bool:
        await peer.send(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
        await peer.send(b"transfer-encoding: chunked\r\n\r\n")
        await peer.send(b"10\r\ndata: first...\n\n\r\n")
        await release.wait()
        await peer.send(b"e\r\ndata: second\n\n\r\n0\r\n\r\n")
        return True

    async with scripted(sse) as server, client() as c, c.stream("GET", server.url) as response:
        with anyio.fail_after(LIMIT):
            chunks = response.aiter_raw()
            assert await chunks.__anext__() == b"data: first...\n\n"
            release.set()
            assert [chunk async for chunk in chunks] == [b"data: second\n\n"]


# (name, what the server writes before hanging up, the error and words in its message)
BREAKS = [
    ("nothing", b"", httpx.RemoteProtocolError, "before completing a response"),
    ("half-a-head", b"HTTP/1.1 200 OK\r\ncontent-", httpx.RemoteProtocolError, "a response"),
    ("half-a-body", ok(BODY)[:-5], httpx.RemoteProtocolError, "completing its response"),
    (
        "half-a-chunk",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n9\r\nabc",
        httpx.RemoteProtocolError,
        "its response",
    ),
    ("not-http", b"SSH-2.0-OpenSSH_9.6\r\n", httpx.RemoteProtocolError, "malformed"),
    (
        "two-lengths",
        b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab",
        httpx.RemoteProtocolError,
        "malformed",
    ),
    (
        "switching",
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\nconnection: upgrade\r\n\r\n",
        httpx.RemoteProtocolError,
        "switched protocols",
    ),
    (
        "huge-head",
        b"HTTP/1.1 200 OK\r\n" + b"x-filler: %s\r\n" % (b"a" * 8000) * 9,
        httpx.RemoteProtocolError,
        "exceeds 65536 bytes",
    ),
]


@pytest.mark.parametrize(("name", "wire", "error", "words"), BREAKS, ids=[b[0] for b in BREAKS])
async def test_a_broken_response_is_an_error_that_says_so(
    name: str, wire: bytes, error: type[Exception], words: str
) -> None:
    async with scripted(answer(wire, keep=False)) as server, client() as c:
        with anyio.fail_after(LIMIT), pytest.raises(error, match=words):
            await c.post(server.url, content=b"{}")
        # The transport goes on: the next request gets a new connection and its answer.
        server_script_ok = ok(BODY)
        async with scripted(answer(server_script_ok)) as other:
            with anyio.fail_after(LIMIT):
                assert (await c.post(other.url, content=b"{}")).content == BODY


async def test_timeouts_and_refused_connections() -> None:
    async def silent(peer: Peer, request: bytes) -> bool:
        await until_closed(peer)  # (the client gives up and closes)
        return False

    async with scripted(silent) as server, client() as c:
        with anyio.fail_after(LIMIT), pytest.raises(httpx.ReadTimeout, match="no data"):
            await c.post(server.url, content=b"{}", timeout=0.2)
    # The port is free now: nothing listens there.
    async with client() as c:
        with (
            anyio.fail_after(LIMIT),
            pytest.raises(
                httpx.ConnectError, match=r"cannot connect to 127\.0\.0\.1:\d+: Connection refused$"
            ),
        ):
            await c.post(server.url, content=b"{}")


async def test_a_body_that_stops_coming_times_out() -> None:
    async def stalls(peer: Peer, request: bytes) -> bool:
        await peer.send(ok(BODY)[:-3])
        await until_closed(peer)
        return False

    async with scripted(stalls) as server, client() as c:
        with anyio.fail_after(LIMIT), pytest.raises(httpx.ReadTimeout):
            await c.post(server.url, content=b"{}", timeout=0.2)


async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    # The server answers (without "Connection: close") and hangs up once idle.
    closed = anyio.Semaphore(0)

    async def once(peer: Peer, request: bytes) -> bool:
        await peer.send(ok(BODY))
        await peer.stream.aclose()
        closed.release()
        return False

    async with scripted(once) as server, client() as c:
        with anyio.fail_after(LIMIT):
            for _ in range(3):  # each POST finds its last connection closed, and opens one
                assert (await c.post(server.url, content=b"{}")).content == BODY
                await closed.acquire()
    assert server.connections == 3


async def test_a_get_is_sent_again_when_the_reused_connection_was_gone() -> None:
    # The server hangs up on the second request without answering, as one whose
    # keep-alive timer fired while the request was on its way: a GET goes again.
    async def flaky(peer: Peer, request: bytes) -> bool:
        if peer.number == 1 and len([r for r in server.requests if r[0] == 1]) == 2:
            return False
        await peer.send(ok(BODY))
        return True

    async with scripted(flaky) as server, client() as c:
        with anyio.fail_after(LIMIT):
            assert (await c.get(server.url)).content == BODY
            assert (await c.get(server.url)).content == BODY
            assert [n for n, _ in server.requests] == [1, 1, 2]
            # A POST is not sent twice (the server may have applied it).
            server.requests.clear()
            server.connections = 0

    async def drops_posts(peer: Peer, request: bytes) -> bool:
        if request.startswith(b"POST") and peer.number == 1 and len(server.requests) == 2:
            return False
        await peer.send(ok(BODY))
        return True

    async with scripted(drops_posts) as server, client() as c:
        with anyio.fail_after(LIMIT):
            assert (await c.post(server.url, content=b"{}")).content == BODY
            with pytest.raises(httpx.RemoteProtocolError):
                await c.post(server.url, content=b"{}")
    assert len(server.requests) == 2


async def test_keepalive_expiry_and_idle_bound() -> None:
    async with scripted(answer(ok(BODY))) as server, client(keepalive_expiry=0) as c:
        with anyio.fail_after(LIMIT):
            for _ in range(3):
                await c.post(server.url, content=b"{}")
    assert server.connections == 3
    async with scripted(answer(ok(BODY))) as server, client(max_idle=0) as c:
        with anyio.fail_after(LIMIT):
            for _ in range(2):
                await c.post(server.url, content=b"{}")
    assert server.connections == 2


async def test_the_pool_bounds_requests_in_flight() -> None:
    gate = anyio.Event()

    async def held(peer: Peer, request: bytes) -> bool:
        answer = ok(BODY)
        await peer.send(answer[:-5])
        await gate.wait()
        await peer.send(answer[-5:])
        return True

    async with scripted(held) as server, client(max_connections=1) as c:
        with anyio.fail_after(LIMIT):
            async with c.stream("POST", server.url, content=b"{}") as first:
                with pytest.raises(httpx.PoolTimeout, match="no free connection"):
                    await c.post(server.url, content=b"{}", timeout=httpx.Timeout(LIMIT, pool=0.1))
                gate.set()
                assert await first.aread() == BODY
            assert (await c.post(server.url, content=b"{}")).content == BODY
    assert server.connections == 1


async def test_a_cancelled_request_does_not_leave_its_connection_for_the_next() -> None:
    started = anyio.Event()

    async def slow_once(peer: Peer, request: bytes) -> bool:
        if peer.number == 1:
            started.set()
            await anyio.sleep(LIMIT)
        await peer.send(ok(BODY))
        return True

    async with scripted(slow_once) as server, client() as c:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(c.post, server.url, content=b"{}"))
                await started.wait()
                tg.cancel_scope.cancel()
            assert (await c.post(server.url, content=b"{}")).content == BODY
    assert server.connections == 2


BIG = b'{"big": "%s"}' % (b"x" * 100_000)  # larger than one write of head and body


async def test_request_bodies_of_both_framings() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b'{"a":'
        yield b""
        yield b"1}"

    async with scripted(answer(ok(BODY))) as server, client() as c:
        with anyio.fail_after(LIMIT):
            await c.post(server.url, content=BIG)
            await c.post(server.url, content=parts())
    big, streamed = (request for _, request in server.requests)
    head, body = big.split(b"\r\n\r\n", 1)
    assert body == BIG
    assert b"content-length: %d\r\n" % len(BIG) in head.lower() + b"\r\n"
    assert streamed.lower().split(b"\r\n\r\n", 1)[1] == b'5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'
    assert b"transfer-encoding: chunked" in streamed.lower()


@pytest.mark.parametrize(
    "header",
    [("x-session", "abc\r\nx-injected: 1"), ("x-session", "a\nb"), ("x-session", "a\x00b")],
    ids=["crlf", "lf", "nul"],
)
async def test_a_header_that_would_split_the_request_is_refused(header: tuple[str, str]) -> None:
    async with scripted(answer(ok(BODY))) as server, client() as c:
        with anyio.fail_after(LIMIT), pytest.raises(httpx.LocalProtocolError, match="x-session"):
            await c.post(server.url, content=b"{}", headers=[header])
    assert server.requests == []


async def test_head_requests_and_ipv6_literals() -> None:
    # HEAD goes through httpx's own transport (its answer has no body whatever it says).
    async with scripted(answer(ok(BODY))) as server, client() as c:
        with anyio.fail_after(LIMIT):
            response = await c.head(server.url)
            assert response.status_code == 200
            assert response.content == b""
    async with scripted(answer(ok(BODY)), host="::1") as server, client() as c:
        with anyio.fail_after(LIMIT):
            assert (await c.post(server.url, content=b"{}")).content == BODY


@pytest.mark.parametrize(
    "bad", [{"max_connections": 0}, {"max_idle": -1}, {"keepalive_expiry": float("nan")}]
)
def test_the_constructor_refuses_impossible_bounds(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="max_connections"):
        HTTP1Transport(**bad)  # type: ignore[arg-type]
