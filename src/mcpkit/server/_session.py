"""One server connection: the handshake, typed dispatch and per-connection state."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

import anyio.lowlevel
import msgspec
from anyio.lowlevel import EventLoopToken
from msgspec import UNSET, Raw

from ..aio import PROCEED, Endpoint, InboundRequest, MessageChannel, Subscription
from ..exceptions import RPCError
from ..protocol import HandshakeState, ServerHandshake
from ..types import (
    HANDSHAKE_VERSIONS,
    V2025_03_26,
    ClientCapabilities,
    EmptyResult,
    ErrorCode,
    Implementation,
    InitializeResult,
    InputResponseRequestParams,
    LoggingLevel,
    ServerCapabilities,
    negotiate_version,
)
from ..types._echo import one_line, peer_text
from ._compat import capabilities_for, implementation_for, without_push
from ._context import RequestContext
from ._inputs import InputRound, input_required_in, url_elicitations_required
from ._listen import ResourceUpdates
from ._logbridge import current_request
from ._modern import (
    ABSENT_REQUESTS,
    ModernRequest,
    exists_in_modern,
    is_modern,
    parse_modern,
)
from ._modern_results import STRIPPERS, discover_result, finish_handshake, finish_modern
from ._params import INIT_DECODER, PING_DECODER, SET_LEVEL_DECODER, decode_params
from ._session_log import SessionLogging

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["ServerSession"]

logger = logging.getLogger("mcpkit.server")


#: (A module constant: an Enum member read through its class costs ten times as much.)
_READY: Final = HandshakeState.READY


class ServerSession(SessionLogging):
    """The state of one client connection to a :class:`LowLevelServer`.

    Attributes:
        protocol_version: the negotiated version, once initialized.
        client_info: the client's self-reported identity, once initialized.
        client_capabilities: what the client declared.
        server_capabilities: what the initialize result declared to this client (``None``
            before): only those may be used with it (``basic/lifecycle.mdx``).
        log_level: the minimum level of log messages sent to the client.
        stateless: the session lives for one HTTP request (a stateless app): nothing can
            reach the client outside that request, so no ``listChanged`` or resource
            ``subscribe`` is declared and no request is sent to the client.
    """

    # Class-level defaults (a session is made per stateless HTTP POST: what its
    # constructor need not set, it does not).
    client_info: Implementation | None = None
    server_capabilities: ServerCapabilities | None = None
    stateless = False
    _resource_updates: ResourceUpdates | None = None  # made on first use
    loop_token: EventLoopToken | None = None
    _listens: set[Subscription] | None = None  # made on first use (see listens)
    #: end_listens ended open listen streams: their final results are on their way.
    listens_ending = False
    _client_capabilities: ClientCapabilities | None = None  # (ditto: client_capabilities)

    def __init__(
        self,
        server: LowLevelServer,
        channel: MessageChannel,
        autoreceive: bool = True,
        handshake: ServerHandshake | None = None,
    ) -> None:
        # (handshake: a stateless HTTP POST's session gets a shared ready one, see
        # ready_handshake; client_capabilities: made on first read, see there)
        self.server = server
        self.handshake = ServerHandshake() if handshake is None else handshake
        self.log_level: LoggingLevel = server.default_log_level
        #: The thread running this session's event loop, and the loop's token (how other
        #: threads reach it: see bind_loop).
        self.loop_thread = threading.get_ident()
        # (Endpoint(channel, on_request=..., ...) by position: see Endpoint.for_session)
        self.endpoint = Endpoint.for_session(
            channel,
            self._on_request,
            self._on_notification,
            self._gate,
            server.limits,
            server.max_in_flight,
            autoreceive,
            # (called by the receive loop alone: an endpoint fed by its transport, one per
            # stateless HTTP POST, needs no bound method for it)
            self.end_listens if autoreceive else None,
            server.peer_log,  # one bound for all: new connections get no new burst
        )
        self.endpoint.progress_rate = server.progress_rate

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client declared (made on first read: most requests never ask)."""
        if self._client_capabilities is None:
            self._client_capabilities = ClientCapabilities()
        return self._client_capabilities

    @client_capabilities.setter
    def client_capabilities(self, capabilities: ClientCapabilities) -> None:
        self._client_capabilities = capabilities

    @property
    def listens(self) -> set[Subscription]:
        """The open ``subscriptions/listen`` streams of this connection."""
        if self._listens is None:
            self._listens = set()
        return self._listens

    @property
    def resource_updates(self) -> ResourceUpdates:
        """Handshake-era ``resources/subscribe`` subscriptions, fed by the server's bus."""
        if self._resource_updates is None:
            self._resource_updates = ResourceUpdates(self)
        return self._resource_updates

    @property
    def subscriptions(self) -> frozenset[str]:
        """Resource URIs this client subscribed to (``resources/subscribe``)."""
        updates = self._resource_updates
        return frozenset() if updates is None else frozenset(updates.uris)

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> bool:
        """Run ``fn(*args)`` in the background while the connection is served (see
        :meth:`Endpoint.start_soon`); returns whether it started."""
        return self.endpoint.start_soon(fn, *args)

    def end_listens(self) -> None:
        """End this connection's ``subscriptions/listen`` streams gracefully: each gets
        what is queued for it, then its final result."""
        if self._listens:
            self.listens_ending = True
            for subscription in list(self._listens):
                subscription.end()

    def release(self) -> None:
        """The connection ended: drop its resource subscriptions (idempotent; its listen
        streams end with their handlers, which the end of the connection cancels)."""
        if self._resource_updates is not None:
            self._resource_updates.close()

    @property
    def protocol_version(self) -> str | None:
        return self.handshake.protocol_version

    @property
    def initialized(self) -> bool:
        """Whether the client completed the handshake (sent ``notifications/initialized``)."""
        return self.handshake.state is _READY

    def assume_initialized(self, protocol_version: str) -> None:
        """Skip the handshake: serve as if the client had initialized with
        ``protocol_version`` and declared no capabilities (stateless HTTP, where every
        request stands alone and no ``initialize`` precedes it)."""
        self.handshake.assume_ready(protocol_version)
        self.endpoint.connection.allow_batches = protocol_version == V2025_03_26

    def bind_loop(self, token: EventLoopToken | None = None) -> None:
        """Remember the running event loop: threads the request's work starts (a sync
        tool's worker, ``asyncio.to_thread``) reach it to send log messages. ``token``:
        the loop's, when the caller has it (finding it costs a few microseconds, which
        an HTTP app pays once rather than per session)."""
        self.loop_thread = threading.get_ident()
        self.loop_token = token if token is not None else anyio.lowlevel.current_token()

    async def run(self) -> None:
        """Serve the connection until the client closes it."""
        self.bind_loop()
        try:
            await self.endpoint.run()
        finally:
            self.release()

    # -- dispatch -----------------------------------------------------------------------

    def _gate(self, request: InboundRequest) -> Any:
        server = self.server
        # Over HTTP the route knows the MCP-Protocol-Version header of the POST, which
        # then decides the era (is_modern's first rule, inlined: this runs per request).
        header: str | None = getattr(request.route, "protocol_version", None)
        if server.modern_versions and (
            header not in HANDSHAKE_VERSIONS
            if header is not None
            else is_modern(request.method, request.params)
        ):
            modern = parse_modern(request.params, server.modern_versions, header)
            if not exists_in_modern(request.method):
                raise RPCError(
                    ErrorCode.METHOD_NOT_FOUND,
                    f"Method not found: {peer_text(request.method)} does not exist in protocol "
                    f"{modern.protocol_version}",
                )
            if request.method == "server/discover":
                return finish_modern(server, request.method, discover_result(server))
            request.state = modern
            return PROCEED
        handshake = self.handshake
        # Once ready, only a second initialize is refused (the rest: check_request).
        if handshake.state is not _READY or request.method == "initialize":
            error = handshake.check_request(request.method)
            if error is not None:
                raise RPCError(error.code, error.message)
        version = handshake.protocol_version
        if version is not None and request.method in ABSENT_REQUESTS[version]:
            raise RPCError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {request.method!r} does not exist in protocol {version}",
            )
        if request.method == "initialize":
            return self._initialize(request.params)
        if request.method == "ping":
            if request.params is not None:  # its only member, _meta, must be an object
                decode_params(PING_DECODER, request.params, request.method)
            return EmptyResult()
        if request.method == "logging/setLevel":
            params = decode_params(SET_LEVEL_DECODER, request.params, request.method)
            self.log_level = params.level
            return EmptyResult()
        return PROCEED

    def _initialize(self, raw: Raw | None) -> InitializeResult:
        params = decode_params(INIT_DECODER, raw, "initialize")
        version = negotiate_version(params.protocol_version, self.server.supported_versions)
        self.client_info = params.client_info
        self.client_capabilities = params.capabilities
        self.handshake.initialize_succeeded(version)
        # JSON-RPC batches exist in 2025-03-26 only (basic/index.mdx of that revision).
        self.endpoint.connection.allow_batches = version == V2025_03_26
        client = (peer_text(params.client_info.name), peer_text(params.client_info.version))
        logger.debug("initialized: client %s %s, protocol %s", *client, version)
        capabilities = capabilities_for(version, self.server.capabilities())
        self.server_capabilities = without_push(capabilities) if self.stateless else capabilities
        return InitializeResult(
            protocol_version=version,
            capabilities=self.server_capabilities,
            server_info=implementation_for(version, self.server.info),
            instructions=UNSET if self.server.instructions is None else self.server.instructions,
        )

    async def _on_request(self, request: InboundRequest) -> Any:
        route = self.server.route(request.method)
        if route is None:
            raise RPCError.method_not_found(request.method)
        try:  # (decode_params, inlined: this runs per request)
            params = route.decoder.decode(request.params if request.params is not None else b"{}")
        except msgspec.ValidationError as exc:
            why = one_line(str(exc))  # (msgspec quotes a peer's value whole)
            raise RPCError.invalid_params(f"Invalid params for {request.method}: {why}") from None
        meta = getattr(params, "meta", None)
        if type(params) is dict:  # (msgspec decodes JSON objects to exact dicts)
            meta = params.get("_meta")
        # (None, the handshake era's state, tested first: a failing isinstance costs a
        # __class__ lookup, and this runs per request)
        state = request.state
        modern = state if state is not None and isinstance(state, ModernRequest) else None
        inputs = None
        # A handler registered with its own params type gets no multi round trips.
        if modern is not None and isinstance(params, InputResponseRequestParams):
            inputs = await InputRound.begin(self.server.request_state, request.method, params)
        ctx = RequestContext(request, self, meta if type(meta) is dict else None, modern, inputs)
        token = current_request.set(ctx)
        handler = route.handler  # (read, then called: CPython 3.11 specializes the read)
        try:
            result = await handler(ctx, params)
        except RPCError as exc:
            if modern is None:
                raise
            if exc.code == ErrorCode.RESOURCE_NOT_FOUND:
                # 2026-07-28 (SEP-2164): a missing resource is -32602; -32002 is retired.
                raise RPCError(ErrorCode.INVALID_PARAMS, exc.message, exc.data) from None
            if exc.code != ErrorCode.URL_ELICITATION_REQUIRED:
                raise
            # -32042 is retired too: the same URLs are asked for by a multi round trip.
            result = url_elicitations_required(
                exc, inputs, request.method, modern.client_capabilities
            )
        except BaseException as exc:
            # The handler asked for input the client has not given yet (2026-07-28
            # mrtr.mdx): answer with an input-required result instead.
            required = None if inputs is None else input_required_in(exc)
            if required is None or inputs is None:
                raise
            result = inputs.result(required)
        finally:
            current_request.reset(token)
        if modern is not None:
            return finish_modern(self.server, request.method, result)
        strip = STRIPPERS.get(type(result))  # (finish_handshake, its memo inlined)
        return finish_handshake(result) if strip is None else strip(result)

    async def _on_notification(self, method: str, params: Raw | None) -> None:
        if not self.handshake.receive_notification(method):
            return
        handler = self.server.notification_route(method)
        if handler is None:
            logger.debug("notification %s ignored (no handler)", peer_text(method))
            return
        await handler(self, params)

    # -- sending ------------------------------------------------------------------------

    async def notify(self, method: str, params: Any = UNSET, *, related: bool = True) -> None:
        """Send a notification to the client (``related=False``: one that belongs to no
        request being handled in this task, e.g. a change another client caused).

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
            ConnectionClosedError: the client is gone.
        """
        await self.endpoint.notify(method, params, related=related)

    def notify_soon(self, method: str, params: Any = UNSET, *, related: bool = True) -> None:
        """Send a notification in the background, from synchronous code on the event loop
        (best effort: nothing is sent once the connection has ended)."""
        self.endpoint.notify_soon(method, params, related=related)
