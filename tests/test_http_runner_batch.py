"""The built-in runner's response writes: a response with a ``Content-Length`` goes out in
one write, headers and body together, held until the tasks of its event-loop turn have run
(``mcpkit.transports._writes``); everything else at once, after what its connection holds.

Over real sockets on 127.0.0.1: pipelined answers of every kind keep their order and a
``Connection: close`` answer still arrives; many connections answered in the same turns each
get their own answers. On a recording transport: the held answer waits for the end of the
turn, and closing, aborting, a direct write or a failing connection do what they say.
"""

from __future__ import annotations

import asyncio
import socket
from types import SimpleNamespace
from typing import Any

import pytest

from mcpkit.transports._writes import Coalescing, WriteBatch

from ._httpserver import running_server, serve_lifespan

WAIT = 15.0  # the bound on every socket read of these tests
BIG = 100 * 1024  # over the largest body written together with its headers


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/json/<tag>``: ``json <tag>`` with a Content-Length; ``/chunked/<tag>``: chunked,
    in two pieces; ``/big/<tag>``: ``BIG`` bytes with a Content-Length; ``/empty/<tag>``:
    Content-Length 0."""
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    kind, tag = scope["path"].strip("/").split("/")
    if kind == "chunked":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"chunked ", "more_body": True})
        await send({"type": "http.response.body", "body": tag.encode()})
        return
    body = {"json": b"json " + tag.encode(), "big": b"b" * BIG, "empty": b""}[kind]
    headers = [(b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _request(path: str, close: bool = False) -> bytes:
    extra = b"connection: close\r\n" if close else b""
    return b"GET %s HTTP/1.1\r\nhost: 127.0.0.1\r\n%s\r\n" % (path.encode(), extra)


class _Reader:
    """Reads HTTP/1.1 responses (Content-Length or chunked) off a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _more(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise EOFError(f"the connection ended; unparsed: {self.buffer[:200]!r}")
        self.buffer += data

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._more()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self._more()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def response(self) -> tuple[int, dict[bytes, bytes], bytes]:
        status = int(self._line().split()[1])
        headers: dict[bytes, bytes] = {}
        while line := self._line():
            name, value = line.split(b":", 1)
            headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            return status, headers, self._exactly(int(headers[b"content-length"]))
        assert headers.get(b"transfer-encoding") == b"chunked", headers
        body = b""
        while size := int(self._line(), 16):
            body += self._exactly(size)
            assert self._line() == b""
        assert self._line() == b""
        return status, headers, body

    def at_end(self) -> bool:
        try:
            self._more()
        except EOFError:
            return not self.buffer
        return False


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def test_pipelined_answers_keep_their_order_and_a_closing_one_arrives() -> None:
    paths = ["/json/1", "/chunked/2", "/json/3", "/big/4", "/empty/5", "/json/6", "/json/7"]
    expected = [b"json 1", b"chunked 2", b"json 3", b"b" * BIG, b"", b"json 6", b"json 7"]
    with running_server(_app) as server, _connect(server.port) as sock:
        # Every request in one segment: uvicorn answers them one after the other, each
        # answer held or written at once depending on its kind; the last closes.
        sock.sendall(
            b"".join(_request(p, close=(i == len(paths) - 1)) for i, p in enumerate(paths))
        )
        reader = _Reader(sock)
        answers = [reader.response() for _ in paths]
        assert [body for _, _, body in answers] == expected
        assert all(status == 200 for status, _, _ in answers)
        assert answers[-1][1].get(b"connection") == b"close"
        assert reader.at_end()  # closed after the answer it held, not before


def test_connections_answered_in_the_same_turns_get_their_own_answers() -> None:
    connections, rounds = 24, 8
    with running_server(_app) as server:
        socks = [_connect(server.port) for _ in range(connections)]
        try:
            readers = [_Reader(sock) for sock in socks]
            for r in range(rounds):
                # All requests of a round are sent before any answer is read, so that
                # the server finds several ready in one turn and holds their answers.
                for c, sock in enumerate(socks):
                    sock.sendall(_request(f"/json/{c}-{r}") + _request(f"/empty/{c}-{r}"))
                for c, reader in enumerate(readers):
                    assert reader.response()[2] == f"json {c}-{r}".encode()
                    assert reader.response()[2] == b""
        finally:
            for sock in socks:
                sock.close()


# -- the wrapper, on a transport that records what it is given -----------------------


class _Transport:
    def __init__(self, fail: bool = False) -> None:
        self.log: list[Any] = []
        self.closing = False
        self.fail = fail

    def write(self, data: bytes) -> None:
        if self.fail:
            raise OSError("the write failed")
        self.log.append(bytes(data))

    def writelines(self, data: Any) -> None:
        self.log.append(("lines", list(data)))

    def write_eof(self) -> None:
        self.log.append("eof")

    def close(self) -> None:
        self.log.append("close")
        self.closing = True

    def abort(self) -> None:
        self.log.append("abort")
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 7

    def set_protocol(self, protocol: Any) -> None:
        self.log.append("protocol")

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return "peer" if name == "peername" else default


def _connection(
    batch: WriteBatch, fail: bool = False
) -> tuple[Coalescing, _Transport, SimpleNamespace]:
    """A wrapper whose protocol is in the middle of a response with a Content-Length."""
    transport = _Transport(fail)
    cycle = SimpleNamespace(
        response_started=True,
        response_complete=False,
        chunked_encoding=False,
        expected_content_length=4,
    )
    protocol = SimpleNamespace(cycle=cycle)
    return Coalescing(transport, protocol, batch), transport, protocol  # type: ignore[arg-type]


def _others_ready() -> None:
    """Another callback ready in this loop turn (another request's task, under load)."""
    asyncio.get_running_loop().call_soon(lambda: None)


async def _turn_ends() -> None:
    """Returns once the callbacks queued before it (the batch's release) have run."""
    done = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(done.set_result, None)
    await done


def _answer(connection: Coalescing) -> None:
    connection.write(b"HEAD\r\n")
    connection.write(b"body")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (the runner is asyncio's)
async def test_an_answer_is_held_until_the_turn_ends() -> None:
    connection, transport, _ = _connection(WriteBatch())
    _others_ready()
    _answer(connection)
    assert transport.log == []
    assert connection.get_write_buffer_size() == 7 + len(b"HEAD\r\nbody")
    await _turn_ends()
    assert transport.log == [b"HEAD\r\nbody"]  # one write, headers and body
    assert connection.get_write_buffer_size() == 7


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (the runner is asyncio's)
async def test_with_nothing_else_to_run_an_answer_goes_at_once() -> None:
    # One client: nothing to batch with, so no loop turn is added to its wait; with
    # another callback ready (another request's task), both answers wait for the turn.
    batch = WriteBatch()
    alone, alone_transport, _ = _connection(batch)
    _answer(alone)
    assert alone_transport.log == [b"HEAD\r\nbody"]
    first, first_transport, _ = _connection(batch)
    second, second_transport, _ = _connection(batch)
    _others_ready()
    _answer(first)
    _answer(second)
    assert first_transport.log == second_transport.log == []
    await _turn_ends()
    assert first_transport.log == second_transport.log == [b"HEAD\r\nbody"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (the runner is asyncio's)
@pytest.mark.parametrize(
    ("act", "after"),
    [
        (lambda c: c.write(b"chunk"), [b"chunk"]),
        (lambda c: c.writelines([b"a", b"b"]), [("lines", [b"a", b"b"])]),
        (lambda c: c.write_eof(), ["eof"]),
        (lambda c: c.close(), ["close"]),
        (lambda c: c.set_protocol(object()), ["protocol"]),
    ],
)
async def test_what_follows_a_held_answer_goes_after_it(act: Any, after: list[Any]) -> None:
    connection, transport, protocol = _connection(WriteBatch())
    _others_ready()
    _answer(connection)
    protocol.cycle = None  # (the response is complete: what comes next is written at once)
    act(connection)
    assert transport.log == [b"HEAD\r\nbody", *after]
    await _turn_ends()
    assert transport.log == [b"HEAD\r\nbody", *after]  # nothing twice


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (the runner is asyncio's)
async def test_an_aborted_or_closed_connection_drops_its_held_answer() -> None:
    batch = WriteBatch()
    aborted, aborted_transport, _ = _connection(batch)
    gone, gone_transport, _ = _connection(batch)
    _others_ready()
    _answer(aborted)
    _answer(gone)
    aborted.abort()
    gone_transport.closing = True  # (the peer went away meanwhile)
    await _turn_ends()
    assert aborted_transport.log == ["abort"]
    assert gone_transport.log == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # (the runner is asyncio's)
async def test_a_failing_write_loses_no_other_answer(caplog: pytest.LogCaptureFixture) -> None:
    batch = WriteBatch()
    failing, _, _ = _connection(batch, fail=True)
    fine, fine_transport, _ = _connection(batch)
    _others_ready()
    _answer(failing)
    _answer(fine)
    await _turn_ends()
    assert fine_transport.log == [b"HEAD\r\nbody"]
    assert "writing a held HTTP answer failed" in caplog.text
