"""The objects exchanged between the endpoint and the code it calls: inbound requests,
handler signatures, and the waiter of an outbound request."""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec
from msgspec import Raw

from ..types import ProgressNotificationParams, ProgressToken, RequestId
from ._rate import TokenBucket

if TYPE_CHECKING:
    from ._endpoint import Endpoint
    from ._route import ReplyRoute

__all__ = [
    "PROCEED",
    "InboundRequest",
    "NotificationHandler",
    "ProgressCallback",
    "Refused",
    "RequestGate",
    "RequestHandler",
    "cancelled_by_someone",
]

logger = logging.getLogger("mcpkit.aio")

ProgressCallback = Callable[[ProgressNotificationParams], Awaitable[None] | None]


class InboundRequest(msgspec.Struct, eq=False):
    """A request from the peer, as given to the request handler."""

    # (A struct, not a dataclass: one is made per request, and a struct is made in less
    # than half the time; eq=False: identity, as for any object.)

    id: RequestId
    method: str
    params: Raw | None
    progress_token: ProgressToken | None
    endpoint: Endpoint
    #: Where the answer and related messages go (``None``: the connection's channel).
    route: ReplyRoute | None = None
    #: What the gate learned about the request, for the handler (e.g. its protocol era).
    state: Any = None
    #: Its answer was decided: a context that outlives the handler (a background task)
    #: sends no progress for it, even if the peer reuses its id for a new request.
    answered: bool = False
    #: The bound on its progress notifications (see ``Endpoint.progress_rate``), made
    #: with its first report.
    progress_bucket: TokenBucket | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Send a progress notification if the peer asked for progress, the request is
        still in flight, and the endpoint's ``progress_rate`` allows one now (one that
        reaches ``total`` always goes). Returns whether one was sent.

        Raises:
            LocalProtocolError: ``progress`` did not increase or is not finite.
        """
        if self.answered:
            return False
        bucket = self.progress_bucket
        if bucket is None and self.endpoint.progress_rate is not None:
            bucket = self.progress_bucket = TokenBucket(self.endpoint.progress_rate)
        if bucket is not None and not bucket.take(force=total is not None and progress >= total):
            return False  # dropped, not queued: a later report supersedes it
        data = self.endpoint.connection.send_progress(self.id, progress, total, message)
        if data is None:
            return False
        await self.endpoint.send_raw(data)
        return True


RequestHandler = Callable[[InboundRequest], Awaitable[Any]]
#: Decides synchronously, in the receive loop, before a handler task is started: returns
#: :data:`PROCEED` to run ``on_request``, returns a result to answer at once, or raises
#: :class:`RPCError`. Used for state that must follow message order (the handshake).
RequestGate = Callable[[InboundRequest], Any]
PROCEED: Final = object()
NotificationHandler = Callable[[str, Raw | None], Awaitable[None]]


@dataclass(slots=True, eq=False)
class _Waiter:
    """One of our requests waiting for its response."""

    changed: anyio.Event = field(default_factory=anyio.Event)
    result: Raw | None = None
    error: BaseException | None = None
    done: bool = False
    progress: deque[ProgressNotificationParams] = field(default_factory=deque)
    scope: anyio.CancelScope | None = None
    timeout: float = math.inf
    hard_deadline: float = math.inf

    def finish(self, result: Raw | None = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.done = result, error, True
        self.changed.set()


async def _call_progress(
    callback: ProgressCallback | None, params: ProgressNotificationParams
) -> None:
    if callback is None:
        return
    try:
        outcome = callback(params)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:
        logger.exception("progress callback failed")


def cancelled_by_someone() -> bool:
    """Whether the current task was asked to cancel (``Task.cancelling()``, Python 3.11+;
    on 3.10, which cannot tell, every cancellation counts as asked for)."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is None or cancelling() > 0


class Refused:
    """The answer to a request that gets no handler (for :meth:`~mcpkit.aio.Endpoint.dispatch` to
    deliver; ``None`` while the batch it belongs to is incomplete)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes | None) -> None:
        self.data = data
