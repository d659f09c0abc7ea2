"""The async layer: drives the sans-I/O core over message channels (anyio).

Layer 2 of mcpkit and the only layer that creates tasks or owns cancel scopes. Knows
nothing about HTTP or stdio; runs on asyncio and trio.
"""

from __future__ import annotations

from ._calls import (
    PROCEED,
    InboundRequest,
    NotificationHandler,
    ProgressCallback,
    RequestGate,
    RequestHandler,
)
from ._channel import MemoryChannel, MessageChannel, memory_channel_pair
from ._endpoint import Endpoint

__all__ = [
    "Endpoint",
    "InboundRequest",
    "MemoryChannel",
    "MessageChannel",
    "NotificationHandler",
    "PROCEED",
    "ProgressCallback",
    "RequestGate",
    "RequestHandler",
    "memory_channel_pair",
]
