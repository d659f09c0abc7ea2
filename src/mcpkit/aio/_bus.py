"""The notification bus: server-initiated change notifications, published once and
delivered to every subscriber whose topics match.

A small interface (:class:`NotificationBus`, :class:`Subscription`) with an in-memory
default (:class:`MemoryNotificationBus`), so a bus spanning processes (Redis pub/sub, say)
can replace it without touching the layers above. Publishing never blocks: a bus that does
I/O queues the message and sends it in the background.

Messages are change signals ("the tools list changed", "this resource was updated"): one
identical to a message still waiting in a subscriber's queue adds nothing for that
subscriber and is not queued again, so a burst of changes (a plugin reload registering
hundreds of tools) costs a slow listener one message, not a cut-off.

Each subscription has a bounded queue. The overflow policy: a subscriber that falls
``max_queued`` messages behind is cut off, its queue is dropped (the memory goes at once)
and its next receive raises :class:`~mcpkit.exceptions.SubscriptionOverflowError`. A
listener that has missed messages cannot know what it missed, so it is better told than
silently fed a gap; the owner of the subscription decides what the subscriber hears (a
``subscriptions/listen`` stream ends with an error, see ``mcpkit.server``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

import anyio
import anyio.lowlevel
import msgspec

from ..exceptions import LocalProtocolError, SubscriptionOverflowError

__all__ = ["BusMessage", "MemoryNotificationBus", "NotificationBus", "Subscription"]

logger = logging.getLogger("mcpkit.aio.bus")

_OPEN: Final = "open"
_ENDING: Final = "ending"  # ended gracefully: what is queued is still delivered
_OVERFLOWED: Final = "overflowed"
_CLOSED: Final = "closed"


@dataclass(frozen=True, slots=True)
class BusMessage:
    """One published notification.

    Attributes:
        topic: what subscribers select on (e.g. ``tools/list_changed``).
        method: the notification's method.
        params: the notification's params (without ``_meta``; each delivery adds its own).
    """

    topic: str
    method: str
    params: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Subscription(Protocol):
    """One subscriber's view of a :class:`NotificationBus`: a bounded queue of the
    messages published on its topics since it subscribed, in publication order."""

    @property
    def topics(self) -> frozenset[str]:
        """The topics delivered to this subscription."""

    def update(self, topics: Iterable[str]) -> None:
        """Replace the topics (from the next publication on)."""

    async def wait(self) -> None:
        """Wait until a message is queued, or the subscription ended, overflowed or was
        closed (returns at once if so)."""

    def receive_nowait(self) -> BusMessage | None:
        """The next queued message, or ``None`` if none is queued.

        Raises:
            anyio.EndOfStream: the subscription was ended and everything queued delivered.
            SubscriptionOverflowError: the subscriber fell too far behind and was cut off.
            anyio.ClosedResourceError: the subscription was closed.
        """

    async def receive(self) -> BusMessage:
        """The next message, waiting for one.

        Raises:
            anyio.EndOfStream: as for :meth:`receive_nowait`.
            SubscriptionOverflowError: as for :meth:`receive_nowait`.
            anyio.ClosedResourceError: as for :meth:`receive_nowait`.
        """

    def end(self) -> None:
        """End gracefully: nothing more is queued; the receiver gets what is already
        queued, then :class:`anyio.EndOfStream`."""

    def close(self) -> None:
        """Unsubscribe now and drop what is queued (idempotent)."""


@runtime_checkable
class NotificationBus(Protocol):
    """Where notifications are published and subscribed to."""

    def subscribe(self, topics: Iterable[str], *, max_queued: int | None = None) -> Subscription:
        """A new subscription to ``topics`` (``max_queued``: its queue bound, default the
        bus's).

        Raises:
            LocalProtocolError: ``max_queued`` is not positive.
        """

    def publish(self, message: BusMessage) -> int:
        """Queue ``message`` for every subscriber of its topic, without blocking. Call it
        on the event loop's thread. Returns how many subscriptions in this process it was
        queued for."""


def _identity(message: BusMessage) -> tuple[str, str, bytes]:
    params = message.params
    return message.topic, message.method, _ENCODE(params) if params else b""


_ENCODE: Final = msgspec.json.Encoder(order="deterministic").encode


class _MemorySubscription:
    __slots__ = ("_bus", "_event", "_queue", "_queued", "_state", "_topics", "max_queued")

    def __init__(self, bus: MemoryNotificationBus, topics: frozenset[str], max_queued: int) -> None:
        self._bus = bus
        self._topics = topics
        self.max_queued = max_queued
        self._queue: deque[BusMessage] = deque()
        self._queued: set[tuple[str, str, bytes]] = set()  # what the queue holds, by content
        self._state = _OPEN
        self._event: anyio.Event | None = None

    @property
    def topics(self) -> frozenset[str]:
        return self._topics

    def update(self, topics: Iterable[str]) -> None:
        new = frozenset(topics)
        if self._state == _OPEN:
            self._bus._retopic(self, self._topics, new)
        self._topics = new

    def _offer(self, message: BusMessage) -> None:
        key = _identity(message)
        if key in self._queued:
            return  # the same signal is still waiting: the subscriber will see it once
        if len(self._queue) >= self.max_queued:
            # Debug only: this runs in the publisher's task; the subscriber's owner reports.
            logger.debug("a subscriber fell %d notifications behind: cut off", self.max_queued)
            self._queue.clear()
            self._queued.clear()
            self._stop(_OVERFLOWED)
            return
        self._queue.append(message)
        self._queued.add(key)
        self._wake()

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = None

    def _stop(self, state: str) -> None:
        if self._state == _OPEN:
            self._bus._remove(self)
        self._state = state
        self._wake()

    async def wait(self) -> None:
        if self._queue or self._state != _OPEN:
            await anyio.lowlevel.checkpoint()
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    def receive_nowait(self) -> BusMessage | None:
        if self._queue:
            message = self._queue.popleft()
            self._queued.discard(_identity(message))
            return message
        if self._state == _ENDING:
            raise anyio.EndOfStream
        if self._state == _OVERFLOWED:
            raise SubscriptionOverflowError(
                f"the subscriber fell {self.max_queued} notifications behind and was cut off"
            )
        if self._state == _CLOSED:
            raise anyio.ClosedResourceError
        return None

    async def receive(self) -> BusMessage:
        while True:
            message = self.receive_nowait()
            if message is not None:
                return message
            await self.wait()

    def end(self) -> None:
        if self._state == _OPEN:
            self._stop(_ENDING)

    def close(self) -> None:
        self._queue.clear()
        self._queued.clear()
        if self._state in (_OPEN, _ENDING):
            self._stop(_CLOSED)


class MemoryNotificationBus:
    """A :class:`NotificationBus` inside one process (the default).

    Args:
        max_queued: the default bound of each subscription's queue (see the module's
            overflow policy).

    Raises:
        LocalProtocolError: ``max_queued`` is not positive.
    """

    def __init__(self, max_queued: int = 1000) -> None:
        if max_queued < 1:
            raise LocalProtocolError("max_queued must be at least 1")
        self.max_queued = max_queued
        self._by_topic: dict[str, set[_MemorySubscription]] = {}

    @property
    def subscriptions(self) -> int:
        """How many subscriptions still receive publications (not ended, cut off or
        closed)."""
        return len({sub for subs in self._by_topic.values() for sub in subs})

    def subscribe(self, topics: Iterable[str], *, max_queued: int | None = None) -> Subscription:
        """See :meth:`NotificationBus.subscribe`.

        Raises:
            LocalProtocolError: ``max_queued`` is not positive.
        """
        bound = self.max_queued if max_queued is None else max_queued
        if bound < 1:
            raise LocalProtocolError("max_queued must be at least 1")
        subscription = _MemorySubscription(self, frozenset(topics), bound)
        self._retopic(subscription, frozenset(), subscription.topics)
        return subscription

    def publish(self, message: BusMessage) -> int:
        """See :meth:`NotificationBus.publish`."""
        subscribers = self._by_topic.get(message.topic)
        if not subscribers:
            return 0
        # A copy: an overflowing subscriber unsubscribes itself while we iterate.
        queued = 0
        for subscription in list(subscribers):
            subscription._offer(message)
            queued += subscription._state == _OPEN
        return queued

    def _retopic(
        self, subscription: _MemorySubscription, old: frozenset[str], new: frozenset[str]
    ) -> None:
        for topic in old - new:
            self._discard(topic, subscription)
        for topic in new - old:
            self._by_topic.setdefault(topic, set()).add(subscription)

    def _remove(self, subscription: _MemorySubscription) -> None:
        for topic in subscription.topics:
            self._discard(topic, subscription)

    def _discard(self, topic: str, subscription: _MemorySubscription) -> None:
        subscribers = self._by_topic.get(topic)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._by_topic[topic]
