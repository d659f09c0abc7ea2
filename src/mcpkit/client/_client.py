"""The MCP client: connect over any transport, initialize, and call the server."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import msgspec
from msgspec import UNSET

from .._version import __version__
from ..aio import Endpoint, InboundRequest, MessageChannel, ProgressCallback
from ..exceptions import (
    ConnectionClosedError,
    LocalProtocolError,
    MessageNotDelivered,
    RemoteProtocolError,
    RPCError,
    SessionExpiredError,
)
from ..protocol import DEFAULT_LIMITS, Connection, Limits
from ..types import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    V2025_03_26,
    ClientCapabilities,
    ErrorCode,
    Implementation,
    InitializeRequestParams,
    InitializeResult,
    Root,
    ServerCapabilities,
    method_spec,
)
from ._callbacks import (
    ClientHandlers,
    ElicitationCallback,
    LogCallback,
    RootsProvider,
    SamplingCallback,
    capabilities_for,
)
from ._lenient import lenient_decode
from ._methods import ClientMethods, Timeout
from ._urls import falls_back_to_sse, transports_for_url

__all__ = ["Client", "ClientTransport"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit.client")


@runtime_checkable
class ClientTransport(Protocol):
    """Something that can open a message channel to a server, e.g. :class:`StdioTransport`."""

    def connect(self) -> contextlib.AbstractAsyncContextManager[MessageChannel]:
        """Return a context manager that opens the channel on entry and closes it on exit."""
        ...


class Client(ClientMethods):
    """An MCP client session. Use ``async with`` (enter and exit in the same task)::

        async with Client(StdioTransport("python", ["server.py"])) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"text": "hi"})

    The capabilities declared to the server follow from the callbacks given (a sampling
    callback declares ``sampling``, and so on); ``capabilities`` adds to them.

    A server URL picks the transport: ``Client("http://127.0.0.1:8000/mcp")`` speaks
    Streamable HTTP and falls back to the legacy HTTP+SSE transport when the server
    answers the initialize POST with a 4xx status (``basic/transports.mdx``, "Backwards
    Compatibility"); ``ws://`` URLs use WebSocket. Over Streamable HTTP, a session the
    server ended (HTTP 404) is replaced by a new one, once, transparently: the request
    that met the 404 is sent again in the new session (the server never saw it). State
    kept by the server for the old session (log level, subscriptions) is not restored.

    Args:
        transport: a :class:`ClientTransport`, an already open :class:`MessageChannel`
            (which the client closes on exit), or a server URL.
        client_info: the name and version sent to the server.
        capabilities: capabilities to declare besides those implied by the callbacks.
        protocol_version: the version to ask for in ``initialize``.
        supported_versions: versions this client accepts in the server's answer.
        timeout: default seconds to wait for a response (restarted by progress).
        max_timeout: default absolute bound on a request, however much progress arrives.
        sampling, sampling_tools, sampling_context, elicitation, elicitation_url, roots,
        on_log, on_resource_updated, on_list_changed, on_elicitation_complete: see
            :class:`ClientHandlers`.
        tolerant: accept known real-world deviations with a logged warning instead of
            failing: ``"params": null``, results missing required members (filled with
            empty values), and structured content that does not match the tool's
            ``outputSchema``. Strict (``False``) by default.
        max_concurrent_requests: most requests this client has in flight at once; more
            wait their turn here instead of being refused by the server (mcpkit servers
            answer -32000 beyond 100 in flight by default).
        limits: bounds on incoming messages.
    """

    def __init__(
        self,
        transport: ClientTransport | MessageChannel | str,
        *,
        client_info: Implementation | None = None,
        capabilities: ClientCapabilities | None = None,
        protocol_version: str = LATEST_HANDSHAKE_VERSION,
        supported_versions: Sequence[str] = HANDSHAKE_VERSIONS,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        sampling: SamplingCallback | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        elicitation: ElicitationCallback | None = None,
        elicitation_url: bool = False,
        roots: RootsProvider | None = None,
        on_log: LogCallback | None = None,
        on_resource_updated: Any = None,
        on_list_changed: Any = None,
        on_elicitation_complete: Any = None,
        tolerant: bool = False,
        max_concurrent_requests: int = 64,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        if protocol_version not in supported_versions:
            raise LocalProtocolError(f"protocol_version {protocol_version!r} is not supported")
        self._transport = transport
        #: Bumped by every new session (initialize), so concurrent callers that met the
        #: same expired session renew it once.
        self._generation = 0
        self._renewing = anyio.Lock()
        self.client_info = client_info or Implementation(name="mcpkit", version=__version__)
        self.handlers = ClientHandlers(
            sampling=sampling,
            sampling_tools=sampling_tools,
            sampling_context=sampling_context,
            elicitation=elicitation,
            elicitation_url=elicitation_url,
            roots=roots,
            on_log=on_log,
            on_resource_updated=on_resource_updated,
            on_list_changed=on_list_changed,
            on_elicitation_complete=on_elicitation_complete,
        )
        self.capabilities = self.handlers.capabilities(capabilities)
        self._requested_version = protocol_version
        self._supported_versions = tuple(supported_versions)
        self.timeout = timeout
        self.max_timeout = max_timeout
        self._limits = limits
        self.tolerant = tolerant
        if max_concurrent_requests < 1:
            raise LocalProtocolError("max_concurrent_requests must be at least 1")
        self._max_concurrent = max_concurrent_requests
        self._limiter: anyio.Semaphore | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._endpoint: Endpoint | None = None
        self._init: InitializeResult | None = None
        self._declared = ClientCapabilities()

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        """Connect and initialize.

        Raises:
            LocalProtocolError: an unusable URL.
            TransportError: the transport could not connect.
            RPCError: the server refused ``initialize``.
            RemoteProtocolError: the server chose an unsupported protocol version.
        """
        self._limiter = anyio.Semaphore(self._max_concurrent)
        target = self._transport
        candidates = transports_for_url(target) if isinstance(target, str) else [target]
        for index, candidate in enumerate(candidates):
            stack = contextlib.AsyncExitStack()
            await stack.__aenter__()
            try:
                await self._open(stack, candidate)
                await self._initialize()
            except MessageNotDelivered as exc:
                await stack.aclose()
                if index + 1 < len(candidates) and falls_back_to_sse(exc):
                    logger.info("%s; trying the HTTP+SSE transport of 2024-11-05", exc)
                    continue
                raise
            except BaseException:
                await stack.aclose()
                raise
            self._stack = stack
            break
        return self

    async def _open(
        self, stack: contextlib.AsyncExitStack, transport: ClientTransport | MessageChannel
    ) -> None:
        if isinstance(transport, ClientTransport):
            channel = await stack.enter_async_context(transport.connect())
        else:
            channel = transport
        self._endpoint = Endpoint(
            channel,
            on_request=self._on_request,
            on_notification=self.handlers.handle_notification,
            connection=Connection(limits=self._limits, tolerant=self.tolerant),
        )
        await stack.enter_async_context(self._endpoint)

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
        self._declared = capabilities_for(self._requested_version, self.capabilities)
        params = InitializeRequestParams(
            protocol_version=self._requested_version,
            capabilities=self._declared,
            client_info=self.client_info,
        )
        result = await self.request("initialize", params, InitializeResult)
        if result.protocol_version not in self._supported_versions:
            raise RemoteProtocolError(
                f"the server chose protocol version {result.protocol_version!r}, which this "
                f"client does not support (supported: {', '.join(self._supported_versions)})"
            )
        self._init = result
        self._generation += 1
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
        timeout: Timeout = UNSET,
        max_timeout: Timeout = UNSET,
        on_progress: ProgressCallback | None = None,
    ) -> T:
        """Send any request and decode its result into ``result_type``.

        Raises:
            RPCError: the server answered with an error.
            RequestTimeoutError: no answer in time (the request was cancelled).
            RemoteProtocolError: the answer did not match ``result_type``.
            ConnectionClosedError: the connection ended.
        """
        if self._endpoint is None or self._limiter is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        generation = self._generation
        try:
            raw = await self._request_once(method, params, timeout, max_timeout, on_progress)
        except SessionExpiredError:
            if method == "initialize":
                raise
            await self._renew_session(generation)
            raw = await self._request_once(method, params, timeout, max_timeout, on_progress)
        try:
            return msgspec.json.decode(raw, type=result_type)
        except msgspec.ValidationError as exc:
            if self.tolerant:
                try:
                    return lenient_decode(raw, result_type, method)
                except msgspec.ValidationError:
                    pass
            raise RemoteProtocolError(f"invalid result for {method}: {exc}") from None

    async def _request_once(
        self,
        method: str,
        params: Any,
        timeout: Timeout,
        max_timeout: Timeout,
        on_progress: ProgressCallback | None,
    ) -> msgspec.Raw:
        assert self._endpoint is not None
        assert self._limiter is not None
        async with self._limiter:  # released before any renewal: initialize needs a slot
            return await self._endpoint.request(
                method,
                params,
                timeout=self.timeout if isinstance(timeout, msgspec.UnsetType) else timeout,
                max_timeout=self.max_timeout
                if isinstance(max_timeout, msgspec.UnsetType)
                else max_timeout,
                on_progress=on_progress,
            )

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

    async def set_roots(self, roots: RootsProvider) -> None:
        """Replace the client's roots and tell the server (``roots/list_changed``).

        Raises:
            LocalProtocolError: the client was created without roots (it did not declare
                the capability, and capabilities cannot change after initialize).
        """
        if self.handlers.roots is None:
            raise LocalProtocolError("create the client with roots=... to declare the capability")
        self.handlers.roots = roots
        await self.notify("notifications/roots/list_changed")

    async def list_roots(self) -> list[Root]:
        """The roots this client reports."""
        return list(await self.handlers.list_roots())

    async def _on_request(self, request: InboundRequest) -> Any:
        # Serve only what this client declared, in a method the negotiated revision has
        # (a server may not use an undeclared capability; basic/lifecycle.mdx "Operation").
        method = request.method
        spec = method_spec(method)
        version = self._init.protocol_version if self._init is not None else self._requested_version
        declared = {
            "sampling/createMessage": self._declared.sampling,
            "elicitation/create": self._declared.elicitation,
            "roots/list": self._declared.roots,
        }.get(method, True)
        if declared is UNSET or (spec is not None and not spec.in_version(version)):
            raise RPCError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {method!r} (not declared by this client for protocol "
                f"{version})",
            )
        return await self.handlers.handle_request(request)
