"""Utility notifications: progress, cancellation and log messages."""

from __future__ import annotations

from typing import Any

from ._base import UNSET, UnsetType
from ._common import LoggingLevel, NotificationParams
from ._jsonrpc import ProgressToken, RequestId

__all__ = [
    "CancelledNotificationParams",
    "LoggingMessageNotificationParams",
    "ProgressNotificationParams",
]


class ProgressNotificationParams(NotificationParams, kw_only=True):
    """``notifications/progress``: ``progress`` increases with every notification."""

    progress_token: ProgressToken
    progress: float
    total: float | UnsetType = UNSET
    message: str | UnsetType = UNSET


class CancelledNotificationParams(NotificationParams, kw_only=True):
    """``notifications/cancelled``: the sender no longer wants the request's result."""

    request_id: RequestId | UnsetType = UNSET
    reason: str | UnsetType = UNSET


class LoggingMessageNotificationParams(NotificationParams, kw_only=True):
    """``notifications/message``: a log record from the server."""

    level: LoggingLevel
    data: Any
    logger: str | UnsetType = UNSET
