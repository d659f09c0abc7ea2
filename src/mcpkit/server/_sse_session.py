"""A session of the legacy HTTP+SSE transport (MCP 2024-11-05): its message channel (SSE
``message`` events out on the GET response, POSTed messages in) and its MCP session. Used
by :mod:`._sse_app`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol import encode_event
from ._asgi_sse import Sink
from ._http_streams import SHUTDOWN_ERROR
from ._session import ServerSession

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["LegacySession"]

#: POSTed messages waiting for the session's receive loop (which drains them promptly).
_INBOUND_BUFFER: Final = 64


class _Channel:
    """The session's message channel: ``send`` writes ``message`` events to the GET
    response, ``receive`` yields what POSTs delivered."""

    __slots__ = ("_in_receive", "_in_send", "closed", "sink")

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._in_send: MemoryObjectSendStream[bytes]
        self._in_receive: MemoryObjectReceiveStream[bytes]
        self._in_send, self._in_receive = anyio.create_memory_object_stream[bytes](_INBOUND_BUFFER)
        self.closed = False

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise anyio.ClosedResourceError
        # 2024-11-05: "Server messages are sent as SSE message events".
        if not self.sink.put(encode_event(message, event="message")):
            # The client left, or fell too far behind: 2024-11-05 has no resumption, so
            # the session ends now (its POSTs get 404) rather than take messages whose
            # answers cannot be delivered.
            self.shut()
            raise anyio.BrokenResourceError

    async def receive(self) -> bytes:
        try:
            return await self._in_receive.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def deliver(self, message: bytes, timeout: float) -> bool | None:
        """Queue a POSTed message: True once queued, False when the session has ended,
        None when the session did not take it within ``timeout`` seconds."""
        try:
            with anyio.move_on_after(timeout):
                await self._in_send.send(message)
                return True
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return None

    def shut(self) -> None:
        """Take no more messages (POSTs now get 404) and end the response after what is
        queued."""
        self.closed = True
        self._in_send.close()
        self.sink.finish()

    async def aclose(self) -> None:
        self.shut()
        self._in_receive.close()


class LegacySession:
    """One client's session: the GET response it streams to and the MCP session."""

    __slots__ = ("channel", "id", "run_scope", "server_session")

    def __init__(self, server: LowLevelServer, session_id: str, sink: Sink) -> None:
        self.id = session_id
        self.channel = _Channel(sink)
        self.server_session = ServerSession(server, self.channel)
        self.run_scope = anyio.CancelScope()

    def close(self, *, parting: bool = False) -> None:
        """End the session from the server's side (its stream ends normally).
        ``parting`` (a shutdown): the requests still running are answered first, on the
        stream, with -32603 "the server is shutting down" (:data:`SHUTDOWN_ERROR`), so
        that the client knows which calls were cut, and that by the server."""
        channel = self.channel
        if parting and not channel.closed:
            endpoint = self.server_session.endpoint
            for answer in endpoint.part_channel(*SHUTDOWN_ERROR):
                channel.sink.put(encode_event(answer, event="message"))
        channel.shut()
        self.run_scope.cancel()
