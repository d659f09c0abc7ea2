"""The streams of a Streamable HTTP session, and the reply route of one POST.

Each POST that carries requests is answered with JSON or with an SSE stream; the session
also has one standalone stream, opened by GET, for messages unrelated to any request.
Every server message goes on exactly one stream (``basic/transports.mdx`` 2025-11-25,
"Multiple Connections": no broadcast). With an event store every event gets an id, so a
client that lost its connection resumes the stream with GET and ``Last-Event-ID``; a
disconnect is not a cancellation, so a request's handler keeps running and its response
waits in the store.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..aio import Flag
from ..exceptions import MessageNotDelivered
from ..protocol import encode_error, encode_event, encode_retry
from ..types import ErrorCode
from ._asgi import error_body
from ._asgi_sse import Sink

if TYPE_CHECKING:
    from ..types import RequestId
    from ._asgi import Send
    from ._http_session import HttpSession

__all__ = [
    "ANSWERED",
    "SESSION_GONE",
    "SHUTDOWN_ERROR",
    "SHUTTING_DOWN",
    "Exchange",
    "LateAnswer",
    "SseStream",
    "ended_answer",
    "is_request",
]

logger = logging.getLogger("mcpkit.server.http")

# mcpkit's encoder writes members in a fixed order (protocol/_encode.py), so a message we
# produced is a request exactly when an id follows the version; responses never pass here.
_REQUEST_PREFIX: Final = b'{"jsonrpc":"2.0","id":'


#: The answer for a session id the app does not know, or whose session has ended.
SESSION_GONE: Final = (404, "Not Found: unknown or expired session; initialize a new one")
#: A POST whose requests close_all() ended unanswered: the server is going away.
SHUTTING_DOWN: Final = (
    503,
    "Service Unavailable: the server is shutting down; the request was not completed",
)


#: The JSON-RPC error (code, message) of a request still running at a shutdown, on every
#: HTTP-based transport.
SHUTDOWN_ERROR: Final = (ErrorCode.INTERNAL_ERROR, SHUTTING_DOWN[1])


#: What :attr:`Exchange.late` holds for a JSON answer the POST's task has yet to give: the
#: POST's ASGI ``send``, its CORS headers, and its request's id.
LateAnswer = tuple["Send", list[Any], "RequestId | None"]
#: :attr:`Exchange.late` once the session's end has given the POST its answer (a marker
#: compared by identity, never unpacked).
ANSWERED: Final[Any] = ("answered",)


def ended_answer(rid: RequestId | None, shutting_down: bool) -> tuple[int, bytes]:
    """The status and body answering a request whose session ended before it was
    answered: at a shutdown, 503 and the request's -32603 error (its id: the client takes
    it as the call's answer, a failure of the call, not of its delivery; a batch's,
    without one); otherwise (DELETE, idle expiry) 404, "MUST respond to requests
    containing that session ID with HTTP 404" (``basic/transports.mdx``, Session
    Management). Not 404 at a shutdown: a client would open a new session with a server
    that is going away."""
    if shutting_down:
        logger.debug("HTTP %d: %s", *SHUTTING_DOWN)
        return SHUTTING_DOWN[0], encode_error(rid, *SHUTDOWN_ERROR)
    logger.debug("HTTP %d: %s", *SESSION_GONE)
    return SESSION_GONE[0], error_body(ErrorCode.INVALID_REQUEST, SESSION_GONE[1])


def is_request(message: bytes) -> bool:
    """Whether a message mcpkit encoded for sending is a request (not a notification)."""
    return message.startswith(_REQUEST_PREFIX)


class SseStream:
    """One SSE stream of a session: its event ids, its live connection (if any) and its
    end. Emitting appends to the event store first, then writes to the live connection,
    under a lock, so a resuming client gets every event exactly once and in order."""

    __slots__ = ("attached_once", "complete", "id", "lock", "session", "sink")

    def __init__(self, session: HttpSession, stream_id: str) -> None:
        self.session = session
        self.id = stream_id
        self.sink: Sink | None = None
        self.lock = anyio.Lock(fast_acquire=True)
        self.complete = False  # the final event was emitted: nothing more will come
        self.attached_once = False

    @property
    def resumable(self) -> bool:
        return self.session.store is not None

    async def _append(self, message: bytes | None, retry_ms: int | None = None) -> bytes:
        store = self.session.store
        event_id = None
        if store is not None:
            event_id = await store.append(self.session.key, self.id, message)
        return encode_event(message, id=event_id, retry=retry_ms)

    async def emit_locked(self, message: bytes | None, *, retry_ms: int | None = None) -> bool:
        """Emit with :attr:`lock` held. Returns whether the event reached a live
        connection or the store (False: nowhere to go)."""
        if not self.attached_once:
            # No client ever opened this stream (the standalone stream before any GET):
            # nothing is sent, so nothing is stored for a resumption that cannot be one
            # (it took store space, and a crafted Last-Event-ID replayed it).
            return False
        chunk = await self._append(message, retry_ms)
        sink = self.sink
        if sink is not None:
            if sink.put(chunk):
                return True
            self.sink = None  # the connection is gone or was cut off
        return self.resumable and self.attached_once

    async def emit(self, message: bytes) -> bool:
        """Emit one message (see :meth:`emit_locked`)."""
        async with self.lock:
            return await self.emit_locked(message)

    async def prime(self, retry_ms: int | None) -> None:
        """Send the priming event (an id and no data) that lets the client resume from
        the very start (2025-11-25, SEP-1699), with the reconnection delay."""
        if self.resumable:
            async with self.lock:
                await self.emit_locked(None, retry_ms=retry_ms)

    def end(self) -> None:
        """Nothing more will be emitted: finish the live response."""
        self.complete = True
        if self.sink is not None:
            self.sink.finish()

    def attach(self, sink: Sink) -> None:
        """Make ``sink`` the live connection (call with :attr:`lock` held); a previous
        connection is closed, so messages never go out twice."""
        if self.sink is not None and self.sink is not sink:
            self.sink.finish()  # end the old response cleanly; the new one takes over
        self.sink = sink
        self.attached_once = True
        if self.complete:
            sink.finish()

    def detach(self, sink: Sink) -> None:
        """``sink``'s client went away."""
        if self.sink is sink:
            self.sink = None

    def close_connection(self, retry_ms: int | None) -> bool:
        """End the live HTTP response but not the stream (SSE polling, SEP-1699): the
        client reconnects after ``retry_ms`` and resumes with ``Last-Event-ID``.

        Only for 2025-11-25 and later clients, whose streams start with an event id (the
        priming event): before that, a server "SHOULD NOT close the SSE stream before
        sending the JSON-RPC response" (2025-06-18 ``basic/transports.mdx``), and a
        client with no event id could not resume."""
        sink = self.sink
        if sink is None or not self.session.primes or self.complete:
            return False
        if retry_ms is not None:
            sink.put(encode_retry(retry_ms))
        sink.finish()
        self.sink = None
        return True


