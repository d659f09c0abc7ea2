"""The low-level server: a registry from method names to typed handlers.

Handlers have one shape, ``async def handler(ctx: RequestContext, params) -> result``, where
``params`` is already decoded into the method's params struct (or a dict for vendor methods
without a declared type) and ``result`` is a result struct or a dict. The lifecycle
(``initialize``, ``ping``, ``logging/setLevel``) is built in. Tools can be registered with
:meth:`LowLevelServer.add_tool`; the high-level decorator API builds on this class.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import anyio
import msgspec
from msgspec import UNSET, Raw

from .._version import __version__
from ..aio import Endpoint, MemoryNotificationBus, NotificationBus, check_arity
from ..aio._lograte import PeerLogLimiter
from ..exceptions import LocalProtocolError, RPCError, ToolError
from ..protocol import DEFAULT_LIMITS, Limits, ParamHeader, SchemaValidator, compile_schema
from ..types import (
    HANDSHAKE_VERSIONS,
    V2026_07_28,
    CacheScope,
    CallToolRequestParams,
    CallToolResult,
    ContentBlock,
    Implementation,
    ListToolsRequestParams,
    ListToolsResult,
    LoggingLevel,
    ServerCapabilities,
    TextContent,
    Tool,
    ToolsCapability,
    is_custom_method_name,
    method_spec,
)
from ..types._echo import peer_text
from ._compat import tool_for, tool_result_for
from ._context import RequestContext
from ._lifespan import Lifespan, LifespanFunction
from ._listen import serve_listen
from ._paging import page_of
from ._request_state import RequestStateSealer
from ._running import Running
from ._session import ServerSession
from ._tool_rules import arguments_refused, checked_tool, tool_error, tool_failure

__all__ = ["LowLevelServer", "ToolHandler", "ToolResult"]

P = TypeVar("P")
Handler = Callable[[RequestContext, Any], Awaitable[Any]]
NotificationCallback = Callable[[ServerSession, Raw | None], Awaitable[None]]
#: What a tool handler may return: a full result, a list of content blocks, or text.
ToolResult = CallToolResult | Sequence[ContentBlock] | str
ToolHandler = Callable[[RequestContext, dict[str, Any]], Awaitable[ToolResult] | ToolResult]

# Handled by the session itself; never user-registrable.
_BUILT_IN: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
    }
)


@dataclass(frozen=True, slots=True)
class _Route:
    handler: Handler
    decoder: msgspec.json.Decoder[Any]


def _check_registrable(method: str, kind: str) -> None:
    spec = method_spec(method)
    if method in _BUILT_IN:
        raise LocalProtocolError(f"{method!r} is handled by mcpkit itself and cannot be replaced")
    if spec is not None:
        if spec.kind != kind:
            raise LocalProtocolError(f"{method!r} is an MCP {spec.kind}, not a {kind}")
        if spec.sender == "server":
            raise LocalProtocolError(f"{method!r} is sent by servers, not handled by them")
        return
    if not is_custom_method_name(method):
        raise LocalProtocolError(
            f"cannot register {method!r}: custom methods need a vendor prefix such as "
            f"'acme/{method.rsplit('/', 1)[-1]}', and MCP's own namespaces (tools/, "
            "notifications/, rpc., io.modelcontextprotocol/, ...) are reserved"
        )


class LowLevelServer(Running):
    """An MCP server as a table of handlers.

    Args:
        name: the server's name (``serverInfo.name``).
        version: the server's version (``serverInfo.version``).
        title: a display name.
        instructions: guidance for the model, returned by ``initialize``.
        supported_versions: protocol versions to accept, defaults to every handshake-era
            revision (2024-11-05 ... 2025-11-25).
        limits: bounds on incoming messages.
        max_in_flight: most requests per connection handled concurrently.
        page_size: items per page of list results (``None``: everything in one page).
        default_log_level: log threshold until the client sends ``logging/setLevel``.
        max_client_request_timeout: absolute bound in seconds on a request to the client
            (sampling, elicitation, roots), however much progress arrives.
        modern_versions: the stateless revisions served (requests that carry their
            version in ``_meta``); ``()`` serves the handshake era only.
        cache_ttl_ms, cache_scope: the caching hints of 2026-07-28 results
            (``server/utilities/caching.mdx``): how long a client may reuse a list or
            read result, and whether shared caches may (``"public"``) or only the same
            authorization context (``"private"``). The default, 0 ms and private, never
            lets a stale list be served.
        request_state: seals the ``requestState`` of 2026-07-28 multi round-trip
            requests (keys, lifetime, size bound, replay guard); give every process of a
            deployment the same keys. Default: :class:`RequestStateSealer` ``()``.
        bus: where change notifications (list changes, resource updates) are published
            and ``subscriptions/listen`` streams and ``resources/subscribe`` sessions
            subscribe; give every process of a deployment one shared bus. Default: a
            :class:`~mcpkit.aio.MemoryNotificationBus` (each listener's queue holds
            1000 notifications; a listener further behind is cut off).
        max_subscriptions: most resource URIs one client may subscribe to (with
            ``resources/subscribe``, or in one ``subscriptions/listen``), and 1 KiB of
            URI per subscription on average; past either, -32602.
        mask_errors: report a tool that raised (other than :class:`ToolError`) as
            "failed" without the exception's message; the traceback is logged either way.
        lifespan: ``lifespan(server)``, an async context manager entered before the first
            connection is served and exited after the last ended; yields ``ctx.lifespan``.
        progress_rate: most progress notifications per second one request sends, after
            a burst of 100 (``None``: no bound); past it a report is dropped, unless it
            reaches its ``total`` (basic/utilities/progress.mdx: "SHOULD implement rate
            limiting"; a tool reporting in a tight loop would flood the client).
        log_rate: most log messages per second to one client, after a burst of 100
            (``None``: no bound); past it they are dropped, and the next one sent is
            preceded by a warning that says how many (logging.mdx: "SHOULD rate limit").

    Raises:
        LocalProtocolError: an invalid option (a name that is not a non-empty string, a
            lifespan that is not a context manager factory, an unknown version, a bound
            out of range).
    """

    def __init__(
        self,
        name: str,
        version: str = __version__,
        *,
        title: str | None = None,
        instructions: str | None = None,
        supported_versions: Sequence[str] = HANDSHAKE_VERSIONS,
        limits: Limits = DEFAULT_LIMITS,
        max_in_flight: int = 100,
        page_size: int | None = None,
        default_log_level: LoggingLevel = "info",
        max_client_request_timeout: float = 600.0,
        modern_versions: Sequence[str] = (V2026_07_28,),
        cache_ttl_ms: int = 0,
        cache_scope: CacheScope = "private",
        request_state: RequestStateSealer | None = None,
        bus: NotificationBus | None = None,
        max_subscriptions: int = 1000,
        mask_errors: bool = False,
        lifespan: LifespanFunction | None = None,
        progress_rate: float | None = Endpoint.progress_rate,
        log_rate: float | None = 100.0,
    ) -> None:
        if not (isinstance(name, str) and name and isinstance(version, str)):
            # (They go out in serverInfo as they are: an int version failed every client's
            # initialize, "Expected `str`, got `int`".)
            raise LocalProtocolError(
                f"name must be a non-empty string and version a string, not {name!r}, {version!r}"
            )
        unknown = [v for v in supported_versions if v not in HANDSHAKE_VERSIONS]
        if unknown or not supported_versions:
            raise LocalProtocolError(f"unsupported protocol versions: {unknown or '(none)'}")
        if any(v != V2026_07_28 for v in modern_versions):
            raise LocalProtocolError(f"unsupported stateless protocol versions: {modern_versions}")
        if cache_ttl_ms < 0 or cache_scope not in ("public", "private"):
            raise LocalProtocolError("cache_ttl_ms must be >= 0 and cache_scope public or private")
        if page_size is not None and page_size < 1:
            raise LocalProtocolError("page_size must be at least 1")
        if max_subscriptions < 1:
            raise LocalProtocolError("max_subscriptions must be at least 1")
        for rate in (progress_rate, log_rate):
            if rate is not None and not rate > 0:
                raise LocalProtocolError("progress_rate and log_rate must be positive or None")
        self.max_subscriptions = max_subscriptions
        self.mask_errors = mask_errors
        self.lifespan = Lifespan(self, lifespan)
        self.info = Implementation(
            name=name, version=version, title=UNSET if title is None else title
        )
        self.instructions = instructions
        self.supported_versions = tuple(supported_versions)
        self.modern_versions = tuple(modern_versions)
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self.limits = limits
        self.max_in_flight = max_in_flight
        self.page_size = page_size
        self.default_log_level: LoggingLevel = default_log_level
        self.max_client_request_timeout = max_client_request_timeout
        self._routes: dict[str, _Route] = {}
        self.sessions: set[ServerSession] = set()  # served now (notifications to every one)
        self.peer_log = PeerLogLimiter(shared=True)  # clients' mistakes: one bound for all
        self.progress_rate = progress_rate
        self.log_rate = log_rate
        self._notifications: dict[str, NotificationCallback] = {}
        self._tools: dict[str, tuple[Tool, ToolHandler, SchemaValidator | None]] = {}
        self._param_headers: dict[str, tuple[ParamHeader, ...]] = {}
        self._request_state = request_state
        self.bus: NotificationBus = MemoryNotificationBus() if bus is None else bus
        self.set_request_handler("subscriptions/listen", serve_listen)
        #: Deprecated 2026-07-28 features already warned about (once each per server).
        self.deprecations_warned: set[str] = set()

    @property
    def request_state(self) -> RequestStateSealer:
        """The sealer of multi round-trip states (created on first use)."""
        if self._request_state is None:
            self._request_state = RequestStateSealer()
        return self._request_state

    # -- registration -------------------------------------------------------------------

    def set_request_handler(
        self, method: str, handler: Handler, params_type: type[Any] | None = None
    ) -> None:
        """Register ``handler`` for requests named ``method``.

        MCP methods get their params decoded into the spec's params struct; vendor methods
        (``acme/op``) into ``params_type`` (default ``dict[str, Any]``).

        Raises:
            LocalProtocolError: ``method`` is built in, sent by servers, or neither an MCP
                method nor a vendor-prefixed name.
        """
        _check_registrable(method, "request")
        spec = method_spec(method)
        decode_type = params_type or (spec.params if spec is not None else dict[str, Any])
        self._routes[method] = _Route(handler, msgspec.json.Decoder(decode_type))

    def request_handler(
        self, method: str, params_type: type[Any] | None = None
    ) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`set_request_handler`."""

        def register(handler: Handler) -> Handler:
            self.set_request_handler(method, handler, params_type)
            return handler

        return register

    def set_notification_handler(self, method: str, handler: NotificationCallback) -> None:
        """Register ``handler(session, raw_params)`` for notifications named ``method``.

        Raises:
            LocalProtocolError: as for :meth:`set_request_handler`.
        """
        _check_registrable(method, "notification")
        self._notifications[method] = handler

    def add_tool(self, tool: Tool, handler: ToolHandler, *, validate: bool = True) -> None:
        """Register a tool and the coroutine function that runs it (a plain function is
        called on the event loop: it must not block).

        The handler receives the context and the arguments object, checked against
        ``tool.input_schema`` first (``server/tools.mdx``: servers MUST validate tool
        inputs): arguments that break it are answered with an ``Invalid arguments: ...``
        tool error naming each problem, and the handler does not run. ``validate=False``
        leaves the checking to the handler. It returns a :class:`CallToolResult`, a list
        of content blocks, or a string (one text block). Raising :class:`ToolError` (or
        any exception) produces a tool execution error (``isError: true``) the model can
        see; :class:`RPCError` becomes a JSON-RPC error.

        Raises:
            LocalProtocolError: the name breaks the 2025-11-25 naming rules (1-128 of
                ``A-Z a-z 0-9 _ - .``) or is already registered, the input schema does
                not say ``"type": "object"`` at its root (every revision requires it), or
                it has an invalid ``x-mcp-header`` annotation (see
                :func:`mcpkit.protocol.param_headers`), or, with ``validate``, it cannot be
                compiled (see :func:`mcpkit.protocol.compile_schema`), or the handler
                cannot be called as ``handler(ctx, arguments)``.
        """
        mirrored = checked_tool(tool)
        check_arity("add_tool's handler", handler, 2, "(ctx, arguments)")
        if tool.name in self._tools:
            raise LocalProtocolError(f"a tool named {tool.name!r} is already registered")
        validator = None
        if validate:
            try:
                validator = compile_schema(tool.input_schema)
            except LocalProtocolError as exc:
                raise LocalProtocolError(f"tool {tool.name!r}: {exc}") from None
        self._tools[tool.name] = (tool, handler, validator)
        self._param_headers[tool.name] = mirrored
        if "tools/list" not in self._routes:
            self._routes["tools/list"] = _Route(
                self._list_tools, msgspec.json.Decoder(ListToolsRequestParams)
            )
            self._routes["tools/call"] = _Route(
                self._call_tool, msgspec.json.Decoder(CallToolRequestParams)
            )

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return [entry[0] for entry in self._tools.values()]

    def param_headers(self, tool_name: str) -> tuple[ParamHeader, ...]:
        """The parameters of a tool mirrored into ``Mcp-Param-*`` headers on Streamable
        HTTP 2026-07-28 (``x-mcp-header``, SEP-2243); empty for an unknown tool."""
        return self._param_headers.get(tool_name, ())

    def capabilities(self) -> ServerCapabilities:
        """The capabilities implied by what is registered."""
        return ServerCapabilities(
            logging={},
            tools=ToolsCapability() if "tools/list" in self._routes else UNSET,
        )

    # -- routing (used by sessions) -----------------------------------------------------

    def route(self, method: str) -> _Route | None:
        """The handler registered for a request method, if any."""
        return self._routes.get(method)

    def notification_route(self, method: str) -> NotificationCallback | None:
        """The handler registered for a notification, if any."""
        return self._notifications.get(method)

    # -- tools --------------------------------------------------------------------------

    def page(
        self, items: Sequence[P], cursor: str | msgspec.UnsetType, *, kind: str = ""
    ) -> tuple[list[P], str | None]:
        """Cut one page out of ``items`` for an opaque cursor (``None``: the first page).
        ``kind`` names the list (the request's method): a cursor of one list is refused
        by another.

        Returns the page and the next cursor (``None`` on the last page).

        Raises:
            RPCError: -32602 for a cursor this server did not hand out
                (``server/utilities/pagination.mdx``): of another list, not in the form
                it issues, or for an offset it never gives (not a page boundary, or past
                the end).
        """
        return page_of(items, cursor, kind, self.page_size)

    async def _list_tools(
        self, ctx: RequestContext, params: ListToolsRequestParams
    ) -> ListToolsResult:
        page, next_cursor = self.page(self.tools, params.cursor, kind=ctx.method)
        version = ctx.protocol_version or ""
        return ListToolsResult(
            tools=[tool_for(version, tool) for tool in page],
            next_cursor=UNSET if next_cursor is None else next_cursor,
        )

    async def _call_tool(
        self, ctx: RequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        entry = self._tools.get(params.name)
        if entry is None:
            raise RPCError.invalid_params(f"Unknown tool: {peer_text(params.name)}")
        _, handler, validator = entry
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        if validator is not None and not validator.is_valid(arguments):
            return arguments_refused(validator, arguments)  # text: what every revision reads
        try:
            called = handler(ctx, arguments)  # (a plain function has answered already)
            outcome = await called if inspect.isawaitable(called) else called
        except RPCError as exc:
            if not exc.received:
                raise  # the tool chose to answer with this JSON-RPC error
            # An error the client sent back (e.g. to a sampling request) is the tool's failure.
            return tool_error(f"Tool {params.name!r} failed: {exc}")
        except anyio.get_cancelled_exc_class():
            raise
        except ToolError as exc:
            return tool_error(str(exc))
        except (Exception, SystemExit) as exc:
            return tool_failure(params.name, exc, mask=self.mask_errors)
        if isinstance(outcome, str):
            return CallToolResult(content=[TextContent(text=outcome)])
        if not isinstance(outcome, CallToolResult):
            outcome = CallToolResult(content=list(outcome))
        # As the negotiated revision can read it (audio, links, structured content).
        return tool_result_for(ctx.protocol_version or "", outcome)
