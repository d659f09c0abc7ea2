"""A reference, not a contender for users: the least work a stateful MCP endpoint does per
``tools/call`` POST, written flat, in one function, on the same runner as the others.

Per POST it does what any correct stateful server must: one pass over the headers (their
size, a memo of header values already checked, Host allowlisted the first time), the
session looked up by ``Mcp-Session-Id`` (404 without it), the body read, the JSON-RPC
envelope decoded (``jsonrpc`` exactly "2.0", unknown members refused) with ``params`` kept
raw, the request id refused while in flight, the params decoded into mcpkit's
``CallToolRequestParams``, the arguments checked against the tool's input schema (mcpkit's
compiled validator), the tool (``async def echo(text)``) awaited, its text wrapped in
mcpkit's ``CallToolResult``, the response encoded, the session's last activity stamped.
``initialize`` opens a session (a random id); a notification gets 202.

What it leaves out is what mcpkit's layers add: the strict duplicate-member and
compactness checks of the decoder, the handshake gate and the methods of each protocol
version, cancellation by the peer and by the session's end, progress, the request context
a tool can use, messages sent during a call, the late answer at a session's end, SSE
answers, batches, every error path. So ``mcpkit/flat`` shows what those cost per request,
and how far a leaner request path could go (bench/README.md, thirteenth session).

Run: ``python bench/flat_http_server.py [--port N]``. Prints ``flat: serving HTTP on
<url>`` on stderr once it listens.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from time import monotonic
from typing import Any, Final, Literal

import msgspec

from bare_http_server import app as bare_app
from bare_http_server import serve_main
from mcpkit.protocol._jsonschema import compile_schema
from mcpkit.types import CallToolRequestParams, CallToolResult, TextContent

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    jsonrpc: Literal["2.0"]
    method: str
    id: int | str | None = None
    params: msgspec.Raw = msgspec.Raw(b"{}")


class _Response(msgspec.Struct, gc=False):
    jsonrpc: str
    id: int | str
    result: Any


class _Session:
    __slots__ = ("in_flight", "last_active")

    def __init__(self) -> None:
        self.in_flight: set[int | str] = set()
        self.last_active = monotonic()


_decode: Final = msgspec.json.Decoder(_Envelope).decode
_decode_params: Final = msgspec.json.Decoder(CallToolRequestParams).decode
_encode: Final = msgspec.json.Encoder().encode
_JSON: Final = (b"content-type", b"application/json")
_MAX_HEADER_BYTES: Final = 16 * 1024
_INIT_RESULT: Final = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "flat", "version": "1"},
}

#: The header values a POST's checks depend on alone (mcpkit memoizes the same ones).
_MEMO_HEADERS: Final = (b"host", b"origin", b"content-type", b"accept", b"mcp-protocol-version")

_sessions: dict[bytes, _Session] = {}
_passed: set[tuple[bytes | None, ...]] = set()


async def echo(text: str) -> str:
    return text


_TOOLS: Final = {
    "echo": (
        echo,
        compile_schema(
            {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        ),
    )
}


async def _respond(send: Send, status: int, body: bytes, headers: list[Any]) -> None:
    headers = [(b"content-length", b"%d" % len(body)), *headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        await bare_app(scope, receive, send)  # (the lifespan)
        return
    pairs = scope["headers"]
    headers = dict(pairs)
    if sum(len(name) + len(value) for name, value in pairs) > _MAX_HEADER_BYTES:
        await _respond(send, 431, b"", [])
        return
    key = tuple(map(headers.get, _MEMO_HEADERS))
    if key not in _passed:
        if key[0] is None or key[0].split(b":")[0] not in (b"127.0.0.1", b"localhost"):
            await _respond(send, 403, b"", [])
            return
        _passed.add(key)
    raw = headers.get(b"mcp-session-id")
    session = _sessions.get(raw) if raw is not None else None
    if raw is not None and session is None:
        await _respond(send, 404, b"", [])
        return
    body = (await receive())["body"]
    message = _decode(body)
    rid = message.id
    if rid is None:
        await _respond(send, 202, b"", [])
        return
    if session is None:  # initialize
        sid = secrets.token_hex(16).encode()
        _sessions[sid] = _Session()
        answer = _encode(_Response("2.0", rid, _INIT_RESULT))
        await _respond(send, 200, answer, [_JSON, (b"mcp-session-id", sid)])
        return
    if rid in session.in_flight:
        raise RuntimeError("a request id in flight was reused")
    session.in_flight.add(rid)
    try:
        params = _decode_params(message.params)
        tool, schema = _TOOLS[params.name]
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        if not schema.is_valid(arguments):
            raise RuntimeError("invalid arguments")
        text = await tool(**arguments)
        answer = _encode(_Response("2.0", rid, CallToolResult(content=[TextContent(text=text)])))
    finally:
        session.in_flight.discard(rid)
    session.last_active = monotonic()
    await _respond(send, 200, answer, [_JSON])


def main() -> None:
    serve_main("flat", app)


if __name__ == "__main__":
    main()
