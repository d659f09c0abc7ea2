"""The async layer: drives the sans-I/O core over message channels (anyio).

Layer 2 of mcpkit and the only layer that creates tasks or owns cancel scopes. Knows
nothing about HTTP or stdio; runs on asyncio and trio.
"""

from __future__ import annotations

from ._arity import check_arity
from ._bus import BusMessage, MemoryNotificationBus, NotificationBus, Subscription
from ._calls import (
    PROCEED,
    InboundRequest,
    NotificationHandler,
    ProgressCallback,
    RequestGate,
    RequestHandler,
)
from ._channel import DeliveryFailed, MemoryChannel, MessageChannel, memory_channel_pair
from ._endpoint import Endpoint
from ._eventstore import EventStore, MemoryEventStore, Replay
from ._exitstack import close_stack
from ._fdwait import FdReader
from ._flag import Flag
from ._groups import interrupted, single_errors
from ._hop import on_loop_thread, running_event_loop, runs_event_loop, soon_on_loop
from ._rate import BURST, TokenBucket
from ._route import ReplyRoute, current_route, detached_context
from ._workers import call_off_loop, run_in_worker

__all__ = [
    "interrupted",
    "single_errors",
    "call_off_loop",
    "check_arity",
    "on_loop_thread",
    "running_event_loop",
    "runs_event_loop",
    "soon_on_loop",
    "close_stack",
    "BusMessage",
    "MemoryNotificationBus",
    "NotificationBus",
    "Subscription",
    "DeliveryFailed",
    "Endpoint",
    "FdReader",
    "EventStore",
    "Flag",
    "MemoryEventStore",
    "Replay",
    "InboundRequest",
    "MemoryChannel",
    "MessageChannel",
    "NotificationHandler",
    "PROCEED",
    "BURST",
    "TokenBucket",
    "ProgressCallback",
    "RequestGate",
    "ReplyRoute",
    "RequestHandler",
    "current_route",
    "detached_context",
    "memory_channel_pair",
    "run_in_worker",
]
