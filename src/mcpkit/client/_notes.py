"""The client's notification callbacks, run in order in a task of their own.

A callback awaited in the connection's receive loop could not make a request of its own
(``on_list_changed`` refreshing the list is the natural one): the answer can only be read
by the loop the callback is holding, so the connection locked up. Here the loop hands each
notification to one worker task, in arrival order, and goes on reading. What callers
expect is kept: a request's result is handed back only once the callbacks of the
notifications received before it have run (a tool's log messages reach ``on_log`` before
its ``call_tool`` returns), except in a callback itself, which would wait for itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from msgspec import Raw

__all__ = ["CallbackRunner"]

logger = logging.getLogger("mcpkit.client")

#: Notifications waiting for their callbacks; more are dropped, with a warning when the
#: dropping starts and one with the count when the callbacks have caught up.
MAX_QUEUED: Final = 1024
#: Their bytes as received (a server chooses how large each one is), likewise.
MAX_QUEUED_BYTES: Final = 32 * 1024 * 1024

Handle = Callable[[str, Raw | None], Awaitable[None]]


class CallbackRunner:
    """Runs ``handle(method, params)`` for each submitted notification, in order, in the
    task that runs :meth:`run` (the connection's: it ends with the connection)."""

    __slots__ = (
        "_done",
        "_dropping",
        "_event",
        "_handle",
        "_held",
        "_max_bytes",
        "_queued",
        "_receive",
        "_send",
        "_worker",
    )

    def __init__(
        self, handle: Handle, max_queued: int = MAX_QUEUED, max_bytes: int = MAX_QUEUED_BYTES
    ) -> None:
        self._handle = handle
        self._max_bytes = max_bytes
        self._held = 0  # bytes of the params submitted and not handled yet
        self._dropping = 0  # dropped since the callbacks last caught up
        self._send: MemoryObjectSendStream[tuple[str, Raw | None]]
        self._receive: MemoryObjectReceiveStream[tuple[str, Raw | None]]
        self._send, self._receive = anyio.create_memory_object_stream[tuple[str, Raw | None]](
            max_queued
        )
        self._queued = 0  # submitted so far
        self._done = 0  # of those, handled (or given up)
        self._event: anyio.Event | None = None
        self._worker: int | None = None

    def close(self) -> None:
        """Stop taking notifications; nobody waits any more for callbacks not yet run."""
        self._send.close()
        self._receive.close()
        self._done = self._queued
        self._held = 0
        self._caught_up_after_dropping()
        self._wake()

    def submit(self, method: str, params: Raw | None) -> None:
        """Queue a notification for its callback (never waits)."""
        size = 0 if params is None else len(params)
        if self._held and self._held + size > self._max_bytes:
            # (One alone is taken whatever its size: max_message_bytes bounds it.)
            self._drop(method)
            return
        try:
            self._send.send_nowait((method, params))
        except anyio.WouldBlock:
            self._drop(method)
            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the client is closing
        self._queued += 1
        self._held += size

    def _drop(self, method: str) -> None:
        # One warning as the dropping starts and one with the count as it ends: a warning
        # per notification made a flood of them a flood of log lines.
        self._dropping += 1
        if self._dropping == 1:
            logger.warning(
                "notification %r dropped: %d are waiting for the client's callbacks "
                "(the next are dropped until they catch up)",
                method,
                self._queued - self._done,
            )

    def _caught_up_after_dropping(self) -> None:
        if self._dropping:
            logger.warning(
                "%d notifications were dropped while the client's callbacks were behind",
                self._dropping,
            )
            self._dropping = 0

    @property
    def pending(self) -> bool:
        """Whether some submitted notification's callback has not run yet."""
        return self._done < self._queued

    async def caught_up(self) -> None:
        """Wait until the callbacks of everything submitted so far have run (at once in
        a callback: it would be waiting for itself)."""
        target = self._queued
        if self._done >= target or anyio.get_current_task().id == self._worker:
            return
        while self._done < target:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()

    async def run(self) -> None:
        """Run the callbacks, in order, until :meth:`close` (or cancelled)."""
        self._worker = anyio.get_current_task().id
        try:
            async for method, params in self._receive:
                try:
                    await self._handle(method, params)
                except Exception:
                    logger.exception("the callback for %r failed", method)
                finally:
                    self._done += 1
                    self._held -= 0 if params is None else len(params)
                    if self._done == self._queued:
                        self._caught_up_after_dropping()
                    self._wake()
        except anyio.ClosedResourceError:
            pass

    def _wake(self) -> None:
        event, self._event = self._event, None
        if event is not None:
            event.set()
