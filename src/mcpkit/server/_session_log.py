"""Log messages to the client (``notifications/message``, server/utilities/logging.mdx), a
mixin of :class:`~mcpkit.server.ServerSession`: the client's threshold, and a rate limit
("Servers SHOULD rate limit log messages", "Security"): a burst, then
``LowLevelServer.log_rate`` per second per session. What is past it is dropped, and the
next message that goes is preceded by a warning saying how many were."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, get_args

from msgspec import UNSET, UnsetType

from ..aio import TokenBucket
from ..exceptions import LocalProtocolError
from ..types import LoggingLevel, LoggingMessageNotificationParams

if TYPE_CHECKING:
    from ..aio import Endpoint
    from ._lowlevel import LowLevelServer

__all__ = ["SessionLogging"]

_LEVELS: Final[tuple[str, ...]] = get_args(LoggingLevel)
_SEVERITY: Final = {name: rank for rank, name in enumerate(_LEVELS)}
_MESSAGE: Final = "notifications/message"


class SessionLogging:
    """The log messages of :class:`~mcpkit.server.ServerSession` (a mixin)."""

    if TYPE_CHECKING:
        server: LowLevelServer
        endpoint: Endpoint
        log_level: LoggingLevel

    _log_bucket: TokenBucket | None = None  # made with the first message that passes

    def log_soon(
        self,
        level: LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        threshold: LoggingLevel | UnsetType | None = UNSET,
    ) -> None:
        """Send a log message in the background if ``level`` passes the client's threshold
        (from synchronous code on the event loop, e.g. a logging handler); ``threshold``
        as for :meth:`send_log`."""
        params = self._log_params(level, data, logger, threshold)
        if params is not None:
            for message in params:
                self.endpoint.notify_soon(_MESSAGE, message)

    async def send_log(
        self,
        level: LoggingLevel,
        data: Any,
        *,
        logger: str | None = None,
        threshold: LoggingLevel | UnsetType | None = UNSET,
    ) -> bool:
        """Send ``notifications/message`` if ``level`` passes the client's threshold
        (``threshold`` overrides the session's: a 2026-07-28 request's own ``logLevel``,
        ``None`` when it asked for no log messages) and the rate limit lets it through.
        Returns whether it was sent.

        Raises:
            LocalProtocolError: ``level`` is not a logging level.
        """
        if level not in _SEVERITY:
            raise LocalProtocolError(f"unknown logging level {level!r}; use one of {_LEVELS}")
        params = self._log_params(level, data, logger, threshold)
        if params is None:
            return False
        for message in params:
            await self.endpoint.notify(_MESSAGE, message)
        return True

    def _log_params(
        self,
        level: LoggingLevel,
        data: Any,
        logger: str | None,
        threshold: LoggingLevel | UnsetType | None,
    ) -> list[LoggingMessageNotificationParams] | None:
        """What to send for one log message: ``None`` when ``level`` does not pass the
        threshold or the rate limit drops it; the message, after a notice of those
        dropped since the last one that went."""
        minimum = self.log_level if isinstance(threshold, UnsetType) else threshold
        if minimum is None or _SEVERITY[level] < _SEVERITY[minimum]:
            return None
        message = LoggingMessageNotificationParams(
            level=level, data=data, logger=UNSET if logger is None else logger
        )
        rate = self.server.log_rate
        if rate is None:
            return [message]
        bucket = self._log_bucket
        if bucket is None:
            bucket = self._log_bucket = TokenBucket(rate)
        if not bucket.take():
            return None
        if not bucket.dropped:
            return [message]
        dropped, bucket.dropped = bucket.dropped, 0
        notice = LoggingMessageNotificationParams(
            level="warning",
            data=f"{dropped} log message(s) dropped: more than {rate:g} per second",
            logger="mcpkit",
        )
        return [notice, message]
