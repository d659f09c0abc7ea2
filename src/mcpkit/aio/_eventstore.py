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

#: Bytes charged per stored event on top of its message (ids, deque slots).
_EVENT_OVERHEAD: Final = 64


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
    evicted_through: int = 0  # highest sequence number dropped to stay within bounds


@dataclass(slots=True, eq=False)
class _Session:
    streams: OrderedDict[str, _Stream] = field(default_factory=OrderedDict)
    size: int = 0


class MemoryEventStore:
    """A bounded in-memory :class:`EventStore` for one process.

    Memory stays within ``max_session_bytes`` per session and ``max_total_bytes`` in all;
    past either bound the oldest events go first (oldest stream of the session, oldest
    session overall). A client that then asks to resume from before an evicted event gets
    ``None`` from :meth:`replay`, never a replay with a hole in it.

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

    @property
    def size(self) -> int:
        """Bytes charged for the events held now."""
        return self._total

    def __len__(self) -> int:
        """The number of events held now."""
        return sum(len(s.events) for sess in self._sessions.values() for s in sess.streams.values())

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
        stream.events.append((seq, message))
        cost = _EVENT_OVERHEAD + (len(message) if message is not None else 0)
        session.size += cost
        self._total += cost
        if session.size > self.max_session_bytes:
            self._evict(session, self.max_session_bytes)
        if self._total > self.max_total_bytes:
            for other in list(self._sessions.values()):
                self._evict(other, 0, until_total=self.max_total_bytes)
                if self._total <= self.max_total_bytes:
                    break
        return f"{stream_id}_{seq}"

    def _evict(self, session: _Session, bound: int, *, until_total: int | None = None) -> None:
        def over() -> bool:
            if until_total is not None:
                return self._total > until_total and session.size > 0
            return session.size > bound

        for stream in session.streams.values():
            while stream.events and over():
                seq, message = stream.events.popleft()
                cost = _EVENT_OVERHEAD + (len(message) if message is not None else 0)
                session.size -= cost
                self._total -= cost
                stream.evicted_through = seq
            if not over():
                return

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
        cost = sum(_EVENT_OVERHEAD + (len(m) if m is not None else 0) for _, m in stream.events)
        session.size -= cost
        self._total -= cost
        if not session.streams:
            del self._sessions[session_id]

    async def close_session(self, session_id: str) -> None:
        """Forget every stream of a session."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._total -= session.size
