"""Waiting for a file descriptor to become readable, cheaply when it happens per message.

``anyio.wait_readable`` registers the descriptor with the event loop and removes it again
on every wait: on asyncio two ``epoll_ctl`` calls and a selector update per wait, which
for a stdio server answering one request at a time is a wait per request. On asyncio,
:class:`ReadableWaiter` keeps the descriptor registered between waits and only stops
watching it when it becomes readable while nobody waits (the consumer is busy, e.g. at
its cap of handlers in flight): the loop's polling is level-triggered, so leaving it
registered then would wake the loop on every iteration until the data is read. Under trio
it is ``anyio.wait_readable``.
"""

from __future__ import annotations

import asyncio

import anyio

__all__ = ["ReadableWaiter"]


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None  # trio


class ReadableWaiter:
    """Waits until one descriptor is readable; one waiter at a time.

    Call :meth:`close` when done with the descriptor (before closing it).

    Args:
        fd: the descriptor (a pipe, socket or terminal: something the loop can poll).
    """

    __slots__ = ("_fd", "_loop", "_registered", "_trio", "_waiter")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop: asyncio.AbstractEventLoop | None = None
        self._trio = False
        self._registered = False
        self._waiter: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        """Return once the descriptor is readable (data, end of file or an error).

        Raises:
            anyio.BusyResourceError: another task is already waiting.
        """
        loop = self._loop
        if loop is None:
            if self._trio or (loop := _asyncio_loop()) is None:
                self._trio = True
                await anyio.wait_readable(self._fd)
                return
            self._loop = loop
        if self._waiter is not None:
            raise anyio.BusyResourceError("waiting on the descriptor")
        waiter = self._waiter = loop.create_future()
        try:
            if not self._registered:
                loop.add_reader(self._fd, self._readable)
                self._registered = True
            await waiter
        finally:
            self._waiter = None

    def _readable(self) -> None:
        waiter = self._waiter
        if waiter is None:
            self._unregister()
        elif not waiter.done():
            waiter.set_result(None)

    def _unregister(self) -> None:
        if self._registered and self._loop is not None:
            self._registered = False
            if not self._loop.is_closed():
                self._loop.remove_reader(self._fd)

    def close(self) -> None:
        """Stop watching the descriptor (idempotent)."""
        self._unregister()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(anyio.ClosedResourceError())
