"""The stdio transport, client side: spawn an MCP server and talk NDJSON over its pipes.

Shutdown follows ``basic/lifecycle.mdx`` "Shutdown" for stdio: close the server's stdin,
wait, then SIGTERM, wait, then SIGKILL, and always reap the process (no zombies). On POSIX
the server runs in its own session so the escalation reaches its children too, and a
Ctrl-C aimed at the client does not kill the server mid-reply.

On POSIX the pipes are the client's own (``os.pipe``), read and written non-blocking on the
event loop exactly as the server side does (:class:`FdChannel`): no stream-reader layer,
no buffer of 256 KiB allocated per read; the process itself (start, wait, signals) is
anyio's. Elsewhere anyio's process streams carry the messages.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Final, Literal

import anyio
import anyio.abc

from ..exceptions import TransportError
from ..protocol import DEFAULT_LIMITS, FrameTooLarge, Limits, LineBuffer, encode_line
from ._stdio import FdChannel

__all__ = ["ProcessChannel", "StdioTransport"]

logger = logging.getLogger("mcpkit.transports.stdio")
_CHUNK: Final = 256 * 1024
_TAIL_LINES: Final = 20
_TAIL_LINE_CHARS: Final = 500
#: How long closing waits for the stderr pump to read what the server wrote before it
#: exited (at once, unless a process it started in a session of its own holds stderr).
_STDERR_DRAIN: Final = 1.0

StderrMode = Literal["inherit", "capture", "devnull"]


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running. Zombies do not count: an
    init process that is slow to reap them (in a container, say) would make them look
    alive. Linux reads /proc; elsewhere any member counts."""
    if not sys.platform.startswith("linux"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
                    fields = stat.read().rpartition(b")")[2].split()
            except OSError:
                continue  # it exited meanwhile
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


class StdioTransport:
    """Launch an MCP server as a subprocess and connect to it over stdio.

    Args:
        command: the program to run, e.g. ``"python"`` or ``["uvx", "some-server"]``.
        args: further arguments.
        env: environment of the server; ``None`` inherits ours.
        cwd: working directory of the server.
        stderr: ``"inherit"`` (the server's log lines go to our stderr), ``"capture"``
            (each line is passed to ``on_stderr``, or logged at INFO on
            ``mcpkit.transports.stdio``; stderr is not an error signal), or ``"devnull"``.
        on_stderr: receives each captured stderr line (``stderr="capture"``).
        terminate_timeout: seconds to wait at each shutdown step before escalating.
        limits: ``max_message_bytes`` bounds a line from the server.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrMode = "inherit",
        on_stderr: Callable[[str], None] | None = None,
        terminate_timeout: float = 2.0,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        base = [command] if isinstance(command, str) else list(command)
        if not base:
            raise ValueError("command must not be empty")
        self.argv = [*base, *args]
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.stderr = stderr
        self.on_stderr = on_stderr
        self.terminate_timeout = terminate_timeout
        self.limits = limits

    def connect(self) -> ProcessChannel:
        """Return the channel; entering it (``async with``) starts the process."""
        return ProcessChannel(self)


class ProcessChannel:
    """A message channel to a server subprocess. Enter and exit it in the same task.

    Raises:
        TransportError: on entry, if the process cannot be started.
    """

    def __init__(self, transport: StdioTransport) -> None:
        self._t = transport
        self._process: anyio.abc.Process | None = None
        # POSIX: the pipes are ours, read and written directly on the event loop (as the
        # server side does); elsewhere anyio's process streams.
        self._pipes: FdChannel | None = None
        self._buffer = LineBuffer(transport.limits.max_message_bytes)
        self._eof = False
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._task_group: anyio.abc.TaskGroup | None = None
        self._watching = anyio.CancelScope()  # the watch for the server's exit
        #: The last captured stderr lines (shortened), for :meth:`exit_reason`.
        self._stderr_tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self._stderr_done = anyio.Event()  # the pump read stderr to its end

    def connect(self) -> contextlib.AbstractAsyncContextManager[ProcessChannel]:
        """Act as a transport: an unopened channel opens itself (so it can be handed to
        ``Client`` while the caller keeps it to read ``pid`` / ``returncode``); an open one
        is handed over as it is, never started twice."""
        if self._process is None:
            return self
        return contextlib.nullcontext(self)

    @property
    def pid(self) -> int | None:
        """The server's process id, once started."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The server's exit status, once it has exited."""
        return self._process.returncode if self._process is not None else None

    async def __aenter__(self) -> ProcessChannel:
        stderr: int | None = {
            "inherit": None,
            "capture": subprocess.PIPE,
            "devnull": subprocess.DEVNULL,
        }[self._t.stderr]
        posix = sys.platform != "win32"
        # The child's ends of our own pipes (non-inheritable here; the child gets them as
        # its descriptors 0 and 1), closed in this process once it has started.
        stdin_r, stdin_w = os.pipe() if posix else (subprocess.PIPE, -1)
        stdout_r, stdout_w = os.pipe() if posix else (-1, subprocess.PIPE)
        try:
            self._process = await anyio.open_process(
                self._t.argv,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=stderr,
                env=self._t.env,
                cwd=self._t.cwd,
                start_new_session=posix,
            )
        except BaseException as exc:  # a cancellation too: the pipes must not leak
            if posix:
                for fd in (stdin_r, stdin_w, stdout_r, stdout_w):
                    os.close(fd)
            if isinstance(exc, OSError):
                raise TransportError(f"cannot start {self._t.argv[0]!r}: {exc}") from exc
            raise
        if posix:
            os.close(stdin_r)
            os.close(stdout_w)
            self._pipes = FdChannel(stdout_r, stdin_w, limits=self._t.limits, owned=True)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        if self._process.stderr is not None:
            self._task_group.start_soon(self._pump_stderr, self._process.stderr)
        if posix:
            self._task_group.start_soon(self._watch_exit, self._process)
        return self

    async def _watch_exit(self, process: anyio.abc.Process) -> None:
        """When the server exits by itself, its output ends with what is in the pipe: a
        process it started that inherited its stdout keeps the pipe open, and the end of
        the server, and of its pending calls, would go unseen until the calls' timeouts
        (signals do not reach one in a session of its own). Then end what it started in
        its session (its process group): SIGTERM, then SIGKILL after
        ``terminate_timeout``."""
        with self._watching:
            await process.wait()
            assert self._pipes is not None  # (watched on POSIX only, with our own pipes)
            self._pipes.end_input()
            for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
                if not self._signal(process, sig):
                    return  # nothing is left of the session
                await anyio.sleep(self._t.terminate_timeout)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self.aclose()
            if self._process is not None:
                if self._process.stderr is not None:
                    # Closing the pipe under the pump would cut off the server's last
                    # lines (those that say why it failed): let it read them first.
                    with anyio.move_on_after(_STDERR_DRAIN):
                        await self._stderr_done.wait()
                await self._process.aclose()  # closes the pipes; the process is reaped
        assert self._task_group is not None
        # The stderr pump ends on its own once the process (and its pipe) is gone.
        return await self._task_group.__aexit__(exc_type, exc, tb)

    async def _pump_stderr(self, stream: anyio.abc.ByteReceiveStream) -> None:
        # Only the new chunk is searched for line ends: joining and splitting the whole
        # unfinished line per chunk took quadratic time on output without newlines.
        pending = bytearray()
        limit = self._t.limits.max_message_bytes
        try:
            async for chunk in stream:
                start = 0
                end = chunk.find(b"\n")
                while end >= 0:
                    pending += chunk[start:end]
                    self._emit_stderr(bytes(pending))
                    pending.clear()
                    start = end + 1
                    end = chunk.find(b"\n", start)
                pending += chunk[start:]
                if len(pending) > limit:
                    self._emit_stderr(bytes(pending))
                    pending.clear()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            if pending:
                self._emit_stderr(bytes(pending))
            self._stderr_done.set()

    def _emit_stderr(self, line: bytes) -> None:
        text = line.rstrip(b"\r").decode("utf-8", "replace")
        self._stderr_tail.append(text[:_TAIL_LINE_CHARS])
        if self._t.on_stderr is not None:
            try:
                self._t.on_stderr(text)
            except Exception:
                logger.exception("on_stderr callback failed")
        else:
            logger.info("server stderr: %s", text)

    async def exit_reason(self, wait: float = 1.0) -> str | None:
        """Why the server went away, for an error message: its exit status (waited for
        up to ``wait`` seconds) and, when stderr is captured, its last lines. ``None``
        when it has not exited."""
        process = self._process
        if process is None:
            return None
        with anyio.move_on_after(wait):
            await process.wait()
            if process.stderr is not None:  # its last words may still be in the pipe
                await self._stderr_done.wait()
        code = process.returncode
        if code is None:
            return None
        reason = (
            f"the server process was killed by signal {-code}"
            if code < 0
            else f"the server process exited with status {code}"
        )
        if self._stderr_tail:
            reason += "; the end of its stderr:\n" + "\n".join(self._stderr_tail)
        return reason

    async def receive(self) -> bytes | FrameTooLarge:
        """Receive the next message from the server.

        Raises:
            anyio.EndOfStream: the server closed its stdout (usually: it exited).
        """
        if self._pipes is not None:
            return await self._pipes.receive()
        assert self._process is not None
        assert self._process.stdout is not None
        while True:
            frame = self._buffer.next_frame()
            if frame is not None:
                return frame
            if self._eof:
                raise anyio.EndOfStream
            try:
                chunk = await self._process.stdout.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._eof = True
                last = self._buffer.end_of_input()
                if last is not None:
                    return last
                continue
            self._buffer.feed(chunk)

    async def send(self, message: bytes) -> None:
        """Send one message to the server.

        Raises:
            anyio.BrokenResourceError: the server is gone.
        """
        if self._pipes is not None:
            try:
                await self._pipes.send(message)
            except anyio.ClosedResourceError:
                raise anyio.BrokenResourceError from None  # closed by aclose: the server is gone
            return
        assert self._process is not None
        assert self._process.stdin is not None
        data = encode_line(message)
        async with self._write_lock:
            await self._process.stdin.send(data)

    async def aclose(self) -> None:
        """Shut the server down: close stdin, then SIGTERM, then SIGKILL; reap it."""
        self._watching.cancel()  # from here on, shutting down is aclose's
        try:
            await self._shut_down()
        finally:
            if self._pipes is not None:
                await self._pipes.aclose()

    async def _shut_down(self) -> None:
        process = self._process
        if process is None:
            return
        try:
            if process.returncode is None:
                await self._stop(process)
        finally:
            if sys.platform != "win32":
                await self._end_session(process)

    async def _end_session(self, process: anyio.abc.Process) -> None:
        """The server has exited; end what it started and left running in its session (its
        process group): SIGTERM, then SIGKILL after ``terminate_timeout``."""
        if not self._signal(process, signal.SIGTERM):
            return  # nothing is left of the session (the usual case)
        with anyio.move_on_after(self._t.terminate_timeout):
            # Not our children: there is no exit to wait on, only their absence to see.
            while _group_alive(process.pid):  # noqa: ASYNC110
                await anyio.sleep(0.02)
            return
        self._signal(process, getattr(signal, "SIGKILL", signal.SIGTERM))  # (cannot be ignored)

    async def _stop(self, process: anyio.abc.Process) -> None:
        if self._pipes is not None:
            self._pipes.close_write()
        elif process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass
        timeout = self._t.terminate_timeout
        for step in (None, signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            if step is not None:
                self._signal(process, step)
            with anyio.move_on_after(timeout):
                await process.wait()
                return
        await process.wait()  # after SIGKILL the process is gone promptly

    @staticmethod
    def _signal(process: anyio.abc.Process, sig: int) -> bool:
        """Signal the server (POSIX: its whole session); False when nothing of it is left."""
        try:
            if sys.platform != "win32":
                os.killpg(process.pid, sig)  # its own session: reach its children too
            elif sig == signal.SIGTERM:
                process.terminate()
            else:
                process.kill()
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
