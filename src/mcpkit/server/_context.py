"""The context passed explicitly to every server handler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from ..aio import InboundRequest
from ..exceptions import LocalProtocolError
from ..types import ClientCapabilities, Implementation, LoggingLevel, Meta, ProgressToken, RequestId

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = ["RequestContext"]


class RequestContext:
    """What a handler knows about the request it serves, and what it may send while serving.

    Passed explicitly as the first argument of every handler (no context variables).

    Attributes:
        request_id: the JSON-RPC id of the request.
        method: the method name.
        meta: the request's ``_meta`` object (empty if absent).
        session: the connection the request arrived on.
    """

    __slots__ = ("_inbound", "meta", "method", "request_id", "session")

    def __init__(self, inbound: InboundRequest, session: ServerSession, meta: Meta | None) -> None:
        self._inbound = inbound
        self.request_id: RequestId = inbound.id
        self.method = inbound.method
        self.meta: Meta = meta or {}
        self.session = session

    @property
    def progress_token(self) -> ProgressToken | None:
        """The token the client gave for progress, or ``None`` if it asked for none."""
        return self._inbound.progress_token

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version."""
        return self.session.protocol_version

    @property
    def client_info(self) -> Implementation | None:
        """The client's self-reported name and version (never a basis for trust)."""
        return self.session.client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client declared it supports."""
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
        return await self._inbound.report_progress(progress, total, message)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> bool:
        """Send a log message to the client (``notifications/message``), if ``level`` is at
        or above the level the client asked for. Returns whether it was sent.

        Raises:
            LocalProtocolError: ``level`` is not a logging level, or ``data`` is not JSON.
        """
        return await self.session.send_log(level, data, logger=logger)

    async def notify(self, method: str, params: Any = UNSET) -> None:
        """Send a notification to the client.

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
        """
        if not method:
            raise LocalProtocolError("method must not be empty")
        await self.session.notify(method, params)
