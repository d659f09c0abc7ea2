"""Bounded logging of what a peer gets wrong.

Every message a peer gets wrong is answered (or, for a notification or a response, dropped)
and logged. Logged one line per message, a peer that sends garbage in a loop writes the
operator's log as fast as it can send: over stdio, 200 MB of warnings in 20 s. A
:class:`PeerLogLimiter` lets a burst through, then about one line per second, and the next
line it lets through says how many it held back (and, if none comes, the connection's end
does), so nothing is lost from the count.
"""

from __future__ import annotations

import logging
from typing import Final

from ..protocol import MessageRejected
from ._rate import TokenBucket

__all__ = ["PeerLogLimiter"]

#: Lines let through at once, and the rate (lines per second) the allowance refills at.
_BURST: Final = 20
_PER_SECOND: Final = 1.0


class PeerLogLimiter:
    """A token bucket for log lines about a peer's mistakes (one connection's, or shared
    by a server's connections)."""

    __slots__ = ("_allowance", "_shared", "_suppressed")

    def __init__(
        self, burst: int = _BURST, per_second: float = _PER_SECOND, *, shared: bool = False
    ) -> None:
        #: Shared by many connections (a server's): an end gives the count only when the
        #: allowance has room (one line each would be a flood of its own).
        self._shared = shared
        self._allowance = TokenBucket(per_second, burst)
        self._suppressed = 0

    def log(self, logger: logging.Logger, level: int, message: str, *args: object) -> None:
        """Log ``message % args`` at ``level`` if the allowance has room, else count it.
        A line let through after some were held back ends with how many."""
        if not logger.isEnabledFor(level):
            return  # nothing would be written: nothing to limit
        held = self.admit()
        if held is None:
            return
        if held:
            message += " (%d similar lines suppressed before this one)"
            args = (*args, held)
        logger.log(level, message, *args)

    def admit(self) -> int | None:
        """Take one line's allowance: ``None`` if there is none (the line is counted as
        held back), else how many were held back since the last line let through."""
        if not self._allowance.take():
            self._suppressed += 1
            return None
        held, self._suppressed = self._suppressed, 0
        return held

    def rejected(self, logger: logging.Logger, event: MessageRejected) -> None:
        """Log why a message was refused: an expected race (a late answer, a cancel for a
        finished request) at debug level, every one; anything else as a bounded warning."""
        if event.level == "debug":
            logger.debug("%s", event.reason)
        else:
            self.log(logger, logging.WARNING, "%s", event.reason)

    def flush(self, logger: logging.Logger, level: int = logging.WARNING) -> None:
        """Say how many lines were held back since the last one let through (called when
        the connection ends, so a flood's tail is counted too).

        A shared limiter says it only when its allowance has room (taking one line's
        worth), so many connections ending at once write no flood of their own: the count
        then waits for the next line let through, or the next end with room.
        """
        if not self._suppressed:
            return
        if self._shared and not self._allowance.take():
            return
        logger.log(level, "%d similar lines about the peer were suppressed", self._suppressed)
        self._suppressed = 0
