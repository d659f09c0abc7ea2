"""Small ASGI helpers shared by mcpkit's HTTP server transports (no framework needed).

ASGI is a calling convention, not a library: an app is ``async def app(scope, receive,
send)``. These helpers read a request's headers and body within limits, write plain and
JSON-RPC error responses (SSE responses: ``_asgi_sse.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, NamedTuple

import anyio

from ..aio._inline import resume
from ..protocol import encode_error, media_type
from ..types import ErrorCode
from ..types._echo import peer_text

__all__ = [
    "ASGIApp",
    "Headers",
    "Receive",
    "Refusal",
    "Scope",
    "Send",
    "cors_headers",
    "until_disconnected",
    "is_json",
    "path_matches",
    "read_body",
    "read_headers",
    "refuse_body",
    "respond",
    "respond_busy",
    "respond_error",
]

logger = logging.getLogger("mcpkit.server.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Headers exposed to browser clients (CORS) and accepted in preflight requests.
EXPOSED_HEADERS: Final = b"mcp-session-id, mcp-protocol-version"
ALLOWED_HEADERS: Final = (
    b"content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id"
)
_JSON: Final = b"application/json"


_NO_NAMES: Final[frozenset[bytes]] = frozenset()


class Headers:
    """The request headers an MCP transport looks at, read once from the ASGI scope.

    Attributes:
        values: lower-case name -> value (the last one, for a repeated name).
        duplicated: names that appeared more than once (ambiguous for single-valued
            headers, which are refused; list-valued ones are read with :meth:`joined`).
        size: bytes in the whole header block.
    """

    __slots__ = ("_pairs", "duplicated", "get", "size", "values")

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        pairs = raw if isinstance(raw, list) else list(raw)
        # One plain loop builds the table (the last value wins, as dict(pairs) would) and
        # counts the header block: on CPython 3.11 about 4,200 instructions less than
        # dict(pairs) and sum(map(len, chain.from_iterable(pairs))), which makes an
        # iterator per pair. This runs for every request.
        values: dict[bytes, bytes] = {}
        size = 4 * len(pairs)
        for name, value in pairs:
            values[name] = value
            size += len(name) + len(value)
        self.values = values
        self.size = size
        #: A header's value, ``None`` if absent (the dict's own ``get``: no extra call).
        self.get: Callable[[bytes], bytes | None] = values.get
        self.duplicated: AbstractSet[bytes] = _NO_NAMES
        self._pairs = pairs
        if len(values) != len(pairs):
            seen: set[bytes] = set()
            duplicated: set[bytes] = set()
            for name, _ in pairs:
                if name in seen:
                    duplicated.add(name)
                seen.add(name)
            self.duplicated = duplicated

    def text(self, name: bytes) -> str | None:
        value = self.values.get(name)
        return None if value is None else value.decode("latin-1")

    def joined(self, name: bytes) -> bytes | None:
        """A list-valued header's value (``Accept``, say), its field lines joined with
        ", " when it was sent in several (RFC 9110 section 5.3: a recipient may combine
        them so, in order, without changing the meaning); ``None`` if absent."""
        if name not in self.duplicated:
            return self.values.get(name)
        return b", ".join(value for key, value in self._pairs if key == name)


#: ``Content-Type`` verdicts by raw value: a server sees a handful of distinct values.
_JSON_VERDICTS: dict[bytes | None, bool] = {}
_MEMO_LIMIT: Final = 64


def is_json(content_type: bytes | None) -> bool:
    """Whether a ``Content-Type`` value is ``application/json`` (parameters aside)."""
    verdict = _JSON_VERDICTS.get(content_type)
    if verdict is None:
        verdict = media_type(content_type) == "application/json"
        if len(_JSON_VERDICTS) >= _MEMO_LIMIT:
            _JSON_VERDICTS.clear()  # bounded: many distinct values just stop benefiting
        _JSON_VERDICTS[content_type] = verdict
    return verdict


def read_headers(scope: Scope) -> Headers:
    """The request's headers (ASGI gives lower-case names)."""
    return Headers(scope["headers"])


