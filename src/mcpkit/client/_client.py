"""The MCP client: connect over any transport, initialize, and call the server."""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import msgspec
from msgspec import UNSET, Raw

from .._version import __version__
from ..aio import Endpoint, InboundRequest, MessageChannel, ProgressCallback
from ..exceptions import ConnectionClosedError, LocalProtocolError, RemoteProtocolError, RPCError
from ..protocol import DEFAULT_LIMITS, Limits
from ..types import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    V2025_03_26,
    CallToolRequestParams,
    CallToolResult,
    ClientCapabilities,
    EmptyResult,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    ListToolsRequestParams,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ServerCapabilities,
    SetLevelRequestParams,
    Tool,
)

__all__ = ["Client", "ClientTransport", "LogCallback"]

logger = logging.getLogger("mcpkit.client")
server_logger = logging.getLogger("mcpkit.client.server_log")

T = TypeVar("T")
LogCallback = Callable[[LoggingMessageNotificationParams], Awaitable[None] | None]

_PY_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
_LOG_DECODER: Final = msgspec.json.Decoder(LoggingMessageNotificationParams)
_MAX_PAGES: Final = 10_000


@runtime_checkable
class ClientTransport(Protocol):
    """Something that can open a message channel to a server, e.g. :class:`StdioTransport`."""

    def connect(self) -> contextlib.AbstractAsyncContextManager[MessageChannel]:
        """Return a context manager that opens the channel on entry and closes it on exit."""
        ...


