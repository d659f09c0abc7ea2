"""Waiting, from a test's thread, for a line that a server in another thread logs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["LogSeen", "watching"]


class LogSeen(logging.Handler):
    """Sets ``seen`` once a record whose message starts with ``prefix`` is logged."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.prefix):
            self.seen.set()


@contextmanager
def watching(logger: str, prefix: str) -> Iterator[LogSeen]:
    """Watch ``logger`` (at INFO or above) for the duration of the block."""
    handler = LogSeen(prefix)
    log = logging.getLogger(logger)
    level = log.level
    log.setLevel(min(level, logging.INFO) if level else logging.INFO)
    log.addHandler(handler)
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
