"""Token buckets: a burst, then a steady rate. The spec asks senders to rate limit what a
handler can emit in a loop: progress (basic/utilities/progress.mdx) and log messages
(server/utilities/logging.mdx, "Security": "Servers SHOULD rate limit log messages")."""

from __future__ import annotations

import time
from typing import Final

__all__ = ["BURST", "TokenBucket"]

#: What a bucket lets through at once before its rate applies.
BURST: Final = 100


class TokenBucket:
    """``burst`` messages at once, then ``rate`` per second; what does not fit is counted in
    ``dropped`` (for the sender to report), never queued."""

    __slots__ = ("_burst", "_counted", "_credit", "dropped", "rate")

    def __init__(self, rate: float, burst: float = BURST) -> None:
        self.rate = rate
        self._burst = float(burst)
        self._credit = self._burst
        self._counted = time.monotonic()
        self.dropped = 0

    def take(self, *, force: bool = False) -> bool:
        """Whether one message may go now (``force``: it goes anyway, and counts)."""
        now = time.monotonic()
        credit = min(self._burst, self._credit + (now - self._counted) * self.rate)
        self._counted = now
        if credit < 1 and not force:
            self._credit = credit
            self.dropped += 1
            return False
        self._credit = credit - 1
        return True