def error_body(code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error response without an id, as HTTP error bodies carry
    (``basic/transports.mdx``: "MAY comprise a JSON-RPC error response that has no id")."""
    from msgspec import UNSET

    return encode_error(None, code, message, UNSET if data is None else data)


_CLOSE: Final = (b"connection", b"close")


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: bytes | None = _JSON,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Send a complete response."""
    head = [(b"content-length", b"%d" % len(body))]
    if content_type is not None and body:
        head.append((b"content-type", content_type))
    if headers:
        head.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def respond_error(
    send: Send,
    status: int,
    message: str,
    *,
    code: int = ErrorCode.INVALID_REQUEST,
    data: Any = None,
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    """Send an HTTP error status with a JSON-RPC error body that says what was wrong."""
    logger.debug("HTTP %d: %s", status, message)
    await respond(send, status, error_body(code, message, data), headers=headers)


async def respond_busy(
    send: Send, reason: str, *, retry_after: int, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """503 with a JSON-RPC error (-32000, server busy) saying why, and ``Retry-After``."""
    await respond_error(
        send,
        503,
        f"Service Unavailable: {reason}",
        code=ErrorCode.SERVER_BUSY,
        headers=[*headers, (b"retry-after", b"%d" % retry_after)],
    )


async def refuse_media_type(
    send: Send, cors: Iterable[tuple[bytes, bytes]], headers: Headers | None = None
) -> None:
    """415 for a POST body that is not ``application/json``; 400 when ``headers`` has
    ``Content-Type`` more than once (a single-valued field, RFC 9110 section 5.3: which
    line counts is ambiguous, and a proxy may read the other one)."""
    if headers is not None and b"content-type" in headers.duplicated:
        await respond_error(
            send, 400, "Bad Request: more than one Content-Type header", headers=cors
        )
        return
    await respond_error(
        send, 415, "Unsupported Media Type: POST bodies must be application/json", headers=cors
    )


async def until_disconnected(receive: Receive) -> None:
    """Return once the client has gone (``http.disconnect``), reading past anything else
    the request still delivers."""
    while (await receive())["type"] != "http.disconnect":
        pass


def cors_headers(headers: Headers) -> list[tuple[bytes, bytes]]:
    """CORS headers for an already validated Origin (none without an Origin)."""
    origin = headers.get(b"origin")
    if origin is None:
        return []
    return [
        (b"access-control-allow-origin", origin),
        (b"access-control-expose-headers", EXPOSED_HEADERS),
        (b"vary", b"origin"),
    ]


class Refusal(NamedTuple):
    """Why :func:`read_body` refused a body: the status, a reason for the client,
    whether the connection must close after the answer (some of the body left unread),
    and any headers the answer needs."""

    status: int
    reason: str
    close: bool
    headers: tuple[tuple[bytes, bytes], ...] = ()


_IDENTITY_ONLY: Final = ((b"accept-encoding", b"identity"),)


def _too_large(limit: int, *, close: bool) -> Refusal:
    return Refusal(413, f"Payload Too Large: the body limit is {limit} bytes", close)


async def read_body(
    receive: Receive, headers: Headers, *, limit: int, timeout: float
) -> bytes | Refusal:
    """Read the whole request body, or return the :class:`Refusal` to answer with.

    A declared ``Content-Length`` over ``limit`` is refused before a byte is read; a body
    that grows past ``limit`` while streaming (chunked) is refused once it ends or passes
    twice the limit (413, RFC 9110 section 15.5.14). A body not complete within
    ``timeout`` seconds is refused with 408, so a client trickling bytes cannot hold a
    worker. A compressed body (any ``Content-Encoding`` but ``identity``) is refused with
    415 unread: MCP messages are sent as they are.

    Whether the connection closes: after the answer, the server reads and discards the
    unread rest before the connection's next request (uvicorn: for as long as the client
    sends). That is what lets an honest client that is still sending read the answer:
    closing on unread input makes the kernel reset the connection, which can destroy the
    answer in flight (RFC 9112 section 9.6). So the connection is closed only where the
    rest is not worth waiting for: a body that trickles (408), a length that cannot be
    framed (400), or a body over twice the limit, announced or sent (chunked: its end is
    unknown, and a sender that never stops would be read forever).
    """
    declared = headers.get(b"content-length")
    if declared is not None:
        if not declared.isdigit() or len(declared) > 18:
            return Refusal(400, "Bad Request: invalid Content-Length", True)
        if int(declared) > limit:
            return _too_large(limit, close=int(declared) > 2 * limit)
    coding = headers.get(b"content-encoding")
    if coding is not None and coding.strip().lower() != b"identity":
        # A compressed body would read as a parse error, and inflating it would need its
        # own bound: 415 names the problem, and Accept-Encoding what would be accepted
        # (RFC 9110 sections 8.4 and 15.5.16).
        return Refusal(
            415,
            f"Unsupported Media Type: Content-Encoding {peer_text(coding.decode('latin-1'))} "
            "is not accepted; send the body uncompressed",
            declared is None or int(declared) > 2 * limit,
            _IDENTITY_ONLY,
        )
    # (inlined memo lookup: this is on every POST's path)
    function = getattr(receive, "__func__", None)
    steppable = _STEPPABLE_VERDICTS.get(function)
    if steppable is None:
        steppable = _steppable(function)
    if steppable:
        # Fast path: the whole body usually arrives in one message, already received, so
        # that receive() completes without waiting; only one that has to wait pays for
        # the timeout (a client that sent its headers and no body must not hold the
        # request: 4 us per POST for the cancel scope otherwise).
        waiting = receive().__await__()
        try:
            pending = waiting.send(None)
        except StopIteration as done:
            message = done.value
        else:
            message = None
            with anyio.move_on_after(timeout):
                message = await resume(waiting, pending)
            if message is None:
                waiting.close()
                return _timed_out(timeout)
    else:
        message = None
        with anyio.move_on_after(timeout):
            message = await receive()
        if message is None:
            return _timed_out(timeout)
    if message["type"] != "http.request":
        return Refusal(400, "Bad Request: the client disconnected", True)
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return body if len(body) <= limit else _too_large(limit, close=False)
    # One buffer, not a list of the chunks: a client sending its body a few bytes at a
    # time would make a list hold ~40 bytes per chunk, ten times the limit and more.
    buffer = bytearray(body)
    size = len(body)
    with anyio.move_on_after(timeout):
        while True:
            if size > 2 * limit:  # the rest may be endless: answer now, then close
                return _too_large(limit, close=True)
            message = await receive()
            if message["type"] != "http.request":
                return Refusal(400, "Bad Request: the client disconnected", True)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= limit:  # past it, the rest is only counted (read to its end)
                buffer += chunk
            if not message.get("more_body", False):
                return bytes(buffer) if size <= limit else _too_large(limit, close=False)
    if size > limit:  # too large and too slow: the size is the answer
        return _too_large(limit, close=True)
    return _timed_out(timeout)


#: Modules whose receive callables enter no cancel scope of their own (uvicorn's waits
#: on an asyncio.Event; hypercorn's are an asyncio queue's or a trio channel's get), so a
#: first step that suspends can be resumed inside the timeout's scope. Any other receive
#: (Starlette's BaseHTTPMiddleware wraps it in a task group) is awaited inside the scope
#: from the start: resuming it there would exit its own scope out of order (anyio
#: raises RuntimeError, and every POST was answered 500).
_STEPPABLE: Final = ("uvicorn.protocols.http.", "asyncio.queues", "trio._channel")
_STEPPABLE_VERDICTS: dict[object, bool] = {}


def _steppable(function: object) -> bool:
    """Whether ``function`` (a receive bound method's ``__func__``) is one of those."""
    module = getattr(function, "__module__", None)
    verdict = isinstance(module, str) and module.startswith(_STEPPABLE)
    if len(_STEPPABLE_VERDICTS) < _MEMO_LIMIT:
        _STEPPABLE_VERDICTS[function] = verdict
    return verdict


def _timed_out(timeout: float) -> Refusal:
    return Refusal(408, f"Request Timeout: the body did not arrive within {timeout:g} s", True)


async def refuse_body(
    send: Send, refusal: Refusal, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """Answer a refusal of :func:`read_body` (``connection: close`` where it says so)."""
    extra = [*headers, *refusal.headers]
    if refusal.close:
        extra.append(_CLOSE)
    await respond_error(send, refusal.status, refusal.reason, headers=extra)


def path_matches(scope: Scope, path: str) -> bool:
    """Whether the request's path, less the app's ``root_path`` (where it is mounted), is
    ``path`` (a trailing slash either way is the same endpoint)."""
    found: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and found.startswith(root):
        found = found[len(root) :] or "/"
    return found == path or found.rstrip("/") == path.rstrip("/")
