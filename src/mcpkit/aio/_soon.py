"""Notifications sent from synchronous code on the event loop (``notify_soon``): queued in
order, sent by a background task, bounded for a slow peer, and flushed ahead of the
answer of the request they belong to.

The flush matters for forwarded log records (``Server.forward_logging``): a handler that
logs and returns at once would otherwise have its answer overtake its own records, which
then arrived after the caller's call had returned, or, on a route that ends with its
answer (a 2026-07-28 HTTP request, which has no other stream), never.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
from msgspec import UNSET

from ..exceptions import ConnectionClosedError, MessageNotDelivered
from ._route import _CURRENT, ReplyRoute

if TYPE_CHECKING:
    from ..protocol import Connection

__all__ = ["SoonQueue"]

logger = logging.getLogger("mcpkit.aio")

#: Bounds on the notifications notify_soon() holds for a slow peer.
_SOON_BYTES: Final = 16 * 1024 * 1024
_SOON_COUNT: Final = 10_000


class SoonQueue:
    """The ``notify_soon`` queue of an :class:`~mcpkit.aio.Endpoint` (a mixin)."""

    if TYPE_CHECKING:
        connection: Connection
        _task_group: anyio.abc.TaskGroup | None

        @property
        def closed(self) -> bool: ...

        async def _send(self, data: bytes, route: ReplyRoute | None) -> None: ...

    # (Class-level defaults: an endpoint per stateless HTTP POST sets only the queue.)
    _soon_bytes = 0  # what _soon holds (bounded: see notify_soon)
    _soon_dropped = 0  # dropped since the queue last ran dry
    _draining = False
    # Held while one queued message is sent: the drainer and a flush take turns, so
    # the messages keep their order. (Created with the first message.)
    _soon_lock: anyio.Lock | None = None

    #: notify_soon() messages, in order, each with the route it belongs to (an empty
    #: tuple until the first one: a deque made with the lock, on first use).
    _soon: deque[tuple[bytes, ReplyRoute | None]] = ()  # type: ignore[assignment]

    def notify_soon(self, method: str, params: Any = UNSET, *, related: bool = True) -> None:
        """Send a notification in the background (best effort), from synchronous code
        running on the event loop. Notifications sent this way keep their order, and those
        sent while a request is handled go out before its answer. Dropped when the
        connection is not running, and while 10,000 of them (or 16 MiB) wait for a peer
        that reads too slowly (logged once). ``related`` as for :meth:`notify`.

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
        """
        if self._task_group is None or self.closed:
            return
        route = _CURRENT.get() if related else None
        self.send_soon(self.connection.send_notification(method, params), route, method)

    def send_soon(self, data: bytes, route: ReplyRoute | None, what: str) -> None:
        """Queue encoded ``data`` for the background sender (as :meth:`notify_soon`):
        also the error answers to messages the peer got wrong, which the receive loop
        must not wait to write (a peer that writes without reading its input, a server
        logging to stdout, would fill both pipes: a deadlock)."""
        if self._task_group is None or self.closed:
            return
        if self._soon_bytes + len(data) > _SOON_BYTES or len(self._soon) >= _SOON_COUNT:
            # A peer that reads slower than this side notifies (a flood of forwarded log
            # records): what is queued is bounded, the rest dropped, and it is said once.
            if not self._soon_dropped:
                logger.warning(
                    "messages are queued faster than the peer reads them: dropping %s and "
                    "any more until the queue drains (%d queued, %d bytes)",
                    what,
                    len(self._soon),
                    self._soon_bytes,
                )
            self._soon_dropped += 1
            return
        if self._soon_lock is None:  # the first message: the queue's lock and deque
            self._soon_lock = anyio.Lock()
            self._soon = deque()
        self._soon.append((data, route))
        self._soon_bytes += len(data)
        if not self._draining:
            self._draining = True
            self._task_group.start_soon(self._drain_soon)

    async def _drain_soon(self) -> None:
        assert self._soon_lock is not None
        try:
            while self._soon:
                async with self._soon_lock:
                    if self._soon:  # (a flush may have sent the rest meanwhile)
                        await self._send_next_soon()
        except ConnectionClosedError:
            self._soon.clear()
            self._soon_bytes = 0
        finally:
            self._draining = False
            if self._soon_dropped and not self._soon:
                logger.warning(
                    "the notification queue drained; %d were dropped", self._soon_dropped
                )
                self._soon_dropped = 0

    async def _send_next_soon(self) -> None:
        data, route = self._soon.popleft()
        self._soon_bytes -= len(data)
        try:
            await self._send(data, route)
        except MessageNotDelivered as exc:
            logger.debug("notification not delivered: %s", exc)

    async def _flush_soon(self, route: ReplyRoute | None) -> None:
        """Send, in order, what is queued up to the last message for ``route`` (called
        with the queue not empty, before a request's answer goes out on ``route``).

        Raises:
            ConnectionClosedError: the connection ended.
        """
        assert self._soon_lock is not None
        async with self._soon_lock:  # (waits for a message the drainer is sending)
            count = 0
            for index, (_, queued_route) in enumerate(reversed(self._soon)):
                if queued_route is route:
                    count = len(self._soon) - index
                    break
            for _ in range(count):
                await self._send_next_soon()
