"""The handshake era on the client (2024-11-05 ... 2025-11-25): ``initialize``, then
``notifications/initialized``; over Streamable HTTP a session the server ended is renewed
with a new ``initialize`` (``basic/transports.mdx`` "Session Management")."""

from __future__ import annotations

import logging
import math
from typing import Any, TypeVar

import anyio
from msgspec import UNSET

from ..aio import Endpoint, ProgressCallback
from ..exceptions import (
    ConnectionClosedError,
    RemoteProtocolError,
    RequestTimeoutError,
    SessionExpiredError,
)
from ..types import (
    V2025_03_26,
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
)
from ..types._echo import peer_text
from ..types._revisions import implementation_for
from ._callbacks import capabilities_for
from ._methods import Timeout

__all__ = ["Handshake"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit.client")


class Handshake:
    """The handshake-era lifecycle of :class:`~mcpkit.client.Client`."""

    capabilities: ClientCapabilities
    client_info: Implementation
    timeout: float | None
    _declared: ClientCapabilities
    _endpoint: Endpoint | None
    _init: InitializeResult | None
    _generation: int
    _renewing: anyio.Lock
    _requested_version: str
    _supported_versions: tuple[str, ...]

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T],
        *,
        timeout: Timeout = UNSET,
        max_timeout: Timeout = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> T:
        raise NotImplementedError

    async def _initialize(self) -> None:
        self._declared = capabilities_for(self._requested_version, self.capabilities)
        params = InitializeRequestParams(
            protocol_version=self._requested_version,
            capabilities=self._declared,
            client_info=implementation_for(self._requested_version, self.client_info),
        )
        result = await self.request("initialize", params, InitializeResult)
        if result.protocol_version not in self._supported_versions:
            raise RemoteProtocolError(
                f"the server chose protocol version {peer_text(result.protocol_version)}, "
                "which this client does not support "
                f"(supported: {', '.join(self._supported_versions)})"
            )
        self._init = result
        self._generation += 1
        assert self._endpoint is not None
        # A 2025-03-26 server may send JSON-RPC batches; accept them then, never otherwise.
        self._endpoint.connection.allow_batches = result.protocol_version == V2025_03_26
        # Bounded by the client's timeout like the initialize request (a transport's own
        # bound, e.g. 30 s for an HTTP POST, may be far longer than the caller asked for).
        try:
            with anyio.fail_after(math.inf if self.timeout is None else self.timeout):
                await self.notify("notifications/initialized")
        except TimeoutError:
            raise RequestTimeoutError(
                "notifications/initialized was not delivered in time"
            ) from None

    async def _renew_session(self, generation: int) -> None:
        """Start a new session after the server ended ``generation``'s (HTTP 404;
        ``basic/transports.mdx`` "Session Management": the client MUST start a new session
        with a new ``InitializeRequest`` without a session id). Concurrent callers that
        met the same expiry renew it once."""
        async with self._renewing:
            if self._generation == generation:
                logger.info("the server ended the session; starting a new one")
                await self._initialize()

    async def notify(self, method: str, params: Any = UNSET) -> None:
        """Send a notification.

        Raises:
            ConnectionClosedError: the connection ended.
            MessageNotDelivered: the transport could not deliver it.
        """
        if self._endpoint is None:
            raise ConnectionClosedError("the client is not connected")
        generation = self._generation
        try:
            await self._endpoint.notify(method, params)
        except SessionExpiredError:
            if method == "notifications/initialized":
                raise
            await self._renew_session(generation)
            await self._endpoint.notify(method, params)
