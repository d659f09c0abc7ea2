"""Properties of the HTTP client's response reading (``transports/_h1_wire.py``), over a
stream that hands out exactly the pieces hypothesis chose: any response, in any framing,
split anywhere, reads back as the status, headers and body written; any bytes at all end
in an answer or an httpx transport error, never another exception, never a wait for more
after the stream's end."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import anyio
import anyio.abc
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.transports._h1_wire import Response, receive_into

REQUEST = httpx.Request("POST", "http://127.0.0.1/mcp", content=b"{}")


class Pieces(anyio.abc.ByteStream):
    """A stream whose receives return the given pieces, then its end."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = list(pieces)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._pieces:
            raise anyio.EndOfStream
        return self._pieces.pop(0)

    # The abstract base requires these; reading a response never sends or closes.
    async def send(self, item: bytes) -> None:  # pragma: no cover - see above
        raise AssertionError("not written to")

    async def send_eof(self) -> None:  # pragma: no cover - see above
        pass

    async def aclose(self) -> None:  # pragma: no cover - see above
        pass


async def read_all(pieces: list[bytes]) -> tuple[Response, bytes]:
    """Head then body, as the transport reads them; a read after the stream's end is a
    failure (the transport would wait for more forever)."""
    stream = Pieces(pieces)
    response = Response()
    reads = 0

    async def receive() -> None:
        nonlocal reads
        reads += 1
        assert reads <= len(pieces) + 1, "read again after the stream's end"
        await receive_into(stream, response, REQUEST)

    while not response.head_done:
        await receive()
    body = b""
    while True:
        body += b"".join(response.chunks)
        response.chunks = []
        if response.done:
            return response, body
        await receive()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


TOKEN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12).filter(
    lambda name: name.lower() not in ("content-length", "transfer-encoding", "connection")
)
# RFC 9110 section 5.5: visible characters, spaces and tabs inside (none at either end).
VALUE = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"), max_size=40
).map(lambda v: v.strip(" \t").encode())


def encode(framing: str, body: bytes, chunk_sizes: list[int]) -> tuple[bytes, bool]:
    """The framing's header lines and body bytes, and whether the connection stays."""
    if framing == "length":
        return b"content-length: %d\r\n\r\n" % len(body) + body, True
    if framing == "chunked":
        out, rest = [], body
        for size in [*chunk_sizes, len(body)]:
            piece, rest = rest[: max(size, 1)], rest[max(size, 1) :]
            if piece:
                out.append(b"%x;ext=1\r\n%s\r\n" % (len(piece), piece))
            if not rest:
                break
        return b"transfer-encoding: chunked\r\n\r\n" + b"".join(out) + b"0\r\n\r\n", True
    return b"\r\n" + body, False  # close-delimited


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    status=st.sampled_from([200, 201, 202, 400, 404, 500, 503]),
    headers=st.lists(st.tuples(TOKEN, VALUE), max_size=6),
    body=st.binary(max_size=3000),
    framing=st.sampled_from(["length", "chunked", "close"]),
    chunk_sizes=st.lists(st.integers(1, 700), max_size=8),
    informational=st.booleans(),
    version=st.sampled_from([b"1.1", b"1.0"]),
    close=st.booleans(),
    cuts=st.lists(st.integers(0, 10_000), max_size=12),
)
def test_any_response_split_anywhere_reads_back(
    status: int,
    headers: list[tuple[str, bytes]],
    body: bytes,
    framing: str,
    chunk_sizes: list[int],
    informational: bool,
    version: bytes,
    close: bool,
    cuts: list[int],
) -> None:
    if version == b"1.0" and framing == "chunked":
        framing = "length"  # (HTTP/1.0 has no chunked coding)
    framed, keeps = encode(framing, body, chunk_sizes)
    # RFC 9112 section 9.3: HTTP/1.0 closes unless it says keep-alive; 1.1 keeps unless
    # it says close.
    keeps = keeps and version == b"1.1" and not close
    wire = (b"HTTP/1.1 100 Continue\r\n\r\n" if informational else b"") + (
        b"HTTP/%s %d Some Reason\r\n" % (version, status)
        + b"".join(b"%s: %s\r\n" % (name.encode(), value) for name, value in headers)
        + (b"connection: close\r\n" if close else b"")
        + framed
    )
    response, read = anyio.run(read_all, split(wire, cuts))
    assert response.status == status
    assert response.headers[: len(headers)] == [(n.encode(), v) for n, v in headers]
    assert read == body
    assert response.keep_alive is keeps
    assert not response.after


def run_bytes(pieces: list[bytes]) -> Callable[[], tuple[Response, bytes]]:
    return lambda: anyio.run(read_all, pieces)


@settings(max_examples=400, deadline=None)
@given(
    data=st.one_of(
        st.binary(max_size=400),
        st.binary(max_size=300).map(lambda b: b"HTTP/1.1 200 OK\r\n" + b),
        st.binary(max_size=300).map(lambda b: b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n" + b),
        # An answer, then whatever follows it on the connection.
        st.binary(max_size=100).map(
            lambda b: b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok" + b
        ),
    ),
    cuts=st.lists(st.integers(0, 1000), max_size=8),
)
def test_any_bytes_end_in_an_answer_or_a_transport_error(data: bytes, cuts: list[int]) -> None:
    pieces = split(data, cuts)
    try:
        response, _ = run_bytes(pieces)()
    except httpx.TransportError:
        return  # RemoteProtocolError (malformed, cut short, upgrade) or ReadError
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    if data.startswith(answer):
        # Bytes read with the answer's end mean the connection is not used again (what
        # comes in later reads is the idle check's: tests/test_http_h1_transport.py).
        ends = list(itertools.accumulate(len(piece) for piece in pieces))
        last = next(end for end in ends if end >= len(answer))
        # (Empty lines between messages are ignored, RFC 9112 section 2.2: harmless.)
        assert response.after is bool(data[len(answer) : last].lstrip(b"\r\n"))


@pytest.mark.parametrize(
    "head",
    [b"HTTP/1.1 200 OK\r\n" + b"x-a: %s\r\n" % (b"b" * 1000) * 70, b"HTTP/1.1 200 OK\r\n" * 5000],
    ids=["many-headers", "repeated-status"],
)
def test_a_head_past_its_bound_is_refused_whatever_the_pieces(head: bytes) -> None:
    with pytest.raises(httpx.TransportError):
        run_bytes(split(head, list(range(0, len(head), 997))))()