class Exchange:
    """The reply route of one POST (see :class:`mcpkit.aio.ReplyRoute`).

    While the POST's requests are being dispatched, messages are held; if everything was
    answered at once the POST gets a plain JSON response, otherwise (SSE mode) the
    exchange switches to a new SSE stream that carries the held messages, then everything
    else. In JSON-response mode, messages other than responses go to the standalone
    stream, since a JSON body can carry only the answer.
    """

    __slots__ = (
        "close_retry",
        "closing",
        "done",
        "early",
        "expected",
        "finished",
        "late",
        "protocol_version",
        "responses",
        "session",
        "sse",
        "stream",
    )

    # (Positional parameters: a class called with keywords costs CPython 3.11 about 1,400
    # instructions more, a dict made and unmade, and one is made per POST.)
    def __init__(
        self,
        session: HttpSession,
        sse: bool,
        protocol_version: str | None = None,
        late: LateAnswer | None = None,
    ) -> None:
        self.session = session
        self.sse = sse
        #: The POST's ``MCP-Protocol-Version`` header (the session layer reads it: over
        #: HTTP the header, when present, tells the request's era).
        self.protocol_version = protocol_version
        self.early: list[bytes] = []
        self.responses: list[bytes] = []
        self.expected = -1
        self.finished = 0
        self.stream: SseStream | None = None
        self.done = Flag()
        #: The handler asked to close the connection before the stream existed.
        self.closing = False
        self.close_retry: int | None = None
        #: A JSON answer not yet given (see :data:`LateAnswer`): should the session end
        #: while the POST's task still runs a handler (inline, on asyncio), the session
        #: gives the answer itself, so that a handler ignoring its cancellation cannot
        #: hold it (:meth:`HttpSession.close`). Whoever answers first takes it
        #: (:meth:`take_answer`, :meth:`take_late`); ``None`` throughout for an answer
        #: that streams.
        self.late = late

    def take_answer(self) -> bool:
        """For the POST's task, before it answers: whether the answer is still its own to
        give (False: the session's end gave it). From here on the end gives none."""
        if self.late is ANSWERED:
            return False
        self.late = None
        return True

    async def own(self, answer: bytes | None) -> bytes | None:
        """What ``answer_inline`` returned, for the POST's task: the answer itself when it
        may be written as it is (nothing was sent before it, nothing is closing), else
        ``None``, the answer handed to :meth:`finish` (SSE: it goes after what was sent)."""
        if answer is not None and (self.early or self.closing):
            await self.finish(answer)
            return None
        return answer

    def take_late(self) -> LateAnswer | None:
        """For the session's end: what it needs to give the POST's answer itself
        (``None``: the POST's task gives it, or has). From here on the task gives none."""
        late = self.late
        if late is None or late is ANSWERED:
            return None
        self.late = ANSWERED
        return late

    def expect(self, count: int) -> bool:
        """``count`` calls of :meth:`finish` complete this exchange; returns whether they
        all happened already."""
        self.expected = count
        if self.finished >= count:
            self.done.set()
            return True
        return False

    async def send(self, message: bytes) -> None:
        if self.done.is_set():
            # Answered: the request's own stream has ended with its answer, so what a
            # task it left behind sends goes where messages outside a request go (on
            # the ended stream it was stored behind the answer, never read, and a
            # server-to-client request there waited out its timeout).
            await self.session.send_standalone(message)
        elif self.stream is not None:
            if not await self.stream.emit(message):
                self._undeliverable(message)
        elif self.sse:
            self.early.append(message)
        else:
            await self.session.send_standalone(message)

    def _undeliverable(self, message: bytes) -> None:
        if is_request(message):
            raise MessageNotDelivered(
                "the client's connection for this request is gone and the stream is not "
                "resumable: the request cannot reach it"
            )
        logger.debug("message dropped: its stream lost its client and is not resumable")

    async def finish(self, message: bytes | None) -> None:
        self.finished += 1
        complete = 0 <= self.expected <= self.finished
        stream = self.stream
        if stream is None:
            if message is not None:
                self.responses.append(message)
        else:
            async with stream.lock:
                if message is not None and not await stream.emit_locked(message):
                    logger.info("a response could not be delivered: the client disconnected")
                if complete:
                    stream.end()
        if complete:
            self.done.set()
            if stream is not None and stream.sink is None:
                # The client left before the end: its response's end already ran the
                # session's bounds on its streams, when this one was not complete yet and
                # so could not count among the finished ones to let go. Run them again
                # (after done: a store's I/O may be cancelled, the answer is in).
                await self.session.stream_done(stream, delivered=False)

    def close_connection(self, retry_ms: int | None = None) -> bool:
        stream = self.stream
        if stream is not None:
            return stream.close_connection(retry_ms)
        if not self.sse or not self.session.primes or self.done.is_set():
            return False  # (see SseStream.close_connection)
        # The handler runs before the POST has chosen JSON or SSE: remember the request,
        # so the answer becomes a stream that closes right after its priming event.
        self.closing = True
        self.close_retry = retry_ms
        return True

    async def start_stream(self, stream: SseStream, sink: Sink, *, prime: bool) -> None:
        """Switch to SSE on ``stream``, written to ``sink``: the priming event, then the
        messages held so far, in order."""
        async with stream.lock:
            self.stream = stream  # from here on, senders wait for the lock
            stream.attach(sink)
            if prime:
                await stream.emit_locked(None, retry_ms=self.session.retry_ms)
            for message in self.early:
                await stream.emit_locked(message)
            self.early.clear()
            if self.closing:
                stream.close_connection(self.close_retry)
            for message in self.responses:
                await stream.emit_locked(message)
            self.responses.clear()
            if self.done.is_set():
                stream.end()

    def abort(self) -> None:
        """The session ended: release the waiting POST."""
        if self.stream is not None:
            self.stream.end()
        self.done.set()
