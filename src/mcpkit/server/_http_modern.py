"""Streamable HTTP for 2026-07-28: one POST, one request, no session.

2026-07-28 ``basic/transports/streamable-http.mdx``: the endpoint takes POST only (GET and
DELETE get 405); each POST carries one request or notification; there are no sessions and
no resumability; the answer is JSON, or an SSE stream scoped to the request when the
handler emits notifications before its response; closing that stream cancels the request
(no ``notifications/cancelled`` over HTTP). ``Mcp-Method`` must name the body's method and
``Mcp-Name`` its ``params.name`` / ``params.uri`` (SEP-2243), else 400 with -32020. Errors
map to HTTP statuses: -32602, -32020, -32021 and -32022 are 400; -32601 is 404.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from ..protocol import MessageRejected, NotificationReceived, RequestReceived
from ..types import ErrorCode
from ._asgi import Headers, Receive, Send, Sink, pump, respond, respond_error
from ._http_session import HttpSession
from ._http_streams import Exchange
from ._modern import is_modern

if TYPE_CHECKING:
    from ._streamable import StreamableHTTPApp

__all__ = ["ModernExchange", "looks_modern", "post_modern", "status_for"]

_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_BAD_REQUEST_CODES: Final = frozenset(
    {
        ErrorCode.INVALID_PARAMS,
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
#: Methods whose target is named by ``Mcp-Name``, and the params member that names it.
_NAMED: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_SENTINEL_START: Final = "=?base64?"
_SENTINEL_END: Final = "?="


class _ErrorCode(msgspec.Struct):
    code: int


class _Answer(msgspec.Struct):
    error: _ErrorCode | None = None


class _Target(msgspec.Struct):
    name: Any = None
    uri: Any = None


_ANSWER: Final = msgspec.json.Decoder(_Answer)
_TARGET: Final = msgspec.json.Decoder(_Target)


def status_for(response: bytes) -> int:
    """The HTTP status of a POST answered by ``response`` (2026-07-28)."""
    try:
        error = _ANSWER.decode(response).error
    except msgspec.DecodeError:
        return 200
    if error is None:
        return 200
    if error.code == ErrorCode.METHOD_NOT_FOUND:
        return 404
    return 400 if error.code in _BAD_REQUEST_CODES else 200


def decode_header_value(value: str) -> str | None:
    """A header value with the ``=?base64?...?=`` sentinel decoded (SEP-2243), or ``None``
    when the sentinel's content is not base64 of UTF-8."""
    if value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END):
        inner = value[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            return base64.b64decode(inner, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


class ModernExchange(Exchange):
    """The reply route of a 2026-07-28 POST: the session layer reads ``protocol_version``
    (the ``MCP-Protocol-Version`` header); ``wake`` is set by the first message the
    handler emits, or by the end of the exchange."""

    __slots__ = ("protocol_version", "wake")

    def __init__(self, session: HttpSession, protocol_version: str | None) -> None:
        super().__init__(session, sse=True)
        self.protocol_version = protocol_version
        self.wake = anyio.Event()

    async def send(self, message: bytes) -> None:
        await super().send(message)
        self.wake.set()

    async def finish(self, message: bytes | None) -> None:
        await super().finish(message)
        if self.done.is_set():
            self.wake.set()

    def expect(self, count: int) -> None:
        # A request answered during dispatch (by the gate) finishes before this call.
        super().expect(count)
        if self.done.is_set():
            self.wake.set()


def _header_problem(event: RequestReceived, headers: Headers) -> str | None:
    """Why ``Mcp-Method`` / ``Mcp-Name`` do not match the body, or ``None``."""
    method = headers.text(b"mcp-method")
    if method is None:
        return "the Mcp-Method header is required"
    if method != event.method:
        return f"Mcp-Method {method[:60]!r} does not match the body's method {event.method!r}"
    member = _NAMED.get(event.method)
    if member is None:
        return None
    try:
        target = _TARGET.decode(event.params or b"{}")
    except msgspec.DecodeError:
        return None  # the params decoder reports malformed params
    expected = getattr(target, member)
    if not isinstance(expected, str):
        return None
    raw = headers.text(b"mcp-name")
    if raw is None:
        return f"the Mcp-Name header is required for {event.method}"
    if decode_header_value(raw) != expected:
        return f"Mcp-Name does not match params.{member}"
    return None


async def _until_woken_or_gone(exchange: ModernExchange, receive: Receive) -> bool:
    """Wait for the handler's first message or its end; False if the client left first."""
    gone = False
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        await exchange.wake.wait()
        tg.cancel_scope.cancel()
    return not gone


async def post_modern(
    app: StreamableHTTPApp,
    body: bytes,
    receive: Receive,
    send: Send,
    headers: Headers,
    cors: list[Any],
) -> None:
    """Answer one 2026-07-28 POST (already checked for content type, Accept and size)."""
    version = headers.text(b"mcp-protocol-version")
    session = HttpSession(app.server, None, store=None, retry_ms=None)
    event = session.endpoint.connection.receive_message(body)
    if isinstance(event, MessageRejected):
        if event.reply is not None:
            await respond(send, 400, event.reply, headers=cors)
        elif event.level == "debug":
            await respond(send, 202, headers=cors)  # an expected race, e.g. a late cancel
        else:
            await respond_error(send, 400, f"Bad Request: {event.reason}", headers=cors)
        return
    if isinstance(event, NotificationReceived):
        await respond(send, 202, headers=cors)  # no client notification is used over HTTP
        return
    if not isinstance(event, RequestReceived):
        await respond_error(
            send,
            400,
            "Bad Request: a 2026-07-28 POST carries one request or notification",
            headers=cors,
        )
        return
    problem = _header_problem(event, headers)
    if problem is not None:
        reply = session.endpoint.connection.send_error(
            event.request_id, ErrorCode.HEADER_MISMATCH, f"Header mismatch: {problem}"
        )
        await respond(send, 400, reply or b"", headers=cors)
        return
    tg = await app._ensure_runner()
    session.start(tg)
    exchange = ModernExchange(session, version)
    session.exchanges.add(exchange)
    try:
        exchange.expect(await session.endpoint.dispatch(event, exchange))
        if not await _until_woken_or_gone(exchange, receive):
            return  # closing the response cancels the request: the session ends below
        if exchange.done.is_set() and not exchange.early:
            [response] = exchange.responses or [b""]
            if not response:
                await respond(send, 202, headers=cors)
            else:
                await respond(send, status_for(response), response, headers=cors)
            return
        stream = session.new_stream()
        sink = Sink(app.max_stream_buffer)
        await exchange.start_stream(stream, sink, prime=False)
        await send(
            {"type": "http.response.start", "status": 200, "headers": [*_SSE_HEADERS, *cors]}
        )
        await pump(sink, send, receive, keepalive=app.keepalive, on_gone=lambda: None)
    finally:
        session.exchanges.discard(exchange)
        app.drop(session)  # cancels what still runs: a closed stream is a cancellation


class _Probe(msgspec.Struct):
    method: Any = None
    params: msgspec.Raw | None = None


_PROBE: Final = msgspec.json.Decoder(_Probe)


def looks_modern(body: bytes) -> bool:
    """Whether a POST without version header or session is a 2026-07-28 request."""
    try:
        probe = _PROBE.decode(body)
    except msgspec.DecodeError:
        return False
    return isinstance(probe.method, str) and is_modern(probe.method, probe.params)
