"""Answering one Streamable HTTP POST (a client message) or GET (an SSE stream)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.lowlevel

from ..aio import Flag
from ..protocol import (
    BatchReceived,
    Event,
    HandshakeState,
    MessageRejected,
    RequestReceived,
    encode_event,
)
from ..types import ErrorCode
from ._asgi import (
    Headers,
    Receive,
    Send,
    respond,
    respond_error,
    until_disconnected,
)
from ._asgi_sse import SSE_HEADERS, Sink, pump
from ._http_streams import ANSWERED, Exchange, ended_answer

if TYPE_CHECKING:
    from ._http_session import HttpSession
    from ._streamable import StreamableHTTPApp

__all__ = ["handle_get", "handle_message"]

logger = logging.getLogger("mcpkit.server.http")

_JSON_TYPE: Final = (b"content-type", b"application/json")


def _json_answer(
    app: StreamableHTTPApp, session: HttpSession, responses: list[bytes], event: Event
) -> tuple[int, bytes]:
    """The status and body of a JSON answer to ``event`` carrying ``responses``."""
    if len(responses) == 1:
        return 200, responses[0]
    if responses:
        return 200, b"[" + b",".join(responses) + b"]"
    if session.closed:
        # Ended (a shutdown; DELETE, expiry) while its requests ran.
        rid = event.request_id if type(event) is RequestReceived else None
        return ended_answer(rid, app.shutting_down)
    # Every request was cancelled by the client: there is no answer to give.
    return 202, b""


async def _rejected(event: MessageRejected, send: Send, cors: list[Any]) -> None:
    """A message the connection refused: 400 with the JSON-RPC error, except for the
    expected races (a late response, a cancel for a finished request), which are
    accepted and ignored (202)."""
    if event.reply is not None:
        await respond(send, 400, event.reply, headers=cors)
    elif event.level == "debug":
        await respond(send, 202, headers=cors)
    else:
        await respond_error(send, 400, f"Bad Request: {event.reason}", headers=cors)


async def handle_message(
    app: StreamableHTTPApp,
    session: HttpSession,
    body: bytes,
    receive: Receive,
    send: Send,
    cors: list[Any],
    *,
    event: Event | None = None,
    new_session: bool = False,
    version: str | None = None,
) -> None:
    """Dispatch one POSTed message and answer: 202 for notifications and responses, JSON
    or an SSE stream for requests (``basic/transports.mdx``, "Sending Messages to the
    Server"). ``version``: the POST's (checked) ``MCP-Protocol-Version`` header."""
    endpoint = session.endpoint
    if event is None:
        event = endpoint.connection.receive_message(body)
    # (A request, the common case, skips both tests: an isinstance that fails costs a
    # __class__ lookup.)
    if type(event) is RequestReceived:
        rid = event.request_id
    elif isinstance(event, MessageRejected):
        await _rejected(event, send, cors)
        return
    elif isinstance(event, BatchReceived) and event.reply is None and _all_refused(event):
        # Nothing in it was accepted (say, only responses to unknown ids): 400, as for one
        # such message alone (basic/transports.mdx 2025-03-26, "Sending Messages").
        reasons = "; ".join(e.reason for e in event.events if isinstance(e, MessageRejected))
        await respond_error(send, 400, f"Bad Request: {reasons}"[:500], headers=cors)
        return
    else:
        rid = None
    json_response = app.json_response
    exchange: Exchange
    sse: _SseExchange | None = None
    watch: _LeaveWatch | None = None
    if json_response:
        # (positional: see Exchange; late: what the session's end needs to answer a
        # request whose handler runs in this task, should it ignore its cancellation; a
        # batch's handlers have tasks of their own, and this one waits for them)
        late = (send, cors, rid) if rid is not None else None
        exchange = Exchange(session, False, version, late)
        if session.id is None:  # stateless: see _LeaveWatch
            watch = _LeaveWatch(app, session, receive)
    else:
        exchange = sse = _SseExchange(app, session, version, receive, send, cors, new_session)
    session.exchanges.add(exchange)
    try:
        # A single request's handler runs in this task: an instant one's answer comes
        # back from answer_inline for this task to write as JSON (below), which the client
        # accepts as much as SSE and costs a fraction of a stream with its priming event,
        # store appends and watcher (basic/transports.mdx: the server chooses).
        answer: bytes | None = None
        if rid is not None:
            answer = await exchange.own(
                await endpoint.answer_inline(
                    event,  # type: ignore[arg-type]
                    exchange,
                    sse.open_stream if sse is not None else watch.start if watch else None,
                )
            )
            count = 1
        else:
            count = await endpoint.dispatch(event, exchange)
        if sse is not None and sse.writing is not None:  # (the stream has started)
            await sse.writing.wait()
            return
        if exchange.late is not None:  # (JSON: exchange.take_answer(), inlined: every POST)
            if exchange.late is ANSWERED:
                return  # (the session's end answered it: see HttpSession.close)
            exchange.late = None
        if count == 0:
            await respond(send, 202, headers=cors)
            return
        headers = _headers(app, session, cors, new_session) if new_session else cors
        if answer is None:
            if exchange.expect(count):
                responses = exchange.responses
                if len(responses) == 1 and (
                    json_response or (not exchange.early and not exchange.closing)
                ):
                    answer = responses[0]  # answered at once with one response
            elif not exchange.done.is_set():
                # A batch: its handlers run in tasks of their own; let them run a step.
                await anyio.lowlevel.checkpoint()
        if answer is not None:
            # One response, given at once (an instant handler: the common case):
            # respond(), inlined, as it is on every such POST's path.
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-length", b"%d" % len(answer)),
                        _JSON_TYPE,
                        *headers,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": answer})
            return
        done = exchange.done
        if json_response or (done.is_set() and not exchange.early and not exchange.closing):
            if not done.is_set():
                await done.wait()
            status, body = _json_answer(app, session, exchange.responses, event)
            await respond(send, status, body, headers=headers)
            return
        await _stream(app, session, exchange, receive, send, headers)
    finally:
        if sse is not None and sse.writing is not None:  # (nothing to cancel otherwise)
            sse.stop_writing()
        if watch is not None:
            watch.stop()
        session.exchanges.discard(exchange)


def _all_refused(batch: BatchReceived) -> bool:
    """Every element refused without a reply of its own (an expected race is accepted)."""
    return all(
        isinstance(inner, MessageRejected) and inner.reply is None and inner.level != "debug"
        for inner in batch.events
    )


def _headers(
    app: StreamableHTTPApp, session: HttpSession, cors: list[Any], new_session: bool
) -> list[Any]:
    """The headers of the answer; for an ``initialize`` POST, with the new session's id."""
    if not new_session:
        return cors
    assert session.id is not None
    if session.server_session.handshake.state is HandshakeState.AWAITING_INITIALIZE:
        app.drop(session)  # initialize failed: no session was established
        return cors
    return [*cors, (b"mcp-session-id", session.id.encode("ascii"))]


async def _stream(
    app: StreamableHTTPApp,
    session: HttpSession,
    exchange: Exchange,
    receive: Receive,
    send: Send,
    headers: list[Any],
) -> None:
    """Answer with an SSE stream: what the exchange holds, then what follows."""
    stream = session.new_stream()
    sink = Sink(app.max_stream_buffer)
    await exchange.start_stream(stream, sink, prime=session.primes)
    await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]})
    delivered = await pump(
        sink, send, receive, keepalive=app.keepalive, on_gone=lambda: stream.detach(sink)
    )
    await session.stream_done(stream, delivered=delivered)


