"""What :func:`~mcpkit.transports.serve_http` needs around uvicorn itself: the running
server's handle, limits read from the app, the open-file limit, whether the app's startup
failed, and a bound on uvicorn's own warning about each malformed request."""

from __future__ import annotations

import logging
from typing import Any, Final

from ..aio._lograte import PeerLogLimiter

__all__ = [
    "HttpServer",
    "app_limit",
    "bound_invalid_request_logs",
    "raise_open_files",
    "startup_failed",
]

logger = logging.getLogger("mcpkit.transports.http")

#: uvicorn's WARNING for each request it cannot parse (a client can send them in a loop:
#: 5,600 lines/s from one connection).
_INVALID: Final = "Invalid HTTP request received."


class _InvalidRequestFilter(logging.Filter):
    """Lets uvicorn's "Invalid HTTP request received." through within a token bucket; the
    next one let through says how many were held back."""

    def __init__(self) -> None:
        super().__init__()
        self.limiter = PeerLogLimiter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != _INVALID:
            return True
        held = self.limiter.admit()
        if held is None:
            return False
        if held:
            record.msg = f"{_INVALID} ({held} similar lines suppressed before this one)"
        return True


def bound_invalid_request_logs() -> None:
    """Install the filter on uvicorn's error logger (once per process)."""
    error_log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _InvalidRequestFilter) for f in error_log.filters):
        error_log.addFilter(_InvalidRequestFilter())


def app_limit(app: object, name: str) -> int | None:
    value = getattr(app, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def raise_open_files(wanted: int) -> None:
    """Raise the soft open-file limit towards ``wanted`` (within the hard limit): each
    connection takes a file descriptor, and a common soft limit is 1,024."""
    try:
        import resource
    except ImportError:  # not on this platform
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            logger.debug("could not raise the open-file limit to %d", target)


class HttpServer:
    """A running uvicorn server (see :func:`serve_http`).

    Attributes:
        host: the address it listens on.
        port: the port it listens on (the real one when 0 was asked for).
        limit_concurrency: the most connections and tasks it serves at once.
    """

    def __init__(
        self, server: Any, host: str, port: int, limit_concurrency: int | None = None
    ) -> None:
        self._server = server
        self.host = host
        self.port = port
        self.limit_concurrency = limit_concurrency

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def stop(self) -> None:
        """Ask the server to shut down (it stops accepting, then finishes)."""
        self._server.should_exit = True


def startup_failed(server: Any) -> bool:
    """Whether uvicorn gave up because the app's lifespan startup failed."""
    return bool(getattr(getattr(server, "lifespan", None), "should_exit", False))
