"""Streamable HTTP for 2026-07-28: one POST, one request, no session.

2026-07-28 ``basic/transports/streamable-http.mdx``: the endpoint takes POST only (GET and
DELETE get 405); each POST carries one request or notification; there are no sessions and
no resumability; the answer is JSON, or an SSE stream scoped to the request when the
handler emits notifications before its response; closing that stream cancels the request
(no ``notifications/cancelled`` over HTTP). ``Mcp-Method`` must name the body's method and
``Mcp-Name`` its ``params.name`` / ``params.uri``, and a ``tools/call`` carries one
``Mcp-Param-{Name}`` per argument the tool annotates with ``x-mcp-header`` (SEP-2243;
the rules live in :mod:`mcpkit.protocol`), else 400 with -32020. Errors
map to HTTP statuses: -32602, -32020, -32021 and -32022 are 400; -32601 is 404.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from ..aio import Flag
from ..protocol import (
    NAMED_METHODS,
    MessageRejected,
    NotificationReceived,
    ParamHeader,
    RequestReceived,
    encode_error,
    request_header_problem,
)
from ..types import META_PROTOCOL_VERSION, ErrorCode
from ..types._echo import peer_text
from ._asgi import Headers, Receive, Send, respond, respond_error
from ._http_modern_reply import Reply
from ._http_session import HttpSession
from ._http_streams import Exchange, LateAnswer, ended_answer
from ._modern import is_modern

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer
    from ._streamable import StreamableHTTPApp

__all__ = [
    "VERSION_KEY",
    "ModernExchange",
    "era_mismatch",
    "looks_modern",
    "post_modern",
    "status_for",
]

logger = logging.getLogger("mcpkit.server.http")

_BAD_REQUEST_CODES: Final = frozenset(
    {
        ErrorCode.INVALID_PARAMS,
        ErrorCode.HEADER_MISMATCH,
        ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
    }
)
#: The standard headers checked against the body (``Mcp-Param-*`` are checked too).
_CHECKED_NAMES: Final = (b"mcp-method", b"mcp-name")
#: :func:`_header_problem`'s verdicts by (method, its target's name and URI, Mcp-Method,
#: Mcp-Name), when no argument is mirrored.
_VERDICTS: dict[tuple[Any, ...], str | None] = {}
_VERDICTS_LIMIT: Final = 256
_KEYABLE: Final = (str, type(None))


class _ErrorCode(msgspec.Struct):
    code: int


class _Answer(msgspec.Struct):
    error: _ErrorCode | None = None


class _Target(msgspec.Struct):
    name: Any = None
    uri: Any = None


class _Arguments(msgspec.Struct):
    arguments: Any = None


_ANSWER: Final = msgspec.json.Decoder(_Answer)
_TARGET: Final = msgspec.json.Decoder(_Target)
_ARGUMENTS: Final = msgspec.json.Decoder(_Arguments)


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


class ModernExchange(Exchange):
    """The reply route of a 2026-07-28 POST: the session layer reads ``protocol_version``
    (the ``MCP-Protocol-Version`` header); ``wake`` is set by the first message the
    handler emits, or by the end of the exchange."""

    __slots__ = ("wake",)

    def __init__(
        self, session: HttpSession, protocol_version: str | None, late: LateAnswer
    ) -> None:
        Exchange.__init__(self, session, True, protocol_version, late)  # (positional)
        self.wake = Flag()  # (an anyio.Event costs a backend lookup per POST)

    async def send(self, message: bytes) -> None:
        await super().send(message)
        self.wake.set()

    async def finish(self, message: bytes | None) -> None:
        await super().finish(message)
        if self.done.is_set():
            self.wake.set()

    def abort(self) -> None:
        super().abort()
        self.wake.set()  # (the POST waits on it, not on done)

    def expect(self, count: int) -> bool:
        # A request answered during dispatch (by the gate) finishes before this call.
        done = super().expect(count)
        if self.done.is_set():
            self.wake.set()
        return done


def _header_problem(server: LowLevelServer, event: RequestReceived, headers: Headers) -> str | None:
    """Why the MCP headers do not match the body (SEP-2243), or ``None``."""
    if headers.get(b"mcp-protocol-version") is None:
        # transports.mdx (2026-07-28): "Every POST request to the MCP endpoint MUST
        # include an MCP-Protocol-Version header".
        return "the MCP-Protocol-Version header is required"
    named = event.method in NAMED_METHODS
    name: Any = None
    uri: Any = None
    arguments: Any = None
    mirrored: tuple[ParamHeader, ...] = ()
    if named:
        try:
            # The name alone first: the arguments are decoded twice only for a tool that
            # mirrors some of them.
            target = _TARGET.decode(event.params or b"{}")
            name, uri = target.name, target.uri
            if event.method == "tools/call" and isinstance(name, str):
                mirrored = server.param_headers(name)
            if mirrored:
                arguments = _ARGUMENTS.decode(event.params or b"{}").arguments
        except msgspec.DecodeError:
            return None  # the params decoder reports malformed params
    key = None
    if not mirrored and not headers.duplicated and type(name) in _KEYABLE and type(uri) in _KEYABLE:
        # Then the verdict depends on these alone, which a client repeats from one POST to
        # the next: it is remembered (for a text or absent target; bounded).
        get = headers.values.get
        key = (event.method, name, uri, get(b"mcp-method"), get(b"mcp-name"))
        if key in _VERDICTS:
            return _VERDICTS[key]
    params: dict[str, Any] | None = None
    if named:
        params = {"name": name, "uri": uri}
        if mirrored:
            params["arguments"] = arguments
    problem = _compare(event, headers, params, mirrored)
    if key is not None:
        if len(_VERDICTS) >= _VERDICTS_LIMIT:
            _VERDICTS.clear()
        _VERDICTS[key] = problem
    return problem


def _compare(
    event: RequestReceived,
    headers: Headers,
    params: dict[str, Any] | None,
    mirrored: tuple[ParamHeader, ...],
) -> str | None:
    # One header twice is ambiguous: a proxy may read one copy and the server the other.
    # Unrecognized Mcp-Param-* headers are ignored, repeated or not ("Server Behavior for
    # Custom Headers").
    names: tuple[bytes, ...] = _CHECKED_NAMES
    if mirrored:
        names = (*names, *(p.header.lower().encode("ascii") for p in mirrored))
    if headers.duplicated:
        repeated = [name for name in names if name in headers.duplicated]
        if repeated:
            return f"more than one {min(repeated).decode('ascii')} header"
    # Only the headers checked are read (the rest, Mcp-Param-* of no mirrored parameter
    # included, are ignored). RFC 9110 section 5.5: whitespace around a value is not part
    # of it; not every ASGI server strips it (uvicorn before 0.55 on httptools passed
    # trailing whitespace on).
    mcp: dict[str, str] = {}
    get = headers.values.get
    for name in names:
        value = get(name)
        if value is not None:
            mcp[name.decode("latin-1")] = value.strip(b" \t").decode("latin-1")
    return request_header_problem(event.method, params, mcp, mirrored)


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
    session = HttpSession(app.server)
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
    problem = _header_problem(app.server, event, headers)
    if problem is not None:
        reply = session.endpoint.connection.send_error(
            event.request_id, ErrorCode.HEADER_MISMATCH, f"Header mismatch: {problem}"
        )
        await respond(send, 400, reply or b"", headers=cors)
        return
    if app.stateless_busy():
        await app.refuse_busy(send, cors)
        return
    tg = app._tg or await app._ensure_runner()
    session.start(tg, app._loop, app._token)
    exchange = ModernExchange(session, version, (send, cors, event.request_id))
    session.exchanges.add(exchange)
    app.sessionless.add(session)
    answer = Reply(app, exchange, receive, send, cors)
    try:
        data = await exchange.own(
            await session.endpoint.answer_inline(event, exchange, answer.follow)
        )
        if data is not None:
            # An instant handler's answer, all it produced (the common case): this task
            # writes it, with no route, follower or stream.
            if exchange.take_answer():
                await respond(send, status_for(data), data, headers=cors)
            return
        exchange.expect(1)
        if not await answer.settle():
            return  # answered, or the client left (then the session ends below)
        if exchange.done.is_set() and not exchange.early:
            if not exchange.take_answer():
                return  # (the session's end answered it: see HttpSession.close)
            [response] = exchange.responses or [b""]
            if not response and session.closed:
                # Ended unanswered: close_all() (a shutdown) cancelled it.
                status, response = ended_answer(event.request_id, True)
                await respond(send, status, response, headers=cors)
            elif not response:
                await respond(send, 202, headers=cors)
            else:
                await respond(send, status_for(response), response, headers=cors)
            return
        await answer.stream()
    finally:
        answer.stop()
        session.exchanges.discard(exchange)
        app.sessionless.discard(session)
        if not session.close_idle():  # (at once, without a task, when nothing runs)
            app.drop(session)  # cancels what still runs: a closed stream is a cancellation


class _Probe(msgspec.Struct):
    id: Any = None
    method: Any = None
    # (Raw | UnsetType: msgspec does not decode Raw in a union with None: every body with
    # params failed to decode, so looks_modern() was False for all of them.)
    params: msgspec.Raw | UnsetType = UNSET


_PROBE: Final = msgspec.json.Decoder(_Probe)


def _modern_probe(body: bytes) -> _Probe | None:
    """The id, method and params of a body that is a 2026-07-28 request, else ``None``."""
    try:
        probe = _PROBE.decode(body)
    except msgspec.DecodeError:
        return None
    params = None if probe.params is UNSET else probe.params
    if isinstance(probe.method, str) and is_modern(probe.method, params):
        return probe
    return None


def era_mismatch(body: bytes, header: str | None) -> bytes | None:
    """The -32020 answer for a 2026-07-28 request sent with a handshake-era
    ``MCP-Protocol-Version`` header (the header "MUST match" the body's
    ``_meta`` version), or without one in a handshake-era session; ``None`` when the
    body is not one. The common case, a body without the 2026 ``_meta`` key, costs one
    search of the bytes (``find``: ``in`` on bytes first tries the key as an integer,
    and raising and clearing that TypeError costs more than the search)."""
    probe = _modern_probe(body) if body.find(VERSION_KEY) != -1 else None
    if probe is None:
        return None
    rid = probe.id if type(probe.id) in (int, str) else None
    if header is None:
        reason = "Header mismatch: the MCP-Protocol-Version header is required"
    else:
        reason = (
            f"Header mismatch: MCP-Protocol-Version {peer_text(header)} does not match the "
            "protocol version in the request's _meta"
        )
    return encode_error(rid, ErrorCode.HEADER_MISMATCH, reason)


VERSION_KEY: Final = META_PROTOCOL_VERSION.encode()


def looks_modern(body: bytes) -> bool:
    """Whether a POST without version header or session is a 2026-07-28 request."""
    return _modern_probe(body) is not None
