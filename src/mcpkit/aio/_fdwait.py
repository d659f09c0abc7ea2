"""Reading a non-blocking file descriptor, cheaply when it happens once per message.

``anyio.wait_readable`` registers the descriptor with the event loop and removes it again
on every wait: on asyncio two ``epoll_ctl`` calls and a selector update per wait, which
for a stdio peer exchanging one message at a time is a wait per message. On asyncio,
:class:`FdReader` keeps the descriptor registered between reads and reads in the loop's
callback itself, so a callback that the loop had queued before the data was consumed
(polling is level-triggered) finds nothing to read and wakes nobody. It stops watching the
descriptor when it becomes readable while nobody reads (the consumer is busy): left
registered, it would wake the loop on every iteration until the data is read. Under trio
it is ``anyio.wait_readable`` and a read.
"""

from __future__ import annotations

import asyncio
import os

import anyio

from ._endpoint import _running_asyncio_loop

__all__ = ["FdReader"]


class FdReader:
    """Reads a non-blocking descriptor (a pipe, socket or terminal); one reader at a time.

    Call :meth:`close` when done with the descriptor (before closing it).

    Args:
        fd: the descriptor, already non-blocking.
        size: bytes asked for per read.
    """

    __slots__ = ("_fd", "_kept", "_loop", "_registered", "_size", "_trio", "_waiter")

    def __init__(self, fd: int, size: int) -> None:
        self._fd = fd
        self._size = size
        self._loop: asyncio.AbstractEventLoop | None = None
        self._trio = False
        self._registered = False
        self._waiter: asyncio.Future[bytes] | None = None
        self._kept: bytes | None = None  # read for a reader that was cancelled meanwhile

    async def read(self) -> bytes:
        """Wait for data and return it (``b""``: end of file).

        Raises:
            OSError: the read failed.
            anyio.BusyResourceError: another task is already reading.
            anyio.ClosedResourceError: :meth:`close` was called meanwhile.
        """
        kept = self._kept
        if kept is not None:
            self._kept = None
            return kept
        loop = self._loop
        if loop is None:
            if self._trio or (loop := _running_asyncio_loop()) is None:
                self._trio = True
                return await self._read_trio()
            self._loop = loop
        if self._waiter is not None:
            raise anyio.BusyResourceError("reading from the descriptor")
        waiter: asyncio.Future[bytes] = loop.create_future()
        self._waiter = waiter
        try:
            if not self._registered:
                loop.add_reader(self._fd, self._readable)
                self._registered = True
            return await waiter
        except asyncio.CancelledError:
            # Cancelled after the callback had read for us: keep the data for the next
            # read rather than lose it.
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._kept = waiter.result()
            raise
        finally:
            self._waiter = None

    def read_nowait(self) -> bytes:
        """What a cancelled read kept, or else a read that does not wait (``b""``: end of
        file).

        Raises:
            BlockingIOError: there is nothing to read now.
            OSError: the read failed.
        """
        kept = self._kept
        if kept is not None:
            self._kept = None
            return kept
        return os.read(self._fd, self._size)

    async def _read_trio(self) -> bytes:
        while True:
            await anyio.wait_readable(self._fd)
            try:
                return os.read(self._fd, self._size)
            except BlockingIOError:
                continue

    def _readable(self) -> None:
        waiter = self._waiter
        if waiter is None:
            self._unregister()
            return
        if waiter.done():
            return
        try:
            chunk = os.read(self._fd, self._size)
        except BlockingIOError:
            return  # queued before the data was consumed: nothing new yet
        except OSError as exc:
            if not waiter.done():
                waiter.set_exception(exc)
            return
        if waiter.done():
            # Cancelled during the read: a signal handler ran (Ctrl-C cancels the main
            # task, and with it this waiter). Keep the data for the next read.
            self._kept = chunk
            return
        waiter.set_result(chunk)

    def _unregister(self) -> None:
        if self._registered and self._loop is not None:
            self._registered = False
            if not self._loop.is_closed():
                self._loop.remove_reader(self._fd)

    def close(self) -> None:
        """Stop watching the descriptor (idempotent); a read in progress raises
        ``anyio.ClosedResourceError``."""
        self._unregister()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(anyio.ClosedResourceError())
