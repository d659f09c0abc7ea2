"""The live response of an SSE stream: a bounded buffer its producers write to, and the
pump that sends it to the client while watching for the client leaving."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Final

import anyio

from ..protocol import encode_comment
from ._asgi import Receive, Send, until_disconnected

__all__ = ["SSE_HEADERS", "Sink", "pump"]

#: The headers of every SSE response (``text/event-stream``; proxies must neither cache
#: nor transform it, and reverse proxies must not buffer it).
SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]

logger = logging.getLogger("mcpkit.server.http")


class Sink:
    """The live HTTP response an SSE stream writes to.

    Producers (any task) :meth:`put` framed events; the ASGI task that owns the response
    drains them with :func:`pump`. A client that falls more than ``max_bytes`` behind has
    its response ended (its stream lives on in the event store for it to resume) instead
    of the server buffering without bound.
    """

    __slots__ = (
        "_wake",
        "chunks",
        "closed",
        "cut_grace",
        "end",
        "max_bytes",
        "pump_scope",
        "retry_ms",
        "size",
    )

    def __init__(self, max_bytes: int, *, cut_grace: float = 10.0) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.max_bytes = max_bytes
        #: Seconds a client cut off for falling behind has to take what is queued.
        self.cut_grace = cut_grace
        self.end = False  # finish the response after the queued chunks
        self.closed = False  # the client is gone (or was cut off)
        self.retry_ms: int | None = None
        #: The scope of the pump writing this response (set by :func:`pump`).
        self.pump_scope: anyio.CancelScope | None = None
        self._wake = anyio.Event()

    def put(self, chunk: bytes) -> bool:
        """Queue a chunk; returns False when the client is gone or too far behind.

        One chunk larger than ``max_bytes`` is taken when nothing is queued: a single
        message is bounded by the message limits, and a client that keeps up gets it.
        """
        if self.closed or self.end:
            return False
        if self.size and self.size + len(chunk) > self.max_bytes:
            # End this response after what is queued: the client reconnects and resumes
            # from the event store instead of the server buffering without bound. A
            # client that has stopped reading does not hold the response (and what it
            # holds) for ever: the pump stops after cut_grace seconds.
            logger.warning("SSE client too slow (%d bytes queued): ending its stream", self.size)
            self.finish()
            if self.pump_scope is not None:
                self.pump_scope.deadline = anyio.current_time() + self.cut_grace
            return False
        self.chunks.append(chunk)
        self.size += len(chunk)
        self._wake.set()
        return True

    def finish(self) -> None:
        """End the HTTP response once the queued chunks are written."""
        self.end = True
        self._wake.set()

    def disconnect(self) -> None:
        """The client is gone: stop writing."""
        self.closed = True
        self._wake.set()

    def gone(self) -> bool:
        """Whether the client went away (or was cut off)."""
        return self.closed

    async def wait(self) -> None:
        await self._wake.wait()
        self._wake = anyio.Event()

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        self.size = 0
        return data


async def _watch_disconnect(receive: Receive, sink: Sink) -> None:
    await until_disconnected(receive)
    sink.disconnect()


async def pump(
    sink: Sink,
    send: Send,
    receive: Receive,
    *,
    keepalive: float,
    on_gone: Callable[[], None] | None = None,
) -> bool:
    """Write the sink's chunks to the open SSE response until it ends or the client goes.

    Sends a comment line after ``keepalive`` idle seconds (proxies close silent
    connections; writing is also how a vanished client is noticed). A write that takes
    longer than twice ``keepalive`` (the client takes nothing: the server's buffers are
    full) ends the response as if the client had left; whatever ASGI server runs the app,
    the stream then lets go of its task and session (its events stay in the event store
    for the client to resume). Returns whether the response ended normally with
    everything written (False: the client disconnected). ``on_gone`` runs as soon as the
    client is known to be gone.
    """
    delivered = False
    stuck_after = 2 * keepalive
    async with anyio.create_task_group() as tg:
        sink.pump_scope = tg.cancel_scope
        tg.start_soon(_watch_disconnect, receive, sink)
        try:
            while not sink.closed:
                if not sink.chunks and not sink.end:
                    with anyio.move_on_after(keepalive) as idle:
                        await sink.wait()
                    if idle.cancelled_caught:
                        body, more = encode_comment(), True
                    else:
                        continue
                elif sink.gone():
                    break
                else:
                    body, more = sink.take(), not sink.end
                    if not body and more:
                        continue
                with anyio.move_on_after(stuck_after) as stuck:
                    await send({"type": "http.response.body", "body": body, "more_body": more})
                if stuck.cancelled_caught:
                    logger.warning(
                        "SSE client took nothing for %g s: ending its stream", stuck_after
                    )
                    sink.disconnect()
                    break
                if not more:
                    delivered = True
                    break
        except OSError:  # some servers raise when writing to a closed connection
            sink.disconnect()
        finally:
            sink.pump_scope = None
            tg.cancel_scope.cancel()
    if not delivered:
        sink.disconnect()
        if on_gone is not None:
            on_gone()
    return delivered
