"""Compressed answers to the HTTP clients: gzip and deflate are inflated a bounded piece at
a time, so a small compressed body cannot make the client hold tens of megabytes before
its limits apply; codings the client did not ask for are refused with a clear error.

The peer is the scripted fake server (tests/_fake_mcp_http.py) on 127.0.0.1.
"""

from __future__ import annotations

import gzip
import itertools
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.client import Client
from mcpkit.exceptions import MessageNotDelivered, RemoteProtocolError
from mcpkit.server import LowLevelServer, RequestContext, SSEApp
from mcpkit.transports import SSETransport, StreamableHTTPTransport
from mcpkit.transports._http_client_decoding import PIECE, body_decoder
from mcpkit.types import TextContent, Tool

from ._fake_mcp_http import Exchange, FakeMCPServer, Handler, rpc_result, sse
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT = 20.0
TOOLS = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data)


def zlibbed(data: bytes) -> bytes:
    return zlib.compress(data)


def raw_deflated(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def two_members(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


def coded(
    coding: str,
    pack: Callable[[bytes], bytes],
    payload: Callable[[Exchange], bytes],
    *,
    content_type: str = "application/json",
    pieces: int = 1,
) -> Handler:
    """Answer with ``payload`` packed, sent in ``pieces`` chunks (split anywhere: the
    client must carry the inflater's state from one chunk to the next)."""

    async def handler(ex: Exchange) -> None:
        body = pack(payload(ex))
        await ex.start(200, content_type, [("content-encoding", coding)])
        step = -(-len(body) // pieces)
        for start in range(0, len(body), step):
            await ex.body(body[start : start + step], more=True)
        await ex.body(b"")

    return handler


def tools_json(ex: Exchange) -> bytes:
    return rpc_result(ex.seen.rpc_id, TOOLS)


def tools_sse(ex: Exchange) -> bytes:
    note = (
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
    )
    return sse(note) * 50 + sse(tools_json(ex), event_id="1")


@pytest.mark.parametrize(
    ("coding", "pack", "payload", "content_type", "pieces"),
    [
        ("gzip", gzipped, tools_json, "application/json", 1),
        ("x-gzip", gzipped, tools_json, "application/json", 1),
        ("GZIP", gzipped, tools_json, "application/json", 3),
        ("deflate", zlibbed, tools_json, "application/json", 2),
        ("deflate", raw_deflated, tools_json, "application/json", 2),
        ("gzip", two_members, tools_json, "application/json", 1),
        ("identity, gzip", gzipped, tools_json, "application/json", 1),
        ("gzip", gzipped, tools_sse, "text/event-stream", 7),
        ("deflate", zlibbed, tools_sse, "text/event-stream", 5),
    ],
    ids=[
        "gzip",
        "x-gzip",
        "upper-case-split",
        "deflate-zlib",
        "deflate-raw",
        "gzip-two-members",
        "identity-then-gzip",
        "gzip-sse-split",
        "deflate-sse-split",
    ],
)
async def test_compressed_answers_are_decoded(
    scripted_peer: tuple[FakeMCPServer, str],
    coding: str,
    pack: Callable[[bytes], bytes],
    payload: Callable[[Exchange], bytes],
    content_type: str,
    pieces: int,
) -> None:
    fake, url = scripted_peer
    fake.script(
        "tools/list", coded(coding, pack, payload, content_type=content_type, pieces=pieces)
    )
    with anyio.fail_after(LIMIT):
        async with Client(StreamableHTTPTransport(url), timeout=LIMIT) as client:
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["echo"]
    # Every request asks for exactly what the client can inflate with a bound.
    seen = fake.requests("POST")
    assert seen
    assert {s.headers.get("accept-encoding") for s in seen} == {"gzip, deflate"}


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """64 MiB of text gzipped: about 64 KiB, one network read."""
    return gzip.compress(b"a" * (64 * 1024 * 1024))


def bomb_answer(bomb: bytes, *, events: bool) -> Handler:
    """An answer whose one string member holds the bomb: a gzip body of three members
    (the bomb compressed once, outside the measurement; the server holds only ~64 KiB)."""

    async def handler(ex: Exchange) -> None:
        head = b'{"jsonrpc":"2.0","id":%d,"result":{"x":"' % ex.seen.rpc_id
        tail = b'"}}'
        if events:
            head, tail = b"data: " + head, tail + b"\n\n"
        body = gzip.compress(head) + bomb + gzip.compress(tail)
        content_type = "text/event-stream" if events else "application/json"
        await ex.start(200, content_type, [("content-encoding", "gzip")])
        for start in range(0, len(body), 16384):
            await ex.body(body[start : start + 16384], more=True)
        await ex.body(b"")

    return handler


@pytest.mark.parametrize(
    ("events", "limit"),
    [(False, "max_response_bytes"), (True, "max_event_bytes")],
    ids=["json", "sse"],
)
async def test_a_compression_bomb_is_refused_within_bounded_memory(
    scripted_peer: tuple[FakeMCPServer, str], bomb: bytes, events: bool, limit: str
) -> None:
    fake, url = scripted_peer
    fake.script("tools/list", bomb_answer(bomb, events=events))
    transport = StreamableHTTPTransport(url, max_response_bytes=1 << 20, max_event_bytes=1 << 20)
    with anyio.fail_after(LIMIT):
        async with Client(transport, timeout=LIMIT) as client:
            tracemalloc.start()
            try:
                with pytest.raises(RemoteProtocolError) as info:
                    await client.list_tools()
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert limit in str(info.value)
            await client.ping()  # the channel is fine
    # httpx alone inflates a network read whole: all 64 MiB at once here.
    assert peak < 16 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize(
    ("coding", "body", "error", "text"),
    [
        ("br", b"\x0b\x02\x80{}\x03", RemoteProtocolError, "Content-Encoding 'br'"),
        (
            "gzip, gzip",
            gzipped(gzipped(b"{}")),
            RemoteProtocolError,
            "Content-Encoding 'gzip, gzip'",
        ),
        ("gzip", b"\x1f\x8b\x08\x00garbage-not-gzip", MessageNotDelivered, "invalid gzip data"),
        ("deflate", zlibbed(b"{}") + b"tail", MessageNotDelivered, "follow the end"),
    ],
    ids=["br-not-asked-for", "layered", "corrupt-gzip", "trailing-bytes"],
)
async def test_unusable_codings_fail_the_request_clearly(
    scripted_peer: tuple[FakeMCPServer, str],
    coding: str,
    body: bytes,
    error: type[Exception],
    text: str,
) -> None:
    fake, url = scripted_peer

    async def handler(ex: Exchange) -> None:
        await ex.start(200, "application/json", [("content-encoding", coding)])
        await ex.body(body)

    fake.script("tools/list", handler)
    with anyio.fail_after(LIMIT):
        async with Client(StreamableHTTPTransport(url), timeout=LIMIT) as client:
            with pytest.raises(error) as info:
                await client.list_tools()
            assert text in str(info.value)
            await client.ping()  # only that request failed


class GzipEverything:
    """An ASGI middleware compressing every answer with gzip, flushed per body chunk so a
    stream stays a stream (what a compressing proxy in front of a server does); it
    records each request's Accept-Encoding."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.asked: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        asked = headers.get(b"accept-encoding")
        self.asked.append(None if asked is None else asked.decode())
        packer = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)

        async def send_gzipped(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message["headers"] if k.lower() != b"content-length"]
                message = {**message, "headers": [*kept, (b"content-encoding", b"gzip")]}
            elif message["type"] == "http.response.body":
                more = message.get("more_body", False)
                flush = zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH
                body = packer.compress(message.get("body", b"")) + packer.flush(flush)
                message = {**message, "body": body}
            await send(message)

        await self.app(scope, receive, send_gzipped)


async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    return str(arguments["text"])


async def test_the_legacy_sse_client_inflates_a_gzipped_stream() -> None:
    server = LowLevelServer("echo", "1")
    server.add_tool(Tool(name="echo", input_schema={"type": "object"}), echo)
    app = GzipEverything(SSEApp(server))
    with running_server(app) as running, anyio.fail_after(LIMIT):
        async with Client(SSETransport(running.url + "/sse"), timeout=LIMIT) as client:
            result = await client.call_tool("echo", {"text": "squeezed"})
            assert result.content == [TextContent(text="squeezed")]
    assert app.asked  # the GET stream and the POSTs
    assert set(app.asked) == {"gzip, deflate"}


PACKERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzipped,
    "deflate": zlibbed,
    "raw-deflate": raw_deflated,
    "gzip-members": two_members,
}


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=4096) | st.builds(lambda n: b"z" * n, st.integers(0, 300_000)),
    packer=st.sampled_from(sorted(PACKERS)),
    cuts=st.lists(st.integers(0, 1 << 20), max_size=6),
)
def test_inflating_in_pieces_gives_the_body_back(data: bytes, packer: str, cuts: list[int]) -> None:
    packed = PACKERS[packer](data)
    decoder = body_decoder("deflate" if "deflate" in packer else "gzip")
    assert decoder is not None
    bounds = sorted({0, len(packed), *(c % (len(packed) + 1) for c in cuts)})
    pieces = [piece for a, b in itertools.pairwise(bounds) for piece in decoder.feed(packed[a:b])]
    assert all(0 < len(piece) <= PIECE for piece in pieces)
    assert b"".join(pieces) == data


@settings(max_examples=300, deadline=None)
@given(junk=st.binary(max_size=512), coding=st.sampled_from(["gzip", "deflate"]))
def test_arbitrary_bytes_inflate_or_raise_value_error(junk: bytes, coding: str) -> None:
    decoder = body_decoder(coding)
    assert decoder is not None
    pieces = decoder.feed(junk)
    try:
        sizes = [len(piece) for piece in pieces]
    except ValueError as exc:
        reason = str(exc)
        assert reason.startswith(f"invalid {coding} data") or reason.endswith("deflate data")
    else:
        assert all(size <= PIECE for size in sizes)


async def test_a_body_an_event_hook_has_read_is_still_delivered(
    scripted_peer: tuple[FakeMCPServer, str],
) -> None:
    """A caller's http_client may read answers in a hook (to log them, say): the body is
    then taken as httpx read it."""
    fake, url = scripted_peer
    fake.script("tools/list", coded("gzip", gzipped, tools_json))
    sizes: list[int] = []

    async def log_body(response: httpx.Response) -> None:
        if response.request.method == "POST":
            sizes.append(len(await response.aread()))

    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(event_hooks={"response": [log_body]}) as http:
            transport = StreamableHTTPTransport(url, http_client=http)
            async with Client(transport, timeout=LIMIT) as client:
                tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == ["echo"]
    assert len(sizes) >= 3  # initialize, initialized, tools/list
