"""Event stores: what makes Streamable HTTP streams resumable.

Every SSE event a server sends gets an id from the store; a client whose connection broke
reconnects with ``GET`` and ``Last-Event-ID`` and the server replays what it missed, from
that stream only (``basic/transports.mdx`` 2025-11-25, "Resumability and Redelivery": the
server MUST NOT replay messages that would have been delivered on a different stream).

:class:`EventStore` is the interface (a Redis implementation shares streams between
workers); :class:`MemoryEventStore` is the bounded in-process default.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from ..exceptions import LocalProtocolError

__all__ = ["EventStore", "MemoryEventStore", "Replay"]

#: Bytes charged per stored event on top of its message's length: what keeping it costs
#: on CPython 3.11 (64-bit), measured with tracemalloc: the message's bytes object header
#: (33), its entries in the stream's, the session's and the store's deques (three tuples,
#: the sequence number, their slots: about 200 to 240). Charging less (64, at first) let
#: small events, progress notifications say, take twice the stated bounds.
_EVENT_OVERHEAD: Final = 272


@dataclass(frozen=True, slots=True)
class Replay:
    """What a client missed on one stream: the stream's id and the events after the one it
    last saw, oldest first, as ``(event_id, message)`` pairs (``message`` is ``None`` for
    a priming event, which carries no data)."""

    stream_id: str
    events: list[tuple[str, bytes | None]]


@runtime_checkable
class EventStore(Protocol):
    """Stores the events of each session's streams for replay.

    Event ids are the store's own format, but must name their stream so that a
    ``Last-Event-ID`` leads back to exactly one stream of exactly one session.
    """

    async def append(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """Store one event (``None``: a priming event) and return its id."""

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        """The events after ``last_event_id`` on its stream, or ``None`` when the id is not
        one of this session's, or events after it were already evicted (a replay with a
        gap would silently lose messages)."""

    async def close_stream(self, session_id: str, stream_id: str) -> None:
        """Forget a stream whose events were all delivered."""

    async def close_session(self, session_id: str) -> None:
        """Forget every stream of a session."""


@dataclass(slots=True, eq=False)
class _Stream:
    events: deque[tuple[int, bytes | None]] = field(default_factory=deque)
    next_seq: int = 1
    evicted_through: int = 0  # highest sequence number dropped (or never kept)
    closed: bool = False

    def holds(self, seq: int) -> bool:
        """Whether event ``seq`` is still here (events only ever leave from the front)."""
        return not self.closed and bool(self.events) and seq >= self.events[0][0]

    def drop_oldest(self) -> int:
        """Evict the oldest event; returns the bytes charged for it."""
        seq, message = self.events.popleft()
        self.evicted_through = max(self.evicted_through, seq)  # (a later gap may be marked)
        return _cost(message)


@dataclass(slots=True, eq=False)
class _Session:
    streams: OrderedDict[str, _Stream] = field(default_factory=OrderedDict)
    size: int = 0
    held: int = 0
    #: Every event of the session in append order, as ``(stream, seq)``; entries of events
    #: that already left (through the total bound, or their stream closed) are skipped.
    order: deque[tuple[_Stream, int]] = field(default_factory=deque)


def _cost(message: bytes | None) -> int:
    return _EVENT_OVERHEAD + (len(message) if message is not None else 0)


class MemoryEventStore:
    """A bounded in-memory :class:`EventStore` for one process.

    Memory stays within ``max_session_bytes`` per session and ``max_total_bytes`` in all
    (each event is charged its message's length plus 272 bytes, what keeping it costs);
    past either bound the oldest events go first, in the order they were appended (the
    session's, or all sessions' for the total bound), whatever their stream: an answer
    just stored for a client that will resume is never dropped while older events are
    kept. A client that then asks to resume from before an evicted event gets ``None``
    from :meth:`replay`, never a replay with a hole in it. An event larger than a bound
    on its own is not kept at all (it still gets an id: a client that received it can
    resume after it).

    Args:
        max_session_bytes: bound on one session's stored events.
        max_total_bytes: bound on all stored events.

    Raises:
        LocalProtocolError: a bound is not positive.
    """

    def __init__(
        self, *, max_session_bytes: int = 4 * 1024 * 1024, max_total_bytes: int = 64 * 1024 * 1024
    ) -> None:
        if max_session_bytes < 1 or max_total_bytes < 1:
            raise LocalProtocolError("event store bounds must be positive")
        self.max_session_bytes = max_session_bytes
        self.max_total_bytes = max_total_bytes
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._total = 0
        self._held = 0
        #: Every event in append order, as ``(session, stream, seq)`` (see _Session.order).
        self._order: deque[tuple[_Session, _Stream, int]] = deque()

    @property
    def size(self) -> int:
        """Bytes charged for the events held now."""
        return self._total

    def __len__(self) -> int:
        """The number of events held now."""
        return self._held

    async def append(self, session_id: str, stream_id: str, message: bytes | None) -> str:
        """Store one event and return its id, ``<stream_id>_<sequence>``."""
        if "_" in stream_id:
            raise LocalProtocolError(f"stream id {stream_id!r} must not contain '_'")
        session = self._sessions.get(session_id)
        if session is None:
            session = self._sessions[session_id] = _Session()
        stream = session.streams.get(stream_id)
        if stream is None:
            stream = session.streams[stream_id] = _Stream()
        seq = stream.next_seq
        stream.next_seq = seq + 1
        cost = _cost(message)
        if cost > self.max_session_bytes or cost > self.max_total_bytes:
            stream.evicted_through = seq  # a gap: never replay across it
            return f"{stream_id}_{seq}"
        stream.events.append((seq, message))
        session.order.append((stream, seq))
        self._order.append((session, stream, seq))
        session.size += cost
        session.held += 1
        self._total += cost
        self._held += 1
        while session.size > self.max_session_bytes:
            victim, victim_seq = session.order.popleft()
            if victim.holds(victim_seq):
                self._evict(session, victim)
        while self._total > self.max_total_bytes:
            owner, victim, victim_seq = self._order.popleft()
            if victim.holds(victim_seq):
                self._evict(owner, victim)
        self._compact(session)
        return f"{stream_id}_{seq}"

    def _evict(self, session: _Session, stream: _Stream) -> None:
        cost = stream.drop_oldest()
        session.size -= cost
        session.held -= 1
        self._total -= cost
        self._held -= 1

    def _compact(self, session: _Session) -> None:
        """Drop skipped entries once they outnumber live ones (amortised O(1) per event);
        all of them when nothing is held (an idle store keeps no closed stream alive)."""
        if not session.held:
            session.order.clear()
        elif len(session.order) > 2 * session.held + 32:
            session.order = deque(e for e in session.order if e[0].holds(e[1]))
        if not self._held:
            self._order.clear()
        elif len(self._order) > 2 * self._held + 32:
            self._order = deque(e for e in self._order if e[1].holds(e[2]))

    async def replay(self, session_id: str, last_event_id: str) -> Replay | None:
        """The events after ``last_event_id`` on its stream (see :class:`EventStore`)."""
        stream_id, sep, seq_text = last_event_id.rpartition("_")
        # isascii: str.isdigit() also accepts digits int() refuses (superscripts, which a
        # Latin-1 decoded header can carry).
        if not sep or not (seq_text.isascii() and seq_text.isdigit()) or len(seq_text) > 18:
            return None
        session = self._sessions.get(session_id)
        stream = session.streams.get(stream_id) if session is not None else None
        seq = int(seq_text)
        if stream is None or seq >= stream.next_seq or seq < stream.evicted_through:
            return None
        events = [(f"{stream_id}_{n}", message) for n, message in stream.events if n > seq]
        return Replay(stream_id, events)

    async def close_stream(self, session_id: str, stream_id: str) -> None:
        """Forget a stream."""
        session = self._sessions.get(session_id)
        if session is None:
            return
        stream = session.streams.pop(stream_id, None)
        if stream is None:
            return
        self._forget(session, stream)
        if not session.streams:
            del self._sessions[session_id]
        self._compact(session)

    async def close_session(self, session_id: str) -> None:
        """Forget every stream of a session."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            for stream in session.streams.values():
                self._forget(session, stream)
            session.order.clear()
            self._compact(session)

    def _forget(self, session: _Session, stream: _Stream) -> None:
        cost = sum(_cost(message) for _, message in stream.events)
        session.size -= cost
        session.held -= len(stream.events)
        self._total -= cost
        self._held -= len(stream.events)
        stream.events.clear()
        stream.closed = True
