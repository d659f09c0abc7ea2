"""Bridge Python ``logging`` to MCP log messages (``server/utilities/logging.mdx``).

Records logged while a request is being handled go to that request's client as
``notifications/message`` (at or above the level the client asked for), wherever they are
logged from: the handler itself, a library it calls, or a sync tool's worker thread.
Records logged outside a request are left to the other handlers.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import TYPE_CHECKING, Final

import anyio
import anyio.from_thread
from msgspec import UNSET

from ..types import LoggingLevel

if TYPE_CHECKING:
    from ._context import RequestContext

__all__ = ["McpLogHandler", "current_request"]

#: The request being handled in this task (set by the session around each handler).
current_request: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "mcpkit_current_request", default=None
)

_LEVELS: Final[tuple[tuple[int, LoggingLevel], ...]] = (
    (logging.CRITICAL, "critical"),
    (logging.ERROR, "error"),
    (logging.WARNING, "warning"),
    (logging.INFO, "info"),
)


def mcp_level(levelno: int) -> LoggingLevel:
    """The MCP level of a Python level number (RFC 5424 names)."""
    for threshold, name in _LEVELS:
        if levelno >= threshold:
            return name
    return "debug"


class McpLogHandler(logging.Handler):
    """Send records logged during a request to that request's client."""

    def emit(self, record: logging.LogRecord) -> None:
        ctx = current_request.get()
        if ctx is None:
            return
        try:
            message = self.format(record)
            session = ctx.session
            level = mcp_level(record.levelno)
            # 2026-07-28: the request's own logLevel, none without it (the request opts
            # in, basic/utilities/logging.mdx); before, the session's level.
            threshold = UNSET if ctx.modern is None else ctx.modern.log_level
            if threading.get_ident() == session.loop_thread:
                session.log_soon(level, message, logger=record.name, threshold=threshold)
            else:  # a sync tool's worker, asyncio.to_thread: hand it to the event loop
                anyio.from_thread.run_sync(
                    lambda: session.log_soon(
                        level, message, logger=record.name, threshold=threshold
                    ),
                    token=session.loop_token,
                )
        except anyio.RunFinishedError:
            return  # the server stopped: there is no client to tell any more
        except Exception:
            self.handleError(record)
