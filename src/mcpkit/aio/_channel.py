"""The message channel: the one interface between transports and the async core.

A channel moves whole messages (one JSON-RPC message per item), never partial bytes:
framing is the transport's business. ``receive`` raises :class:`anyio.EndOfStream` when the
peer closed its side; ``send`` raises :class:`anyio.BrokenResourceError` when the peer is
gone and :class:`anyio.ClosedResourceError` after :meth:`aclose`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..protocol import FrameTooLarge
from ..types import RequestId

__all__ = ["DeliveryFailed", "MemoryChannel", "MessageChannel", "memory_channel_pair"]


@dataclass(frozen=True, slots=True)
class DeliveryFailed:
    """Received instead of a message when the transport knows that one of our requests
    will never be answered (for example its HTTP response stream broke and could not be
    resumed): the pending call fails with ``error`` at once instead of waiting out its
    timeout."""

    request_id: RequestId
    error: Exception


@runtime_checkable
class MessageChannel(Protocol):
    """A bidirectional stream of framed messages.

    Example - a channel that echoes every message back::

        class Echo:
            def __init__(self) -> None:
                self.send_stream, self.receive_stream = anyio.create_memory_object_stream[bytes](1)
            async def send(self, message: bytes) -> None:
                await self.send_stream.send(message)
            async def receive(self) -> bytes:
                return await self.receive_stream.receive()
            async def aclose(self) -> None:
                await self.send_stream.aclose()
    """

    async def send(self, message: bytes) -> None:
        """Send one message.

        Raises:
            anyio.BrokenResourceError: the peer is gone.
            anyio.ClosedResourceError: this channel was closed.
            mcpkit.exceptions.MessageNotDelivered: this one message could not be delivered
                (the channel stays usable).
        """

    async def receive(self) -> bytes | FrameTooLarge | DeliveryFailed:
        """Receive one message, or a marker: for a message the framing discarded as too
        large, or for one of our requests that the transport could not deliver.

        Raises:
            anyio.EndOfStream: the peer closed its side; nothing more will arrive.
        """

    async def aclose(self) -> None:
        """Close the channel; the peer sees end of stream."""


class MemoryChannel:
    """One end of an in-process channel pair (see :func:`memory_channel_pair`)."""

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._send = send_stream
        self._receive = receive_stream

    async def send(self, message: bytes) -> None:
        """Send one message to the other end."""
        await self._send.send(message)

    async def receive(self) -> bytes:
        """Receive one message from the other end.

        Raises:
            anyio.EndOfStream: the other end was closed.
        """
        try:
            return await self._receive.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def aclose(self) -> None:
        """Close both directions of this end."""
        await self._send.aclose()
        await self._receive.aclose()


def memory_channel_pair(max_buffer: float = math.inf) -> tuple[MemoryChannel, MemoryChannel]:
    """Create two connected in-process channels.

    Messages are passed by reference without copying. The buffer is unbounded by default
    because both ends are in the same process and each side's receive loop always drains
    its queue; pass ``max_buffer`` for backpressure.
    """
    a_send, b_receive = anyio.create_memory_object_stream[bytes](max_buffer)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](max_buffer)
    return MemoryChannel(a_send, a_receive), MemoryChannel(b_send, b_receive)
