"""What :func:`~mcpkit.transports.serve_http` needs around uvicorn itself: the running
server's handle, limits read from the app, the open-file limit, whether the app's startup
failed, a bound on uvicorn's own warning about each malformed request, and the transport
wrapper that writes a response's headers and body together."""

from __future__ import annotations

import asyncio
import logging
import os
import struct
from typing import Any, Final

from ..aio._lograte import PeerLogLimiter

_OUTQ: int | None
try:  # (POSIX only)
    import fcntl
    import termios
except ImportError:  # pragma: no cover  (Windows has neither module; CI runs on Linux)
    _OUTQ = None
else:
    _OUTQ = getattr(termios, "TIOCOUTQ", None)

__all__ = [
    "Coalescing",
    "HttpServer",
    "app_limit",
    "bound_invalid_request_logs",
    "check_certificate",
    "raise_open_files",
    "startup_failed",
    "unsent_bytes",
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


def startup_failed(server: Any) -> bool:
    """Whether uvicorn gave up because the app's lifespan startup failed."""
    return bool(getattr(getattr(server, "lifespan", None), "should_exit", False))


#: Largest body sent in one write with its response's headers (a larger one is written
#: after them: the copy would cost more than the system call it saves).
_COALESCED_BODY: Final = 64 * 1024


class Coalescing:
    """A connection's transport that sends a response's headers and its body in one
    write (one ``send`` system call instead of two) when the body follows at once.

    uvicorn writes the status line and headers when the app sends
    ``http.response.start``, and the body when it sends ``http.response.body``; for a
    response with a ``Content-Length`` (every JSON answer) the headers are held until the
    first body write, which carries them. Anything else (chunked and streamed responses,
    WebSocket frames, ``100 Continue``) is written at once. Everything else is the
    transport's own.
    """

    __slots__ = ("_held", "_held_for", "_protocol", "_transport", "upgraded")

    def __init__(self, transport: asyncio.Transport, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: bytes | None = None
        self._held_for: object = None  # the request cycle whose headers were held
        #: The connection was handed to another protocol (a WebSocket upgrade).
        self.upgraded = False

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= _COALESCED_BODY:
                # One write: not writelines, which in CPython 3.12 and 3.13.0 never
                # pauses the protocol past the high-water mark (so no backpressure and
                # no write deadline for a client that reads nothing); copying a small
                # body costs less than the system call saved.
                self._transport.write(held + data)
            else:
                self._transport.write(held)
                self._transport.write(data)
            return
        cycle = getattr(self._protocol, "cycle", None)
        if (
            cycle is not None
            and cycle is not self._held_for
            and getattr(cycle, "response_started", False)
            and not getattr(cycle, "response_complete", True)
            and getattr(cycle, "chunked_encoding", None) is False
            and getattr(cycle, "expected_content_length", 0) > 0
        ):
            # The headers of a response whose body comes next (the first write of the
            # cycle once its response started): hold them for it.
            self._held_for = cycle
            self._held = bytes(data)
            return
        self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.flush()  # an upgrade (WebSocket): the new protocol writes at once
        upgraded = getattr(self._protocol, "on_upgrade", None)
        if upgraded is not None:
            upgraded()
        self._protocol = protocol
        self.upgraded = True
        self._transport.set_protocol(protocol)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def unsent_bytes(transport: Any) -> int:
    """Bytes written to ``transport`` that its peer has not taken yet: those in its
    buffer, and those in the kernel's send queue where the platform tells
    (``TIOCOUTQ``, alias ``SIOCOUTQ``, on Linux: sent but not yet acknowledged)."""
    pending: int = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    if _OUTQ is not None and sock is not None:
        try:
            pending += struct.unpack("i", fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0"))[0]
        except OSError:  # not supported for this socket here: the buffer alone
            pass
    return pending


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
