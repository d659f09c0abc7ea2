"""What :func:`~mcpkit.transports.serve_http` needs around uvicorn itself: the running
server's handle, limits read from the app, the open-file limit, whether the app's startup
failed, the shutdown when serving is cancelled, and a bound on uvicorn's own warning about
each malformed request."""

from __future__ import annotations

import logging
import os
import socket
from typing import Any, Final

import anyio

from ..aio._lograte import PeerLogLimiter

__all__ = [
    "HttpServer",
    "app_limit",
    "bound_invalid_request_logs",
    "check_certificate",
    "raise_open_files",
    "shut_down_cancelled",
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
        tls: whether it serves TLS (its URL is then ``https``).
    """

    def __init__(
        self,
        server: Any,
        host: str,
        port: int,
        limit_concurrency: int | None = None,
        *,
        tls: bool = False,
    ) -> None:
        self._server = server
        self.host = host
        self.port = port
        self.limit_concurrency = limit_concurrency
        self.tls = tls

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    def stop(self) -> None:
        """Ask the server to shut down (it stops accepting, then finishes)."""
        self._server.should_exit = True


async def shut_down_cancelled(server: Any, sock: socket.socket, hook_timeout: float) -> None:
    """Shut ``server`` (a started ``uvicorn.Server`` whose ``serve`` was cancelled) down as
    a stop would: the shutdown hook (at most ``hook_timeout`` seconds), stop accepting,
    end the connections (their grace period), then the app's lifespan shutdown (10 s
    more at most); shielded from the cancellation. uvicorn leaves all of that undone when
    its ``serve`` is cancelled: the app's lifespan exited only when the event loop closed,
    logging "Exception in 'lifespan' protocol", and open connections were left to the
    loop's end."""
    bound = hook_timeout + (server.config.timeout_graceful_shutdown or 0) + 10
    with anyio.move_on_after(bound, shield=True) as scope:
        server.should_exit = True
        await server.shutdown(sockets=[sock])
    if scope.cancelled_caught:
        logger.warning("the server did not shut down within %g s of being cancelled", bound)


def startup_failed(server: Any) -> bool:
    """Whether uvicorn gave up because the app's lifespan startup failed."""
    return bool(getattr(getattr(server, "lifespan", None), "should_exit", False))


def check_certificate(
    certfile: str | os.PathLike[str] | None,
    keyfile: str | os.PathLike[str] | None,
    password: str | None,
) -> None:
    """Load a server certificate and key as uvicorn will, so that what cannot be loaded
    is refused with a clear error before anything is bound (uvicorn fails later, with
    ``ssl``'s bare "[SSL] PEM lib").

    Raises:
        LocalProtocolError: a key or password without a certificate, or a certificate or
            key that cannot be loaded.
    """
    import ssl

    from ..exceptions import LocalProtocolError

    if certfile is None:
        raise LocalProtocolError("ssl_keyfile and ssl_keyfile_password need ssl_certfile")
    for path in (certfile, keyfile):
        if path is not None and not os.path.isfile(path):
            raise LocalProtocolError(f"no such TLS certificate or key file: {os.fspath(path)!r}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certfile, keyfile, password)
    except (ssl.SSLError, OSError, ValueError) as exc:
        key = f" and key {os.fspath(keyfile)!r}" if keyfile is not None else ""
        raise LocalProtocolError(
            f"cannot load the TLS certificate {os.fspath(certfile)!r}{key}: {exc} (both "
            "must be PEM, the key must match the certificate, and an encrypted key needs "
            "its password)"
        ) from None