class Client:
    """An MCP client session. Use ``async with`` (enter and exit in the same task)::

        async with Client(StdioTransport("python", ["server.py"])) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"text": "hi"})

    Args:
        transport: a :class:`ClientTransport`, or an already open :class:`MessageChannel`
            (which the client closes on exit).
        client_info: the name and version sent to the server.
        capabilities: what this client supports.
        protocol_version: the version to ask for in ``initialize``.
        supported_versions: versions this client accepts in the server's answer.
        timeout: default seconds to wait for a response (restarted by progress).
        max_timeout: default absolute bound on a request, however much progress arrives.
        on_log: receives the server's log messages (default: Python logging on
            ``mcpkit.client.server_log``).
        limits: bounds on incoming messages.
    """

    def __init__(
        self,
        transport: ClientTransport | MessageChannel,
        *,
        client_info: Implementation | None = None,
        capabilities: ClientCapabilities | None = None,
        protocol_version: str = LATEST_HANDSHAKE_VERSION,
        supported_versions: Sequence[str] = HANDSHAKE_VERSIONS,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        on_log: LogCallback | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        if protocol_version not in supported_versions:
            raise LocalProtocolError(f"protocol_version {protocol_version!r} is not supported")
        self._transport = transport
        self.client_info = client_info or Implementation(name="mcpkit", version=__version__)
        self.capabilities = capabilities or ClientCapabilities()
        self._requested_version = protocol_version
        self._supported_versions = tuple(supported_versions)
        self.timeout = timeout
        self.max_timeout = max_timeout
        self._on_log = on_log
        self._limits = limits
        self._stack: contextlib.AsyncExitStack | None = None
        self._endpoint: Endpoint | None = None
        self._init: InitializeResult | None = None

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if isinstance(self._transport, ClientTransport):
                channel = await stack.enter_async_context(self._transport.connect())
            else:
                channel = self._transport
            self._endpoint = Endpoint(
                channel,
                on_request=self._on_request,
                on_notification=self._on_notification,
                limits=self._limits,
            )
            await stack.enter_async_context(self._endpoint)
            await self._initialize()
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection (for stdio: the server is shut down and reaped)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def _initialize(self) -> None:
        params = InitializeRequestParams(
            protocol_version=self._requested_version,
            capabilities=self.capabilities,
            client_info=self.client_info,
        )
        result = await self.request("initialize", params, InitializeResult)
        if result.protocol_version not in self._supported_versions:
            raise RemoteProtocolError(
                f"the server chose protocol version {result.protocol_version!r}, which this "
                f"client does not support (supported: {', '.join(self._supported_versions)})"
            )
        self._init = result
        assert self._endpoint is not None
        # A 2025-03-26 server may send JSON-RPC batches; accept them then, never otherwise.
        self._endpoint.connection.allow_batches = result.protocol_version == V2025_03_26
        await self.notify("notifications/initialized")

    def _require_init(self) -> InitializeResult:
        if self._init is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        return self._init

    @property
    def protocol_version(self) -> str:
        """The protocol version the server chose."""
        return self._require_init().protocol_version

    @property
    def server_info(self) -> Implementation:
        """The server's self-reported name and version."""
        return self._require_init().server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server offers."""
        return self._require_init().capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if any."""
        value = self._require_init().instructions
        return None if value is UNSET else value

    # -- generic requests ---------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T],
        *,
        timeout: float | msgspec.UnsetType | None = UNSET,
        max_timeout: float | msgspec.UnsetType | None = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> T:
        """Send any request and decode its result into ``result_type``.

        Raises:
            RPCError: the server answered with an error.
            RequestTimeoutError: no answer in time (the request was cancelled).
            RemoteProtocolError: the answer did not match ``result_type``.
            ConnectionClosedError: the connection ended.
        """
        if self._endpoint is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        raw = await self._endpoint.request(
            method,
            params,
            timeout=self.timeout if isinstance(timeout, msgspec.UnsetType) else timeout,
            max_timeout=self.max_timeout
            if isinstance(max_timeout, msgspec.UnsetType)
            else max_timeout,
            on_progress=on_progress,
        )
        try:
            return msgspec.json.decode(raw, type=result_type)
        except msgspec.ValidationError as exc:
            raise RemoteProtocolError(f"invalid result for {method}: {exc}") from None

    async def notify(self, method: str, params: Any = UNSET) -> None:
        """Send a notification.

        Raises:
            ConnectionClosedError: the connection ended.
        """
        if self._endpoint is None:
            raise ConnectionClosedError("the client is not connected")
        await self._endpoint.notify(method, params)

    # -- MCP methods --------------------------------------------------------------------

    async def ping(self, *, timeout: float | msgspec.UnsetType | None = UNSET) -> None:
        """Check that the server answers (``ping``).

        Raises:
            RequestTimeoutError: no answer in time.
        """
        await self.request("ping", UNSET, EmptyResult, timeout=timeout)

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask the server to send log messages at ``level`` and above."""
        await self.request("logging/setLevel", SetLevelRequestParams(level=level), EmptyResult)

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of the server's tools; pass ``next_cursor`` back for the next page."""
        params = ListToolsRequestParams(cursor=UNSET if cursor is None else cursor)
        return await self.request("tools/list", params, ListToolsResult)

    async def iter_tools(self) -> AsyncIterator[Tool]:
        """Every tool, following pagination.

        Raises:
            RemoteProtocolError: the server repeats a cursor (a pagination loop).
        """
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            page = await self.list_tools(cursor)
            for tool in page.tools:
                yield tool
            if isinstance(page.next_cursor, msgspec.UnsetType):
                return
            if page.next_cursor in seen:
                raise RemoteProtocolError("the server repeated a pagination cursor")
            seen.add(page.next_cursor)
            cursor = page.next_cursor
        raise RemoteProtocolError(f"more than {_MAX_PAGES} pages of tools")

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        on_progress: ProgressCallback | None = None,
        timeout: float | msgspec.UnsetType | None = UNSET,
        max_timeout: float | msgspec.UnsetType | None = UNSET,
    ) -> CallToolResult:
        """Call a tool. A tool that failed returns a result with ``is_error`` set.

        Args:
            name: the tool's name.
            arguments: the arguments object.
            on_progress: receives progress notifications for this call.
            timeout: overrides the client's default for this call.
            max_timeout: overrides the client's absolute bound for this call.

        Raises:
            RPCError: the server refused the call (unknown tool: -32602).
            RequestTimeoutError: no answer in time (the call was cancelled).
        """
        params = CallToolRequestParams(
            name=name, arguments=UNSET if arguments is None else arguments
        )
        return await self.request(
            "tools/call",
            params,
            CallToolResult,
            on_progress=on_progress,
            timeout=timeout,
            max_timeout=max_timeout,
        )

    # -- from the server ----------------------------------------------------------------

    async def _on_request(self, request: InboundRequest) -> Any:
        if request.method == "ping":
            return EmptyResult()
        raise RPCError.method_not_found(request.method)

    async def _on_notification(self, method: str, params: Raw | None) -> None:
        if method != "notifications/message":
            logger.debug("notification %r from the server ignored", method)
            return
        try:
            record = _LOG_DECODER.decode(params if params is not None else b"{}")
        except msgspec.ValidationError as exc:
            logger.warning("invalid notifications/message dropped: %s", exc)
            return
        if self._on_log is None:
            server_logger.log(_PY_LEVELS[record.level], "%s", record.data)
            return
        outcome = self._on_log(record)
        if inspect.isawaitable(outcome):
            await outcome