class _LeaveWatch:
    """A stateless POST answered with JSON whose handler has to wait: should its client
    leave first, nobody could ever receive the answer (there is no stream to resume and
    no session to ask again in), so the POST's session is ended, which cancels the
    handler, as leaving an SSE answer does. (Disconnection is no cancellation where the
    answer can still be delivered: ``basic/transports.mdx`` 2025-11-25, "Resumability".)
    :meth:`start` is dispatch's ``on_suspend``: an instant handler starts no watcher."""

    __slots__ = ("_app", "_receive", "_scope", "_session")

    def __init__(self, app: StreamableHTTPApp, session: HttpSession, receive: Receive) -> None:
        self._app = app
        self._session = session
        self._receive = receive
        self._scope: anyio.CancelScope | None = None

    def start(self) -> None:
        self._scope = scope = anyio.CancelScope()
        self._app.start_detached(self._watch, scope)

    async def _watch(self, scope: anyio.CancelScope) -> None:
        with scope:
            await until_disconnected(self._receive)
            logger.debug("a stateless client left before its answer: its request is cancelled")
            self._app.drop(self._session)

    def stop(self) -> None:
        """The POST is over (answered, or its task ended)."""
        if self._scope is not None:
            self._scope.cancel()


class _SseExchange(Exchange):
    """The reply route of a POST in SSE mode, whose handler runs in the POST's own task.
    Should the handler have to wait, :meth:`open_stream` (dispatch's ``on_suspend``)
    makes the answer a stream, opened then (priming event first) and written by a task in
    the app's task group until the stream ends or the client goes, while the POST's task
    goes on running the handler. (The exchange carries what the stream needs: a writer
    object made for every POST in case it is needed cost about 1 % of an instant POST,
    and most handlers never wait.)"""

    __slots__ = ("_app", "_asgi_send", "_cors", "_new_session", "_receive", "_scope", "writing")

    def __init__(
        self,
        app: StreamableHTTPApp,
        session: HttpSession,
        protocol_version: str | None,
        receive: Receive,
        send: Send,
        cors: list[Any],
        new_session: bool,
    ) -> None:
        Exchange.__init__(self, session, True, protocol_version)
        self._app = app
        self._receive = receive
        self._asgi_send = send
        self._cors = cors
        self._new_session = new_session
        #: Set once the stream's writer task has ended; ``None`` until the stream opens.
        self.writing: Flag | None = None
        self._scope: anyio.CancelScope | None = None

    def open_stream(self) -> None:
        """The handler has to wait: answer with a stream (see the class)."""
        self.expect(1)
        headers = _headers(self._app, self.session, self._cors, self._new_session)
        self.writing = done = Flag()
        self._scope = scope = anyio.CancelScope()
        self._app.start_detached(self._write, headers, done, scope)

    async def _write(self, headers: list[Any], done: Flag, scope: anyio.CancelScope) -> None:
        app, session = self._app, self.session
        try:
            with scope:
                await _stream(app, session, self, self._receive, self._asgi_send, headers)
                if session.id is None and not self.done.is_set():
                    # Stateless: the client left and no one can resume the stream, so
                    # the handler's answer could never be delivered; end its session.
                    app.drop(session)
        except Exception:  # never let one response take the app's task group down
            logger.exception("writing an SSE answer failed")
        finally:
            done.set()

    def stop_writing(self) -> None:
        """Cancel the stream's writer task, if it is still running."""
        if self.writing is not None and not self.writing.is_set():
            assert self._scope is not None
            self._scope.cancel()


