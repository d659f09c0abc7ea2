"""Events a :class:`Connection` produces from received messages (named in the past tense).

Params and results stay raw JSON (``msgspec.Raw``) until the layer that knows their type
decodes them.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import Raw

from ..types import ErrorObject, ProgressNotificationParams, ProgressToken, RequestId

__all__ = [
    "BatchReceived",
    "CancelReceived",
    "ErrorReceived",
    "Event",
    "MessageRejected",
    "NotificationReceived",
    "ProgressReceived",
    "RequestReceived",
    "ResponseInvalid",
    "ResponseReceived",
]


class RequestReceived(msgspec.Struct, frozen=True, gc=False):
    """The peer sent a request; it is now in flight until answered or cancelled.

    ``params`` is the raw JSON object (``None`` if absent); ``progress_token`` is set when
    the request asked for progress (``params._meta.progressToken``).
    """

    request_id: RequestId
    method: str
    params: Raw | None
    progress_token: ProgressToken | None = None


class NotificationReceived(msgspec.Struct, frozen=True, gc=False):
    """The peer sent a notification the connection does not handle itself."""

    method: str
    params: Raw | None


class ResponseReceived(msgspec.Struct, frozen=True, gc=False):
    """A success response to one of our requests."""

    request_id: RequestId
    result: Raw


class ErrorReceived(msgspec.Struct, frozen=True, gc=False):
    """An error response to one of our requests."""

    request_id: RequestId
    error: ErrorObject


class ResponseInvalid(msgspec.Struct, frozen=True, gc=False):
    """The answer to one of our requests broke the protocol; the call must fail."""

    request_id: RequestId
    reason: str


class CancelReceived(msgspec.Struct, frozen=True, gc=False):
    """The peer cancelled a request it sent us; no response will be sent for it."""

    request_id: RequestId
    reason: str | None


class ProgressReceived(msgspec.Struct, frozen=True, gc=False):
    """Progress for one of our requests still awaiting its response."""

    request_id: RequestId
    params: ProgressNotificationParams


class MessageRejected(msgspec.Struct, frozen=True, gc=False):
    """A message that could not be processed.

    Attributes:
        reply: an error response to send back, or ``None`` (notifications and responses are
            never answered).
        reason: what was wrong, for the log.
        level: how loudly to log: ``"warning"`` for a peer's mistake, ``"debug"`` for the
            expected (a late response after a cancellation, a cancel racing completion).
    """

    reply: bytes | None
    reason: str
    level: Literal["warning", "debug"] = "warning"


class BatchReceived(msgspec.Struct, frozen=True, gc=False):
    """A JSON-RPC batch (2025-03-26): one event per element, handled like single messages.

    The answers to the batch's requests are collected by the connection and come back, as
    one array, from the call that answers the last of them; ``reply`` is that array when
    nothing was left to answer (only errors and notifications), else ``None``.
    """

    events: list[Event]
    reply: bytes | None


Event = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | ResponseInvalid
    | CancelReceived
    | ProgressReceived
    | MessageRejected
    | BatchReceived
)
