"""One Streamable HTTP session: a :class:`ServerSession` plus its streams and bounds."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
import anyio.abc
import anyio.lowlevel

from ..aio import Endpoint, EventStore, Flag
from ..exceptions import MessageNotDelivered
from ..protocol import EMPTY_TABLE, FrameTooLarge, ServerHandshake
from ..types import V2025_11_25, RequestId
from ._asgi import respond
from ._http_streams import SHUTDOWN_ERROR, Exchange, SseStream, ended_answer, is_request
from ._session import ServerSession

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["HttpSession"]

logger = logging.getLogger("mcpkit.server.http")

#: Streams whose client vanished before their end, kept per session for resumption.
_MAX_DETACHED_STREAMS: Final = 64
#: Of those, streams the server wrote to the end: kept too, because a write that succeeded
#: may still have gone to a connection the client had already dropped (the server learns
#: of a disconnect only later), and a client that resumes with ``Last-Event-ID`` must then
#: get the rest, not a 400 (2025-11-25 transports "Resumability and Redelivery"). The
#: most recent few suffice: the window is one write before the disconnect is noticed.
_MAX_DELIVERED_STREAMS: Final = 8
_STANDALONE: Final = "0"


class _StandaloneChannel:
    """The session's channel: messages unrelated to any request go on the GET stream."""

    __slots__ = ("_session",)

    def __init__(self, session: HttpSession) -> None:
        self._session = session

    async def send(self, message: bytes) -> None:
        await self._session.send_standalone(message)

    async def receive(self) -> bytes | FrameTooLarge:
        raise anyio.EndOfStream  # never read: the transport dispatches what POSTs carry

    async def aclose(self) -> None:
        pass


class _NoStreamChannel:
    """A stateless session's channel: there is no GET stream, so a message unrelated to any
    request cannot be sent. One object shared by all such sessions: it refers to none of
    them, so a stateless POST's session is freed by reference counting at its end."""

    __slots__ = ()

    async def send(self, message: bytes) -> None:
        not_delivered(message)

    async def receive(self) -> bytes | FrameTooLarge:
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        pass


_NO_STREAM: Final = _NoStreamChannel()


def not_delivered(message: bytes) -> None:
    """A message for the GET stream, which the client does not have open.

    Raises:
        MessageNotDelivered: a request, which the client could never answer.
    """
    if is_request(message):
        raise MessageNotDelivered(
            "the client has no open GET stream, so a request from the server cannot "
            "reach it (open one with GET, or answer on a POST's SSE stream)"
        )
    logger.debug("notification not sent: the client has no open GET stream")


