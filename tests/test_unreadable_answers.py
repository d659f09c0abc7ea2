"""An answer to one of our requests that cannot be decoded (invalid UTF-8, nested deeper
than the limit, larger than the limit) fails that call at once with the reason, instead
of being dropped as an anonymous parse error while the call waits for its timeout. The
id is read leniently, only to attribute the failure: a message naming a method, an
unknown id, or one with neither result nor error stays an ordinary rejection.

The protocol rules as a table (no event loop), then end to end: a stdio server process
and a Streamable HTTP server (JSON body and SSE event) that answer with such bytes.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import RemoteProtocolError
from mcpkit.protocol import (
    Connection,
    FrameTooLarge,
    Limits,
    LineBuffer,
    MessageRejected,
    ResponseInvalid,
)
from mcpkit.transports import StdioTransport, StreamableHTTPTransport

from ._fake_mcp_http import FakeMCPServer, reply, sse, stream
from ._httpserver import running_server

BAD_UTF8 = b'{"jsonrpc":"2.0","id":1,"result":{"x":"\xff"}}'
TOO_DEEP = b'{"jsonrpc":"2.0","id":1,"result":{"x":' + b"[" * 200 + b"]" * 200 + b"}}"
TOO_BIG = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"x": "a" * 500}}).encode()
SMALL = Limits(max_message_bytes=300)

#: (name, bytes, limits, the reason's beginning)
FAILS_THE_CALL: list[tuple[str, bytes, Limits, str]] = [
    ("invalid UTF-8 in the result", BAD_UTF8, Limits(), "Parse error: invalid UTF-8"),
    (
        "invalid UTF-8 in the error",
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"\xff"}}',
        Limits(),
        "Parse error: invalid UTF-8",
    ),
    ("nested deeper than the limit", TOO_DEEP, Limits(), "Parse error: JSON nests deeper"),
    ("larger than the limit", TOO_BIG, SMALL, "Parse error: message of"),
]

#: (name, bytes): refused as before, and the call still waits for its answer.
STAYS_ANONYMOUS: list[tuple[str, bytes]] = [
    ("an unknown id", BAD_UTF8.replace(b'"id":1', b'"id":99')),
    ("the same id as a string", BAD_UTF8.replace(b'"id":1', b'"id":"1"')),
    ("a boolean id", BAD_UTF8.replace(b'"id":1', b'"id":true')),
    ("a request (it names a method)", b'{"jsonrpc":"2.0","id":1,"method":"x","params":"\xff"}'),
    ("neither result nor error", b'{"jsonrpc":"2.0","id":1,"x":"\xff"}'),
    ("not JSON at all", b'{"jsonrpc":"2.0","id":1,"result":'),
]


def pending_call(limits: Limits) -> Connection:
    connection = Connection(limits=limits)
    rid, _ = connection.send_request("tools/list")
    assert rid == 1
    return connection


@pytest.mark.parametrize(
    ("data", "limits", "reason"),
    [row[1:] for row in FAILS_THE_CALL],
    ids=[row[0] for row in FAILS_THE_CALL],
)
def test_an_unreadable_answer_fails_its_call(data: bytes, limits: Limits, reason: str) -> None:
    connection = pending_call(limits)
    event = connection.receive_message(data)
    assert isinstance(event, ResponseInvalid), event
    assert event.request_id == 1
    assert event.reason.startswith(reason), event.reason
    assert connection.pending_ids == []
    # Answered now: the same bytes again are an anonymous parse error.
    assert isinstance(connection.receive_message(data), MessageRejected)


@pytest.mark.parametrize(
    "data", [row[1] for row in STAYS_ANONYMOUS], ids=[row[0] for row in STAYS_ANONYMOUS]
)
def test_what_cannot_be_attributed_is_rejected_as_before(data: bytes) -> None:
    connection = pending_call(Limits())
    event = connection.receive_message(data)
    assert isinstance(event, MessageRejected), event
    assert connection.pending_ids == [1]


# -- a line the framing discarded as too long: only its head is known --------------------

#: (name, head of the discarded line, whether it is taken as request 1's answer)
HEADS: list[tuple[str, bytes, bool]] = [
    ("id before result", b'{"jsonrpc":"2.0","id":1,"result":{"x":"aaaa', True),
    ("id before error", b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"mess', True),
    ("spaced", b'{ "jsonrpc": "2.0", "id": 1, "result": "aaaa', True),
    ("id after result", b'{"jsonrpc":"2.0","result":{"x":"aaaa', False),
    ("a request", b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a', False),
    ("an unknown id", b'{"jsonrpc":"2.0","id":7,"result":{"x":"aaaa', False),
    ("a string id for an integer one", b'{"jsonrpc":"2.0","id":"1","result":{"', False),
    ("cut inside the id", b'{"jsonrpc":"2.0","id":"abc', False),
    ("not an object", b'["jsonrpc","2.0","id",1,"result"', False),
]


@pytest.mark.parametrize(
    ("head", "attributed"), [row[1:] for row in HEADS], ids=[row[0] for row in HEADS]
)
def test_an_oversized_answer_fails_its_call_when_its_head_names_it(
    head: bytes, attributed: bool
) -> None:
    connection = pending_call(Limits())
    event = connection.receive_oversized(100, head)
    if attributed:
        assert isinstance(event, ResponseInvalid), event
        assert event.request_id == 1
        assert "exceeds the limit of 100 bytes" in event.reason
        assert connection.pending_ids == []
    else:
        assert isinstance(event, MessageRejected), event
        assert connection.pending_ids == [1]


def test_the_framing_keeps_the_head_of_a_discarded_line() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"a" * 5000 + b'"}}'
    for chunks in ([line + b"\n"], [line[:3000], line[3000:] + b"\n"], [line]):
        buffer = LineBuffer(1000)
        frames = []
        for chunk in chunks:
            buffer.feed(chunk)
            while (frame := buffer.next_frame()) is not None:
                frames.append(frame)
        last = buffer.end_of_input()
        if last is not None:
            frames.append(last)
        (frame,) = frames
        assert isinstance(frame, FrameTooLarge)
        assert frame.limit == 1000
        assert frame.head == line[:256]


# -- end to end --------------------------------------------------------------------------

#: A stdio server that completes the handshake, then answers tools/list with bad UTF-8
#: and resources/list with a line of over 5,000 bytes.
STDIO_SERVER = textwrap.dedent(
    """
    import json, sys
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bad", "version": "1"}}
            out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                  "result": result}).encode() + b"\\n")
        elif message.get("method") == "tools/list":
            out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[],"x":"\\xff"}}\\n'
                      % message["id"])
        elif message.get("method") == "resources/list":
            out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"resources":[],"x":"%s"}}\\n'
                      % (message["id"], b"a" * 5000))
        elif message.get("method") == "ping":
            out.write(b'{"jsonrpc":"2.0","id":%d,"result":{}}\\n' % message["id"])
        out.flush()
    """
)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("method", "reason"),
    [("tools/list", "invalid UTF-8"), ("resources/list", "exceeds the limit of 4096")],
    ids=["invalid UTF-8", "over the line limit"],
)
async def test_over_stdio_the_call_fails_at_once_and_the_connection_goes_on(
    anyio_backend: str, method: str, reason: str
) -> None:
    transport = StdioTransport(
        sys.executable, ["-c", STDIO_SERVER], stderr="devnull", limits=Limits(4096)
    )
    with anyio.fail_after(20):
        async with Client(transport, era="handshake", timeout=30) as client:
            started = time.monotonic()
            with pytest.raises(RemoteProtocolError, match=reason):
                await client.request(method, {}, dict)
            assert time.monotonic() - started < 10  # not the 30 s timeout
            await client.ping()


def tools_list_answer(sse_event: bool) -> Any:
    async def handler(ex: Any) -> None:
        data = b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[],"x":"\xff"}}' % ex.seen.rpc_id
        if sse_event:
            await stream(sse(data, event_id="1"))(ex)
        else:
            await reply(200, data)(ex)

    return handler


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("sse_event", [False, True], ids=["json", "sse"])
async def test_over_http_the_call_fails_at_once(anyio_backend: str, sse_event: bool) -> None:
    fake = FakeMCPServer()
    fake.script("tools/list", tools_list_answer(sse_event))
    with running_server(fake) as server:
        transport = StreamableHTTPTransport(server.url + "/mcp")
        with anyio.fail_after(20):
            async with Client(transport, era="handshake", timeout=30) as client:
                started = time.monotonic()
                with pytest.raises(RemoteProtocolError, match="invalid UTF-8"):
                    await client.list_tools()
                assert time.monotonic() - started < 10
                await client.ping()