async def handle_get(
    app: StreamableHTTPApp,
    session: HttpSession,
    headers: Headers,
    receive: Receive,
    send: Send,
    cors: list[Any],
) -> None:
    """Open the standalone SSE stream, or resume any stream of the session after the
    event named by ``Last-Event-ID`` (``basic/transports.mdx`` 2025-11-25, "Resumability
    and Redelivery": only that stream's messages are replayed)."""
    if b"last-event-id" in headers.duplicated:
        # Two positions to resume from: either guess could replay the wrong events.
        await respond_error(
            send, 400, "Bad Request: more than one Last-Event-ID header", headers=cors
        )
        return
    sink = Sink(app.max_stream_buffer)
    # An empty value names no event: the SSE spec's clients never send one (an empty
    # "last event ID string" means there is none), and the other SDKs treat it as absent.
    last = headers.text(b"last-event-id") or None
    store = session.store
    if last is None:
        stream = session.standalone
        async with stream.lock:
            stream.attach(sink)  # a new GET replaces a connection the client abandoned
            if session.primes:
                await stream.emit_locked(None, retry_ms=session.retry_ms)
    else:
        if store is None:
            await respond_error(
                send,
                400,
                "Bad Request: this server does not keep events for resumption",
                headers=cors,
            )
            return
        found = await store.replay(session.key, last)
        resumed = session.find_stream(found.stream_id) if found is not None else None
        if resumed is None:
            await respond_error(
                send,
                400,
                "Bad Request: Last-Event-ID names no event this session can replay "
                "(unknown, from another session, or expired)",
                code=ErrorCode.INVALID_REQUEST,
                headers=cors,
            )
            return
        stream = resumed
        async with stream.lock:
            # Again under the lock, so nothing emitted meanwhile is missed or doubled.
            replay = await store.replay(session.key, last)
            for event_id, message in replay.events if replay is not None else ():
                if message is not None:
                    sink.put(encode_event(message, id=event_id))
            stream.attach(sink)
    await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *cors]})
    delivered = await pump(
        sink, send, receive, keepalive=app.keepalive, on_gone=lambda: stream.detach(sink)
    )
    await session.stream_done(stream, delivered=delivered)
