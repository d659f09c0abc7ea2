"""The MCP client: connect over any transport, initialize, and call the server."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec
from msgspec import UNSET

from .._version import __version__
from ..aio import Endpoint, ProgressCallback, close_stack
from ..exceptions import (
    ConnectionClosedError,
    LocalProtocolError,
    MessageNotDelivered,
    RemoteProtocolError,
    SessionExpiredError,
)
from ..protocol import DEFAULT_LIMITS, Connection, Limits
from ..types import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSIONS,
    ClientCapabilities,
    Implementation,
    InitializeResult,
    LoggingLevel,
    RequestId,
    Tool,
)
from ._cache import ResultCache
from ._callbacks import (
    ClientHandlers,
    ElicitationCallback,
    LogCallback,
    RootsProvider,
    SamplingCallback,
    capabilities_for,
)
from ._handshake import Handshake
from ._info import ServerInfo
from ._inprocess import ClientTransport, Target, check_target, exit_reason, open_channel
from ._lenient import decode_result
from ._listen import ListenMethods, ListenStream
from ._methods import ClientMethods, Timeout
from ._modern import Era, ModernServer, discover
from ._mrtr import Deprecations
from ._notes import CallbackRunner
from ._serving import ServerFacing
from ._stateless import Stateless
from ._tool_checks import OutputChecks
from ._urls import candidates_for, falls_back_to_sse, url_options

if TYPE_CHECKING:
    import ssl

__all__ = ["Client", "ClientTransport"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit.client")

#: Bound on the ``server/discover`` probe: a legacy server may never answer it
#: (``basic/transports/stdio.mdx`` "Backward Compatibility": no answer means legacy).
PROBE_TIMEOUT = 10.0


class Client(ServerFacing, ServerInfo, Handshake, Stateless, ListenMethods, ClientMethods):
    """An MCP client session. Use ``async with`` (enter and exit in the same task)::

        async with Client(StdioTransport("python", ["server.py"])) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"text": "hi"})

    The capabilities declared to the server follow from the callbacks given (a sampling
    callback declares ``sampling``, and so on); ``capabilities`` adds to them.

    **Eras.** With ``era="auto"`` (the default) the client probes with ``server/discover``
    (2026-07-28 ``basic/versioning.mdx``): a server that lists 2026-07-28 is spoken to
    statelessly (no ``initialize``; every request carries the version, capabilities,
    client info and chosen log level in ``_meta``); any other answer, or none within 10 s,
    falls back to ``initialize``. ``era="2026-07-28"`` refuses a server without the
    stateless era; ``era="handshake"`` never probes. The outcome is kept for the life of
    the client (``era``). On 2026-07-28, an input-required result (``mrtr.mdx``) is
    fulfilled with the callbacks and retried, at most ``max_input_rounds`` times within
    ``input_deadline`` seconds; results with caching hints are cached (``cache``);
    ``ping`` sends ``server/discover`` (2026 has no ``ping``); ``set_logging_level`` sets
    the ``logLevel`` sent with every later request; resource subscriptions raise
    :class:`CapabilityError` (they moved to ``subscriptions/listen``).

    A server URL picks the transport: ``Client("http://127.0.0.1:8000/mcp")`` speaks
    Streamable HTTP and falls back to the legacy HTTP+SSE transport when the server
    answers the initialize POST with a 4xx status (``basic/transports.mdx``, "Backwards
    Compatibility"); ``ws://`` URLs use WebSocket. Over Streamable HTTP, a session the
    server ended (HTTP 404) is replaced by a new one, once, transparently: the request
    that met the 404 is sent again in the new session (the server never saw it). State
    kept by the server for the old session (log level, subscriptions) is not restored.

    Args:
        transport: a :class:`ClientTransport`, an already open :class:`MessageChannel`
            (which the client closes on exit), a server URL, or a server object in this
            process (``Client(server)``: served over an in-memory channel while connected).
        client_info: the name and version sent to the server.
        capabilities: capabilities to declare besides those implied by the callbacks.
        protocol_version: the version to ask for in ``initialize`` (default: the latest
            handshake version). Naming a handshake version with ``era="auto"`` chooses
            the handshake era; naming ``"2026-07-28"`` is ``era="2026-07-28"``.
        supported_versions: versions this client accepts in ``initialize``'s answer.
        era: ``"auto"``, ``"2026-07-28"`` or ``"handshake"`` (see above).
        timeout: default seconds to wait for a response (restarted by progress); with a
            server URL, also the most that opening its transport may take.
        max_timeout: default absolute bound on a request, however much progress arrives.
        sampling, sampling_tools, sampling_context, elicitation, elicitation_url, roots,
        on_log, on_resource_updated, on_list_changed, on_elicitation_complete: see
            :class:`ClientHandlers`.
        max_input_rounds: most input-required results followed for one request.
        input_deadline: seconds one request may take with all its input rounds, from
            the first input-required result (the callbacks' time included); ``None``
            for no bound beyond each round's. A request that asks for no input is
            bounded by ``timeout`` and ``max_timeout`` alone.
        cache: a :class:`ResultCache` to use, ``True`` for a new one (256 entries), or
            ``False`` to cache nothing.
        tolerant: accept known real-world deviations with a logged warning instead of
            failing: ``"params": null``, results missing required members (filled with
            empty values), and structured content that does not match the tool's
            ``outputSchema``. Strict (``False``) by default.
        max_concurrent_requests: most requests this client has in flight at once; more
            wait their turn here instead of being refused by the server (mcpkit servers
            answer -32000 beyond 100 in flight by default).
        limits: bounds on incoming messages.
        headers, ssl_context: with a server URL, headers sent with every request (say,
            ``Authorization``) and the TLS settings (say, trusting a private CA) of the
            transports the URL picks.

    Raises:
        LocalProtocolError: an unsupported ``protocol_version`` or ``era``, bounds below
            1, or a ``transport`` of none of the kinds above.
    """

    def __init__(
        self,
        transport: Target | str,
        *,
        client_info: Implementation | None = None,
        capabilities: ClientCapabilities | None = None,
        protocol_version: str | None = None,
        supported_versions: Sequence[str] = HANDSHAKE_VERSIONS,
        era: Era = "auto",
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
        max_input_rounds: int = 8,
        input_deadline: float | None = 600.0,
        cache: ResultCache | bool = True,
        tolerant: bool = False,
        max_concurrent_requests: int = 64,
        limits: Limits = DEFAULT_LIMITS,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        check_target(transport)
        if era not in ("auto", "handshake", *MODERN_VERSIONS):
            raise LocalProtocolError(f"era must be auto, 2026-07-28 or handshake, not {era!r}")
        if protocol_version in MODERN_VERSIONS and era != "handshake":
            era, protocol_version = protocol_version, None  # type: ignore[assignment]
        elif protocol_version is not None and era == "auto":
            era = "handshake"  # asking for a handshake version chooses that era
        requested = protocol_version or LATEST_HANDSHAKE_VERSION
        if requested not in supported_versions:
            raise LocalProtocolError(f"protocol_version {requested!r} is not supported")
        if max_concurrent_requests < 1 or max_input_rounds < 1:
            raise LocalProtocolError("max_concurrent_requests and max_input_rounds must be >= 1")
        self._transport = transport
        self._url_options = url_options(transport, headers, ssl_context)
        #: Bumped by every session (initialize): callers that met one expiry renew once.
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
        self._requested_version = requested
        self._supported_versions = tuple(supported_versions)
        self._era_choice: Era = era
        #: The era found on connecting: a stateless version, or "handshake"; kept for the
        #: life of the client (versioning.mdx: the era is a property of the server).
        self.era: str | None = None
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.max_input_rounds = max_input_rounds
        self.input_deadline = input_deadline
        self.cache: ResultCache | None = (
            cache if isinstance(cache, ResultCache) else ResultCache() if cache else None
        )
        self._limits = limits
        self.tolerant = tolerant
        self._max_concurrent = max_concurrent_requests
        self._limiter: anyio.Semaphore | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._owner: int | None = None  # the task that connected (the only one to close)
        self._endpoint: Endpoint | None = None
        self._init: InitializeResult | None = None
        self._modern: ModernServer | None = None
        self._log_level: LoggingLevel | None = None
        self._declared = ClientCapabilities()
        self.deprecations = Deprecations()
        #: Open subscriptions/listen streams by request id (see :meth:`listen`).
        self._listens: dict[RequestId, ListenStream] = {}
        self._output_checks = OutputChecks()

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        """Connect, and find the server's era (``server/discover``, else ``initialize``).

        Raises:
            LocalProtocolError: an unusable URL, or the client is already connected.
            TransportError: the transport could not connect.
            RPCError: the server refused ``initialize``.
            RemoteProtocolError: the server chose an unsupported protocol version, or
                (``era="2026-07-28"``) does not speak the stateless era.
        """
        if self._stack is not None:
            raise LocalProtocolError("the client is already connected")
        # A new connection forgets what the last one learned; the era found stays a hint.
        self._modern = self._init = None
        self._output_checks = OutputChecks()  # (the tools of the last server it knew)
        if self.cache is not None:
            self.cache.clear()
        # fast_acquire: a free slot is taken without a trip through the event loop.
        self._limiter = anyio.Semaphore(self._max_concurrent, fast_acquire=True)
        target, bound = self._transport, self.timeout
        candidates = candidates_for(target, bound, self._url_options)
        for index, candidate in enumerate(candidates):
            stack = contextlib.AsyncExitStack()
            await stack.__aenter__()
            self._endpoint = None  # (the last connection's, if any, is over)
            try:
                await self._open(stack, candidate)
                await self._start()
            except MessageNotDelivered as exc:
                await close_stack(stack)
                if index + 1 < len(candidates) and falls_back_to_sse(exc):
                    logger.info("%s; trying the HTTP+SSE transport of 2024-11-05", exc)
                    continue
                raise
            except ConnectionClosedError as exc:  # gone before it answered: say why
                why = await exit_reason(self._endpoint.channel if self._endpoint else None)
                await close_stack(stack)
                if why is None:
                    raise
                raise ConnectionClosedError(f"{exc}: {why}") from exc
            except BaseException:
                await close_stack(stack)
                raise
            self._stack, self._owner = stack, anyio.get_current_task().id
            break
        return self

    async def _open(self, stack: contextlib.AsyncExitStack, transport: Target) -> None:
        # Callbacks run in a task of the connection's, entered after it, closed after it.
        self._callbacks = runner = CallbackRunner(self.handlers.handle_notification)
        stack.callback(self._close_callbacks, runner)
        channel = await open_channel(stack, transport)
        self._endpoint = Endpoint(
            channel,
            on_request=self._on_request,
            on_notification=self._on_notification,
            connection=Connection(limits=self._limits, tolerant=self.tolerant),
        )
        await stack.enter_async_context(self._endpoint)
        self._endpoint.start_soon(runner.run)

    def _close_callbacks(self, runner: CallbackRunner) -> None:
        runner.close()
        if self._callbacks is runner:
            self._callbacks = None

    async def _start(self) -> None:
        if self._era_choice != "handshake" and self.era != "handshake":
            timeout = PROBE_TIMEOUT if self.timeout is None else min(self.timeout, PROBE_TIMEOUT)
            found = await discover(self._probe_once, self._meta, timeout)
            if isinstance(found, ModernServer):
                self._modern, self.era = found, found.version
                self._declared = capabilities_for(found.version, self.capabilities)
                return
            if self._era_choice != "auto":
                raise RemoteProtocolError(f"the server does not speak {self._era_choice}: {found}")
            logger.info("%s; using initialize", found)
        self.era = "handshake"
        await self._initialize()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection (for stdio: the server is shut down and reaped).

        Raises:
            LocalProtocolError: called from a task other than the one that connected; the
                connection stays open (its task groups can only be left from that task).
        """
        if self._stack is not None and anyio.get_current_task().id != self._owner:
            raise LocalProtocolError("close the client from the task that connected it")
        stack, self._stack = self._stack, None
        if stack is not None:
            await close_stack(stack)

    def _tool_definitions(self) -> dict[str, Tool] | None:
        channel = None if self._endpoint is None else self._endpoint.channel
        known = getattr(channel, "tool_definitions", None)
        return known if isinstance(known, dict) else None

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
        """Send any request and decode its result into ``result_type``. On 2026-07-28
        the request carries the era's ``_meta``, input-required results are fulfilled and
        retried, and cacheable results come from the cache while fresh.

        Raises:
            RPCError: the server answered with an error.
            RequestTimeoutError: no answer in time (the request was cancelled), or no
                request slot (``max_concurrent_requests``) came free in time.
            RemoteProtocolError: the answer did not match ``result_type``, or the server
                broke the multi round-trip rules.
            ConnectionClosedError: the connection ended.
        """
        if self._endpoint is None or self._limiter is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        if self._endpoint.closed:  # (before a cached 2026 result could answer)
            raise await self._closed_error()
        started = time.monotonic()  # (cheaper than the loop's clock on every request)
        keep: Callable[[], None] | None = None
        if self._modern is not None:
            raw, keep = await self._modern_request(
                method, params, timeout, max_timeout, on_progress
            )
        else:
            generation = self._generation
            try:
                raw = await self._request_once(method, params, timeout, max_timeout, on_progress)
            except SessionExpiredError:
                if method == "initialize":
                    raise
                await self._renew_session(generation)
                raw = await self._request_once(method, params, timeout, max_timeout, on_progress)
        callbacks = self._callbacks
        if callbacks is not None and callbacks.pending:
            # Notifications sent before the answer reach their callbacks first, within the
            # call's absolute bound (a slow callback or a flood of them does not stretch it).
            hard = self.max_timeout if isinstance(max_timeout, msgspec.UnsetType) else max_timeout
            left = None if hard is None else max(hard - (time.monotonic() - started), 0)
            with anyio.move_on_after(left):
                await callbacks.caught_up()
        result = decode_result(raw, result_type, method, tolerant=self.tolerant)
        if keep is not None:
            keep()  # only a result that decoded is cached
        return result
