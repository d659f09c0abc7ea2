"""The context passed explicitly to every server handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from ..aio import InboundRequest
from ..exceptions import LocalProtocolError
from ..types import (
    V2025_03_26,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
    Meta,
    ProgressToken,
    RequestId,
)
from ._asking import Asking, Elicitation
from ._inputs import InputRound

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer
    from ._modern import ModernRequest
    from ._session import ServerSession

__all__ = ["Elicitation", "RequestContext"]


class RequestContext(Asking):
    """What a handler knows about the request it serves, and what it may send while serving.

    Passed explicitly as the first argument of every handler (no context variables).

    Attributes:
        request_id: the JSON-RPC id of the request.
        method: the method name.
        meta: the request's ``_meta`` object (empty if absent).
        session: the connection the request arrived on.
        modern: for a 2026-07-28 request, what it declared in ``_meta`` (its version,
            the client's capabilities and identity, its log level); ``None`` in the
            handshake era, where the session holds these.
    """

    __slots__ = ("_inbound", "_inputs", "meta", "method", "modern", "request_id", "session")

    def __init__(
        self,
        inbound: InboundRequest,
        session: ServerSession,
        meta: Meta | None,
        modern: ModernRequest | None = None,
        inputs: InputRound | None = None,
    ) -> None:
        self._inbound = inbound
        self._inputs = inputs
        self.request_id: RequestId = inbound.id
        self.method = inbound.method
        self.meta: Meta = meta or {}
        self.session = session
        self.modern = modern

    @property
    def progress_token(self) -> ProgressToken | None:
        """The token the client gave for progress, or ``None`` if it asked for none."""
        return self._inbound.progress_token

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of this request (negotiated, or declared by the request)."""
        if self.modern is not None:
            return self.modern.protocol_version
        return self.session.protocol_version

    @property
    def client_info(self) -> Implementation | None:
        """The client's self-reported name and version (never a basis for trust)."""
        if self.modern is not None:
            return self.modern.client_info
        return self.session.client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client declared it supports (for this request, in 2026-07-28)."""
        if self.modern is not None:
            return self.modern.client_capabilities
        return self.session.client_capabilities

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Report progress to the client, if it asked for progress on this request.

        ``progress`` must increase with every call; ``total`` may be omitted when unknown.
        Returns whether a notification was sent (none is sent after the response, after a
        cancellation, or when the client gave no progress token).

        Raises:
            LocalProtocolError: ``progress`` did not increase or is not a finite number.
        """
        if message is not None and self.modern is None:
            version = self.session.protocol_version
            if version is not None and version < V2025_03_26:
                message = None  # 2025-03-26 added it (a 2024-11-05 client has no such member)
        return await self._inbound.report_progress(progress, total, message)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> bool:
        """Send a log message to the client (``notifications/message``), if ``level`` is at
        or above the level the client asked for. Returns whether it was sent.

        In 2026-07-28 the request itself opts in (``_meta`` ``logLevel``); without it no
        log message is sent for the request.

        Raises:
            LocalProtocolError: ``level`` is not a logging level, or ``data`` is not JSON.
        """
        if self.modern is not None:
            sent = await self.session.send_log(
                level, data, logger=logger, threshold=self.modern.log_level
            )
            if sent:
                self._deprecated("logging")
            return sent
        return await self.session.send_log(level, data, logger=logger)

    async def debug(self, data: Any, *, logger: str | None = None) -> bool:
        """:meth:`log` at level ``debug``.

        Raises:
            LocalProtocolError: ``data`` is not JSON.
        """
        return await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> bool:
        """:meth:`log` at level ``info``.

        Raises:
            LocalProtocolError: ``data`` is not JSON.
        """
        return await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> bool:
        """:meth:`log` at level ``warning``.

        Raises:
            LocalProtocolError: ``data`` is not JSON.
        """
        return await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> bool:
        """:meth:`log` at level ``error``.

        Raises:
            LocalProtocolError: ``data`` is not JSON.
        """
        return await self.log("error", data, logger=logger)

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (``LowLevelServer(lifespan=...)``): the
        database pool or HTTP client every request shares; ``None`` without a lifespan."""
        return self.session.server.lifespan.state

    @property
    def server(self) -> LowLevelServer:
        """The server handling this request."""
        return self.session.server

    async def notify(self, method: str, params: Any = UNSET) -> None:
        """Send a notification to the client.

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
        """
        if not method:
            raise LocalProtocolError("method must not be empty")
        await self.session.notify(method, params)

    def close_sse_stream(self, retry_ms: int | None = None) -> bool:
        """Streamable HTTP: close the connection carrying this request's SSE stream without
        ending the stream (SSE polling, 2025-11-25 SEP-1699). The handler keeps running;
        the client reconnects after ``retry_ms`` milliseconds with ``Last-Event-ID`` and
        receives what it missed, the response included. Lets a server shed long-held
        connections. Returns ``False`` where there is no such stream (other transports, a
        JSON response, no event store to resume from, or a client older than 2025-11-25,
        whose streams carry no event id before the response).
        """
        route = self._inbound.route
        return route is not None and route.close_connection(retry_ms)
