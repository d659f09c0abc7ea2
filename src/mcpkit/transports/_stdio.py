"""The stdio transport, server side: NDJSON over the process's own stdin and stdout.

``basic/transports.mdx`` "stdio": one message per line, UTF-8, nothing but MCP messages on
stdout. Reading is done on the binary file descriptors directly: on POSIX pipes, sockets and
terminals the descriptor is made non-blocking and awaited with the event loop (no thread
hop per line, no text-mode decoding that would hide invalid UTF-8); regular files and
platforms without descriptor polling fall back to reading large chunks in a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import sys
from collections.abc import Callable
from typing import Final

import anyio
import anyio.to_thread

from ..aio import FdReader
from ..protocol import DEFAULT_LIMITS, FrameTooLarge, Limits, LineBuffer, encode_line

logger = logging.getLogger("mcpkit.transports.stdio")

__all__ = [
    "FdChannel",
    "claim_stdout",
    "note_parent",
    "stdio_channel",
    "wait_parent_exit",
]

#: Bytes asked for per read. Under the C library's mmap threshold (128 KiB), so a read's
#: buffer comes from the heap: 256 KiB cost an mmap, an mremap and an munmap per read.
_CHUNK: Final = 64 * 1024

#: The default bound on finishing a line already started (see ``FdChannel``).
FINISH_LINE_TIMEOUT: Final = 5.0


def _pollable(fd: int) -> bool:
    if sys.platform == "win32":
        return False
    mode = os.fstat(fd).st_mode
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class FdChannel:
    """A message channel over two file descriptors (read and write), NDJSON-framed.

    The descriptors' blocking mode is changed while the channel is open and restored by
    :meth:`aclose`; the descriptors themselves are not closed (they belong to the process)
    unless ``owned``.

    Args:
        read_fd: descriptor to read messages from (stdin).
        write_fd: descriptor to write messages to (stdout).
        limits: ``max_message_bytes`` bounds a line.
        owned: the channel owns the descriptors: :meth:`aclose` closes them (the pipes
            to a server subprocess), and :meth:`close_write` may close the write side
            first.
        finish_line_timeout: once part of a line is in the pipe, the rest is written even
            if the sender is cancelled (half a line would run into the next message and
            corrupt both), for at most this many seconds after the cancellation; a reader
            stalled longer leaves the stream unusable, and the channel reports itself
            broken. (A sender that is not cancelled waits for the reader as long as it
            takes.)
    """

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        limits: Limits = DEFAULT_LIMITS,
        owned: bool = False,
        finish_line_timeout: float = FINISH_LINE_TIMEOUT,
    ) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._owned = owned
        self._write_closed = False
        self._broken = False  # a line was left half written: the framing is lost
        self._finish_line_timeout = finish_line_timeout
        self._buffer = LineBuffer(limits.max_message_bytes)
        self._eof = False
        self._ending = False  # the writer is gone: end of file once the pipe is empty
        #: Called once when the input reaches its end (the peer closed its side).
        self.on_eof: Callable[[], None] | None = None
        self._closed = False
        # fast_acquire: an uncontended write does not yield to the event loop first.
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._drained = False  # the last read returned less than asked: wait before reading
        self._poll_read = _pollable(read_fd)
        self._poll_write = _pollable(write_fd)
        self._reader = FdReader(read_fd, _CHUNK)
        # Every mode is read before any is changed: stdin and stdout of a terminal are
        # one open file description, so changing one changes the other.
        polled = [
            fd for fd, poll in ((read_fd, self._poll_read), (write_fd, self._poll_write)) if poll
        ]
        self._saved_blocking = {} if owned else {fd: os.get_blocking(fd) for fd in polled}
        for fd in polled:
            os.set_blocking(fd, False)

    async def receive(self) -> bytes | FrameTooLarge:
        """Receive the next message (one line).

        Raises:
            anyio.EndOfStream: stdin reached end of file.
            anyio.ClosedResourceError: the channel was closed.
        """
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            frame = self._buffer.next_frame()
            if frame is not None:
                return frame
            if self._eof:
                raise anyio.EndOfStream
            chunk = await self._read()
            if chunk:
                self._buffer.feed(chunk)
                continue
            self._eof = True
            if self.on_eof is not None:
                self.on_eof()
            last = self._buffer.end_of_input()
            if last is not None:
                return last

    async def _read(self) -> bytes:
        if not self._poll_read:
            return await anyio.to_thread.run_sync(
                os.read, self._read_fd, _CHUNK, abandon_on_cancel=True
            )
        while True:
            try:
                if not self._drained:
                    chunk = os.read(self._read_fd, _CHUNK)
                elif self._ending:
                    chunk = self._reader.read_nowait()  # (after what a cancelled read kept)
                else:
                    # The pipe was empty a moment ago: wait instead of a read bound to fail.
                    chunk = await self._reader.read()
            except BlockingIOError:
                if self._ending:
                    return b""  # all the writer wrote has been read
                self._drained = True
                continue
            except anyio.ClosedResourceError:
                if self._ending and not self._closed:
                    continue  # woken by end_input: read what is left without waiting
                raise
            except OSError as exc:
                if exc.errno == errno.EIO:  # terminal hung up
                    return b""
                raise
            self._drained = len(chunk) < _CHUNK
            return chunk

    async def send(self, message: bytes) -> None:
        """Write one message and its newline, whole (concurrent sends never interleave).

        Raises:
            anyio.BrokenResourceError: the reader of stdout is gone, or an earlier send
                was cancelled and its line could not be finished within the bound.
            anyio.ClosedResourceError: the channel was closed.
        """
        line = encode_line(message)
        if self._closed or self._write_closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError("a message was left half written")
        written = 0
        if self._poll_write and not self._write_lock.locked():
            # The common case without the lock: nobody else is writing and the pipe takes
            # the whole line at once (no await between the check and the write).
            try:
                written = os.write(self._write_fd, line)
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            if written == len(line):
                return
        # The rest (fast_acquire: the lock is free here, so taking it does not yield and
        # no other send can slip in between). A reader that is slow but reading is waited
        # for; only a cancellation with part of the line out starts the finishing bound.
        left = [memoryview(line)[written:]]
        async with self._write_lock:
            if self._closed or self._write_closed:
                raise anyio.ClosedResourceError
            if self._broken:
                raise anyio.BrokenResourceError("a message was left half written")
            try:
                await self._write(left)
            except anyio.get_cancelled_exc_class():
                if len(left[0]) < len(line):
                    await self._finish(left)
                raise

    async def _write(self, left: list[memoryview]) -> None:
        """Write ``left[0]``, keeping in it what is still to go."""
        while left[0]:
            data = left[0]
            try:
                if not self._poll_write:
                    # Shielded: the thread writes whatever happens, and the count must
                    # not be lost (a regular file does not keep a writer waiting).
                    with anyio.CancelScope(shield=True):
                        written = await anyio.to_thread.run_sync(os.write, self._write_fd, data)
                else:
                    try:
                        written = os.write(self._write_fd, data)
                    except BlockingIOError:
                        await anyio.wait_writable(self._write_fd)
                        continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            left[0] = data[written:]

    async def _finish(self, left: list[memoryview]) -> None:
        """The sender was cancelled with part of a line in the pipe: write the rest
        (half a line would run into the next message and corrupt both), within the
        finishing bound; past it the stream is unusable and the channel broken."""
        with anyio.CancelScope(shield=True) as finishing:
            finishing.deadline = anyio.current_time() + self._finish_line_timeout
            with contextlib.suppress(anyio.BrokenResourceError):
                await self._write(left)
        if left[0]:
            # Whatever is sent next would be read as the rest of the line. The peer of an
            # owned pipe gets end of file instead (and reports the cut line).
            self._broken = True
            logger.warning(
                "a message was left half written: the reader took more than %g s to take "
                "it after its sender was cancelled; the stream is closed",
                self._finish_line_timeout,
            )
            self.close_write()

    def close_write(self) -> None:
        """Close the write side (an owned channel): the peer reads end of file. A send
        waiting for room in the pipe, and any later send, raise
        ``anyio.ClosedResourceError``."""
        if not self._owned or self._write_closed:
            return
        self._write_closed = True
        if self._poll_write:
            anyio.notify_closing(self._write_fd)
        os.close(self._write_fd)

    def end_input(self) -> None:
        """The writer is gone (the server process exited), but the pipe may stay open: a
        process it started can hold the write end for good. Receive what is in the pipe
        now, then end of file (``anyio.EndOfStream``) instead of waiting for more; a
        receive waiting for data wakes up."""
        if self._ending or self._closed:
            return
        self._ending = True
        self._reader.close()  # a read waiting on asyncio raises ClosedResourceError
        if self._poll_read:
            anyio.notify_closing(self._read_fd)  # and on trio (the descriptor stays open)

    async def aclose(self) -> None:
        """Stop using the descriptors: restore their blocking mode, or close them if owned."""
        if self._closed:
            return
        self._closed = True
        self._reader.close()
        if self._owned:
            self.close_write()
            if self._poll_read:
                anyio.notify_closing(self._read_fd)  # a receive waiting (trio) wakes up
            os.close(self._read_fd)
            return
        for fd, blocking in reversed(self._saved_blocking.items()):
            try:
                os.set_blocking(fd, blocking)
            except OSError:
                pass


_protocol_stdout: int | None = None


def claim_stdout() -> int:
    """Reserve stdout for the protocol; return the descriptor to write messages to.

    The protocol keeps a private duplicate of stdout, and descriptor 1 and ``sys.stdout``
    are pointed at stderr: a stray ``print()`` in a tool, in a C extension or in a child
    process can never corrupt the protocol stream (stdout MUST carry nothing but MCP
    messages, ``basic/transports.mdx``). Idempotent; call it as early as possible (the CLI
    does so before importing the server's module).
    """
    global _protocol_stdout
    if _protocol_stdout is None:
        sys.stdout.flush()
        out_fd = sys.stdout.fileno()
        _protocol_stdout = os.dup(out_fd)
        os.dup2(sys.stderr.fileno(), out_fd)
        sys.stdout = sys.stderr
    return _protocol_stdout


_protocol_stdin: int | None = None


def claim_stdin() -> int:
    """Reserve stdin for the protocol; return the descriptor to read messages from.

    The protocol keeps a private duplicate of stdin (not inherited by child processes),
    and descriptor 0 and ``sys.stdin`` are pointed at ``/dev/null``: a tool's child process
    (or the tool itself) reading its stdin would otherwise take the client's requests off
    the pipe, and they would be lost (the client waiting for its timeout). Idempotent; the
    CLI calls it with :func:`claim_stdout`, before importing the server's module.
    """
    global _protocol_stdin
    if _protocol_stdin is None:
        in_fd = sys.stdin.fileno() if sys.stdin is not None else 0
        _protocol_stdin = os.dup(in_fd)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, in_fd)
        finally:
            os.close(null)
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (for the process's life)
    return _protocol_stdin


def stdio_channel(*, limits: Limits = DEFAULT_LIMITS) -> FdChannel:
    """A channel over this process's stdin and stdout (the server side of stdio).

    See :func:`claim_stdin` and :func:`claim_stdout` for how both are kept the protocol's.
    """
    return FdChannel(claim_stdin(), claim_stdout(), limits=limits)


# The process that started us, read as early as possible: if it dies while we are still
# starting up, a later getppid() would already name the re-parenting process instead.
_original_parent = os.getppid()


def note_parent() -> int:
    """Return the parent process id recorded when mcpkit's stdio transport was imported."""
    return _original_parent


async def wait_parent_exit(interval: float = 1.0) -> None:
    """Return once the process that started us has exited (we were re-parented).

    A stdio server must not outlive its client; end of input normally tells, but a client
    that dies while another process still holds our stdin open would leave us running.
    """
    # There is no portable event for "parent exited"; polling getppid() is cheap.
    while os.getppid() == _original_parent:  # noqa: ASYNC110
        await anyio.sleep(interval)