class HttpSession:
    """A client's session on a Streamable HTTP endpoint.

    Attributes:
        id: the ``Mcp-Session-Id`` (``None`` in stateless mode).
        key: the session's key in the event store.
        server_session: the MCP session (handshake, handlers, per-session state).
        last_active: when a request last touched the session (``time.monotonic``: cheaper
            per request than the event loop's clock, and the same as asyncio's).
    """

    # Class-level defaults (a session is made per stateless POST: what its constructor
    # need not set, it does not; what such a session never uses is made on first use).
    id: str | None = None
    key = ""
    store: EventStore | None = None
    retry_ms: int | None = None
    _standalone: SseStream | None = None  # made on first use (stateless: never)
    connections = 0  # open HTTP requests and streams of this session
    closed = False
    _next_stream = 1
    _task_group: anyio.abc.TaskGroup | None = None
    on_end: Callable[[HttpSession], None] | None = None
    # (A dict keeps insertion order, oldest first, as stream_done needs; an OrderedDict
    # costs more to make. Made with the first stream: EMPTY_TABLE until then.)
    streams: dict[str, SseStream] = EMPTY_TABLE
    _delivered: list[str]  # complete streams written to the end, oldest first (ditto)
    # A stateless session is never swept for idleness (it ends with its POST): it reads
    # no clock for this.
    last_active = 0.0
    _farewelled: dict[RequestId, Exchange] = EMPTY_TABLE  # see part()
    _parted = False  # part() was called: the session ends in a shutdown
    _late: tuple[Exchange, ...] = ()  # see close()

    def __init__(
        self,
        server: LowLevelServer,
        session_id: str | None = None,
        store: EventStore | None = None,
        retry_ms: int | None = None,
        handshake: ServerHandshake | None = None,
    ) -> None:
        # (Arguments by position: a class called with keywords costs CPython 3.11 a dict
        # built and unpacked, and a stateless POST makes a session. handshake: see
        # ServerSession.)
        channel: _StandaloneChannel | _NoStreamChannel = _NO_STREAM
        if session_id is not None:
            self.id = self.key = session_id
            self.store = store
            self.retry_ms = retry_ms
            self.last_active = time.monotonic()
            channel = _StandaloneChannel(self)
        self.server_session = ServerSession(server, channel, False, handshake)
        #: The session's endpoint (an attribute, not a property: read on every request).
        self.endpoint: Endpoint = self.server_session.endpoint
        self.exchanges: set[Exchange] = set()
        self.closed = False  # (read per POST: faster as an instance attribute)
        #: Set once the session's work has stopped after :meth:`close`.
        self.ended = Flag()

    @property
    def standalone(self) -> SseStream:
        """The stream for messages unrelated to any request (opened by GET)."""
        if self._standalone is None:
            self._standalone = SseStream(self, _STANDALONE)
        return self._standalone

    @property
    def primes(self) -> bool:
        """Whether SSE streams start with a priming event: only for 2025-11-25 and later
        clients (SEP-1699), and only when events can be replayed."""
        version = self.server_session.protocol_version
        return self.store is not None and version is not None and version >= V2025_11_25

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def idle_for(self, now: float) -> float:
        """Seconds without any open request or stream, or any request still being
        handled (0 while there is one). A handler can outlive its POST: one that runs in
        a task of its own (a batch's, every request's on trio) after its client left, to
        be resumed; the idle time then counts from when it was last seen running."""
        if self.connections:
            return 0.0
        if self.endpoint.connection.in_flight_count:
            self.last_active = now
            return 0.0
        return now - self.last_active

    # -- lifetime -------------------------------------------------------------------------

    def start(self, task_group: anyio.abc.TaskGroup, loop: Any = None, token: Any = None) -> None:
        """Start serving; handlers run in ``task_group`` (the app's, shared by all its
        sessions: an idle session costs no task of its own). ``loop``: the asyncio loop
        serving, when known (see :meth:`Endpoint.attach`); ``token``: its anyio token,
        when known (see :meth:`ServerSession.bind_loop`)."""
        self._task_group = task_group
        server_session = self.server_session
        # (bind_loop, inlined: the session was made in this task, so its loop_thread is
        # right; this runs per stateless POST)
        server_session.loop_token = token if token is not None else anyio.lowlevel.current_token()
        server_session.server.sessions.add(server_session)
        if loop is None:
            self.endpoint.attach(task_group)
        else:
            self.endpoint.attach(task_group, loop)

    def close(self) -> None:
        """End the session: its handlers are cancelled, its streams end, its waiting
        POSTs are released, its stored events are dropped (in the background; see
        :attr:`ended`)."""
        if self.closed:
            return
        self.closed = True
        self.server_session.server.sessions.discard(self.server_session)
        self.server_session.release()
        # JSON answers whose POSTs' tasks run their handlers: answered at once, by
        # _finish, rather than after the handlers stop (one ignoring its cancellation
        # would hold its POST for as long as it runs).
        self._late = tuple(e for e in self.exchanges if e.late is not None)
        self._release()
        if self._task_group is None:
            self._ended()
        else:
            self._task_group.start_soon(self._finish)

    def part(self) -> None:
        """Before :meth:`close` at a shutdown: the requests whose answers stream to a
        connected client are answered "the server is shutting down" (-32603,
        :data:`SHUTDOWN_ERROR`), which ends their streams once :meth:`close` has cancelled
        their handlers. (Cut without an answer, a stream left the client retrying a server
        going away, only to report that the answer never came; a JSON answer becomes the
        same error with HTTP 503.) Other requests end as :meth:`close` ends them."""
        self._parted = True
        # (_streams_to_a_client accepts exchanges only)
        routes = self.endpoint.answer_in_flight(*SHUTDOWN_ERROR, _streams_to_a_client)
        self._farewelled = cast("dict[RequestId, Exchange]", routes)

    def close_idle(self) -> bool:
        """Close at once, without a task, if nothing runs in the session (no handler, no
        pending call, no stored events to drop): the end of a stateless POST's session.
        Returns whether it closed; otherwise use :meth:`close`."""
        if self.closed or self.id is not None or not self.endpoint.detach_idle():
            return False
        self.closed = True
        server_session = self.server_session
        server_session.server.sessions.discard(server_session)
        server_session.release()
        if self.exchanges or self._standalone is not None or self.streams:
            self._release()
        self._ended()
        return True

    async def _finish(self) -> None:
        try:
            for exchange in self._late:
                await self._answer_late(exchange)
            self._late = ()  # (their ASGI callables: not kept while the handlers stop)
            await self.endpoint.detach()
            for rid, exchange in self._farewelled.items():
                answer = self.endpoint.undelivered(rid)
                if answer is not None:  # its handler ignored its cancellation
                    await exchange.finish(answer)
                exchange.abort()
            if self.store is not None and self.id is not None:
                with anyio.CancelScope(shield=True):
                    await self.store.close_session(self.key)
        finally:
            self._ended()

    async def _answer_late(self, exchange: Exchange) -> None:
        """Give a JSON POST whose task still runs its handler the answer the session's
        end leaves it (see :func:`ended_answer`), unless the task has answered since."""
        late = exchange.take_late()  # (before the await: the POST's task now sends nothing)
        if late is None:
            return
        send, cors, rid = late
        status, body = ended_answer(rid, self._parted)
        try:
            await respond(send, status, body, headers=cors)
        except Exception:  # (the client's connection may be gone: the request ends anyway)
            logger.debug("the answer to a POST of an ended session was not sent", exc_info=True)

    def _ended(self) -> None:
        self.ended.set()
        if self.on_end is not None:
            self.on_end(self)

    def _release(self) -> None:
        parting = self._farewelled.values()  # (their streams end with their answers: see part)
        if self.exchanges:
            for exchange in list(self.exchanges):
                if exchange not in parting:
                    exchange.abort()
            self.exchanges.clear()
        if self._standalone is not None:
            self._standalone.end()
        if self.streams:
            for stream in self.streams.values():
                if not (parting and any(exchange.stream is stream for exchange in parting)):
                    stream.end()
            self.streams.clear()
            self._delivered.clear()

    # -- streams --------------------------------------------------------------------------

    def new_stream(self) -> SseStream:
        """A new stream for one POST's answer."""
        stream_id = str(self._next_stream)
        self._next_stream += 1
        stream = SseStream(self, stream_id)
        if self.streams is EMPTY_TABLE:  # the session's first stream: tables of its own
            self.streams = {}
            self._delivered = []
        self.streams[stream_id] = stream
        return stream

    def find_stream(self, stream_id: str) -> SseStream | None:
        if stream_id == _STANDALONE:
            return self.standalone
        return self.streams.get(stream_id)

    async def stream_done(self, stream: SseStream, *, delivered: bool) -> None:
        """A response carrying ``stream`` ended. A stream that cannot be resumed is
        forgotten; a resumable one is kept for the client to resume, the complete ones
        within bounds (oldest first), so a client that drops every connection cannot grow
        the session without limit."""
        if stream is self._standalone:  # (not the property: it would make one)
            return
        if not stream.resumable:
            # Without an event store no event carries an id, so no client can resume
            # this stream: once its response ended it is gone, complete or not (a call
            # still running then answers into nothing, see Exchange.finish).
            self.streams.pop(stream.id, None)
            return
        if delivered and stream.complete and stream.id not in self._delivered:
            self._delivered.append(stream.id)
            if len(self._delivered) > _MAX_DELIVERED_STREAMS:
                await self._forget(self._delivered.pop(0))
        while len(self.streams) > _MAX_DETACHED_STREAMS:
            oldest = next((s for s in self.streams.values() if s.sink is None and s.complete), None)
            if oldest is None:
                break
            await self._forget(oldest.id)

    async def _forget(self, stream_id: str) -> None:
        if self.streams.pop(stream_id, None) is not None and self.store is not None:
            await self.store.close_stream(self.key, stream_id)

    async def send_standalone(self, message: bytes) -> None:
        """Send a message unrelated to any request on the GET stream.

        Raises:
            MessageNotDelivered: a request, and the client has no GET stream open (nor one
                it can resume), so it could never answer.
        """
        if self.id is None or not await self.standalone.emit(message):
            not_delivered(message)  # stateless: there is never a GET stream


def session_deadline(idle_timeout: float | None) -> float:
    """Seconds between idle sweeps for an idle timeout."""
    if idle_timeout is None or math.isinf(idle_timeout):
        return math.inf
    return max(0.05, min(idle_timeout / 4, 30.0))


def _streams_to_a_client(route: object) -> bool:
    """Whether a request's answer goes down an SSE stream with a client connected."""
    return (
        isinstance(route, Exchange) and route.stream is not None and route.stream.sink is not None
    )
