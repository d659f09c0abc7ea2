"""How :func:`~mcpkit.transports.serve_http` writes responses: a connection's headers and
body in one ``send``, and the answers of one event-loop turn sent together after it.

uvicorn writes a response's status line and headers when the app sends
``http.response.start`` and its body when the app sends ``http.response.body``, each with
its own ``send`` system call, in the middle of the app's request handling. Under load an
event-loop turn runs many requests' tasks one after the other; a ``send`` on a loopback or
LAN socket runs the kernel's whole TCP path (and wakes the peer), which displaces from the
CPU's caches what the next request's handling needs. :class:`Coalescing` joins a response's
headers and body into one write, and :class:`WriteBatch` holds such complete answers until
the tasks of this turn have run, then writes them all: the tasks run back to back on warm
caches and the system calls follow together. When nothing else is left to run in the turn
(one client) the answer is written at once: there is nothing to batch with, and its wait
gains no loop turn. Measured with ``bench http`` (server CPU per request, 16 / 64
clients): mcpkit's stateful JSON endpoint 72.9 / 72.3 us to 55.5-58.1 / 50.5-52.6, a bare
ASGI app 39.0 / 36.9 to 33.5 / 27.9; one client unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Sized
from typing import Any, Final

_OUTQ: int | None
try:  # (POSIX only)
    import fcntl
    import termios
except ImportError:  # pragma: no cover  (Windows has neither module; CI runs on Linux)
    _OUTQ = None
else:
    _OUTQ = getattr(termios, "TIOCOUTQ", None)

__all__ = ["Coalescing", "WriteBatch", "unsent_bytes"]

logger = logging.getLogger("mcpkit.transports.http")

#: Largest body sent in one write with its response's headers (a larger one is written
#: after them, at once: the copy would cost more than the system call it saves).
_COALESCED_BODY: Final = 64 * 1024


class WriteBatch:
    """The connections of one server (one event loop) holding a complete answer, written
    by one callback that runs once the tasks ready in this loop turn have run."""

    __slots__ = ("_held", "_loop", "_loop_ready")

    def __init__(self) -> None:
        self._held: list[Coalescing] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_ready: Sized | None = None

    def hold(self, connection: Coalescing) -> bool:
        """Hold ``connection``'s answer for the end of the loop turn; ``False`` (nothing
        held) when there is nothing left to run in it, so nothing to batch with: the
        answer is then written at once (one client: no loop turn added to its wait)."""
        held = self._held
        if not held:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
                # asyncio's own loops keep the callbacks left to run in ``_ready``;
                # another loop (say, uvloop) always batches.
                self._loop_ready = getattr(loop, "_ready", None)
            ready = self._loop_ready
            if ready is not None and not ready:
                return False
            # (call_soon: after every callback already in the loop's ready queue, which
            # holds the tasks this turn runs)
            loop.call_soon(self.release)
        held.append(connection)
        return True

    def release(self) -> None:
        held, self._held = self._held, []
        for connection in held:
            try:
                connection.release()
            except Exception:  # one connection's failure never loses the others' answers
                logger.exception("writing a held HTTP answer failed")


class Coalescing:
    """A connection's transport that sends a response's headers and its body in one
    write when the body follows at once, and holds that write in its server's
    :class:`WriteBatch` until the end of the loop turn (unless nothing else is left to run
    in it).

    For a response with a ``Content-Length`` (every JSON answer) the headers are held until
    the first body write, which carries them. Anything else (chunked and streamed
    responses, WebSocket frames, ``100 Continue``, a body over 64 KiB) is written at once,
    after whatever this connection still holds, so the bytes keep their order; closing,
    aborting or handing the connection over first writes (or, aborting, drops) what it
    holds. Everything else is the transport's own.
    """

    __slots__ = ("_answer", "_batch", "_held", "_held_for", "_protocol", "_transport", "upgraded")

    def __init__(self, transport: asyncio.Transport, protocol: Any, batch: WriteBatch) -> None:
        self._transport = transport
        self._protocol = protocol
        self._batch = batch
        self._held: bytes | None = None  # a response's headers, waiting for its body
        self._held_for: object = None  # the request cycle whose headers were held
        self._answer: bytes | None = None  # a complete answer, waiting for the batch
        #: The connection was handed to another protocol (a WebSocket upgrade).
        self.upgraded = False

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= _COALESCED_BODY:
                # One write: not writelines, which in CPython 3.12 and 3.13.0 never
                # pauses the protocol past the high-water mark (so no backpressure and
                # no write deadline for a client that reads nothing); copying a small
                # body costs less than the system call saved.
                if self._answer is not None:
                    self.release()
                answer = held + data
                if self._batch.hold(self):
                    self._answer = answer
                else:
                    self._transport.write(answer)
            else:
                self._write(held)
                self._transport.write(data)
            return
        cycle = getattr(self._protocol, "cycle", None)
        if (
            cycle is not None
            and cycle is not self._held_for
            and getattr(cycle, "response_started", False)
            and not getattr(cycle, "response_complete", True)
            and getattr(cycle, "chunked_encoding", None) is False
            and getattr(cycle, "expected_content_length", 0) > 0
        ):
            # The headers of a response whose body comes next (the first write of the
            # cycle once its response started): hold them for it.
            self._held_for = cycle
            self._held = bytes(data)
            return
        self._write(data)

    def _write(self, data: bytes) -> None:
        """Write now, after the answer this connection still holds."""
        if self._answer is not None:
            self.release()
        self._transport.write(data)

    def release(self) -> None:
        """Write the complete answer held for the batch (dropped if the connection is
        closing: its peer is gone, as for any write to a closing transport)."""
        answer = self._answer
        if answer is not None:
            self._answer = None
            if not self._transport.is_closing():
                self._transport.write(answer)

    def flush(self) -> None:
        """Write headers held for a body that never came (after the answer held for the
        batch, which stays held if there are none)."""
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._write(held)

    def _flush_all(self) -> None:
        self.flush()
        self.release()

    def writelines(self, data: Any) -> None:
        self._flush_all()
        self._transport.writelines(data)

    def write_eof(self) -> None:
        self._flush_all()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush_all()
        self._transport.close()

    def abort(self) -> None:
        self._held = self._answer = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_write_buffer_size(self) -> int:
        answer = self._answer
        return self._transport.get_write_buffer_size() + (len(answer) if answer else 0)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._flush_all()  # an upgrade (WebSocket): the new protocol writes at once
        upgraded = getattr(self._protocol, "on_upgrade", None)
        if upgraded is not None:
            upgraded()
        self._protocol = protocol
        self.upgraded = True
        self._transport.set_protocol(protocol)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def unsent_bytes(transport: Any) -> int:
    """Bytes written to ``transport`` that its peer has not taken yet: those in its
    buffer, and those in the kernel's send queue where the platform tells
    (``TIOCOUTQ``, alias ``SIOCOUTQ``, on Linux: sent but not yet acknowledged)."""
    pending: int = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    if _OUTQ is not None and sock is not None:
        try:
            pending += struct.unpack("i", fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0"))[0]
        except OSError:  # not supported for this socket here: the buffer alone
            pass
    return pending
