"""Drive a sans-I/O :class:`~mcpkit.protocol.Connection` over a :class:`MessageChannel`.

The endpoint is the only place where mcpkit's JSON-RPC engine meets concurrency:

* one receive loop reads messages in order and never runs user code that can block it
  (except notification callbacks, which must be quick);
* each inbound request runs in its own task inside a cancel scope, so
  ``notifications/cancelled`` can stop it; a per-connection cap bounds how many run at once
  (a transport that waits for the answer anyway may run it in its own task instead:
  ``answer_inline``, or ``dispatch(..., inline=True)``, see ``_inline.py``); receiving,
  dispatching and running handlers live in ``_inbound.py``;
* each outbound request waits on an event; its timeout is a cancel scope whose deadline
  progress notifications may push back, but never past the absolute maximum
  (``_outbound.py``);
* closing fails every pending call promptly with :class:`ConnectionClosedError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.abc
from msgspec import UNSET

from ..exceptions import ConnectionClosedError
from ..protocol import DEFAULT_LIMITS, EMPTY_TABLE, Connection, Limits
from ..types import RequestId
from ._calls import NotificationHandler, RequestGate, RequestHandler, _Waiter
from ._channel import MessageChannel
from ._farewell import Farewell
from ._flag import Flag
from ._inbound import Inbound
from ._inline import InlineHandler
from ._lograte import PeerLogLimiter
from ._outbound import Outbound
from ._route import _CURRENT, ReplyRoute

__all__ = ["Endpoint"]

logger = logging.getLogger("mcpkit.aio")


_FIND: Final[Any] = object()
#: How long the end of a connection waits for its cancelled handlers to stop.
_STOP_GRACE: Final = 3.0


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or ``None`` under trio."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Endpoint(Inbound, Outbound, Farewell):
    """One side of a JSON-RPC connection, running over a channel.

    Use as an async context manager (entered and exited in the same task), or call
    :meth:`run` to serve until the peer closes::

        async with Endpoint(channel, on_request=handle) as endpoint:
            result = await endpoint.request("ping")

    Args:
        channel: the message channel to run over. The endpoint closes it when done.
        on_request: called for each peer request, in its own task; returns the result
            object or raises :class:`RPCError`. ``None`` answers every request -32601.
        on_notification: called for each peer notification (other than progress and
            cancellation, handled here), in the receive loop: keep it quick.
        gate: consulted in the receive loop before each request is dispatched
            (see :data:`RequestGate`).
        limits: bounds on incoming messages.
        max_in_flight: most peer requests handled at once; more are answered with
            ``SERVER_BUSY`` (-32000) instead of queueing without bound.
        drain_timeout: seconds :meth:`run` lets unfinished requests complete after the
            peer stopped sending, before cancelling them.
        connection: a pre-configured connection (tests); one is created otherwise.
        autoreceive: whether entering the endpoint starts the loop reading the channel.
            ``False`` for transports that read messages themselves and hand them to
            :meth:`dispatch` (Streamable HTTP).
        on_drain: called once when the peer stopped sending, before unfinished requests
            get their ``drain_timeout`` (to end long-lived ones gracefully).
        peer_log: the bound on warnings about the peer's mistakes, to share one between
            connections (a client opening many would get a new burst with each).

    Attributes:
        progress_rate: most progress notifications per second sent for one peer request,
            after a burst of :data:`~mcpkit.aio.BURST` (``None``: no bound). Progress past
            the bound is dropped, never queued; one reaching its ``total`` is always sent.
            "Both parties SHOULD implement rate limiting" (basic/utilities/progress.mdx):
            a handler reporting progress in a tight loop would otherwise flood the peer.
    """

    # Class-level defaults (an endpoint is made per stateless HTTP POST: what its
    # constructor need not set, it does not; tables it may never fill are made when first
    # written, EMPTY_TABLE until then: set by the constructor, see Connection.__init__).
    _loop: asyncio.AbstractEventLoop | None = None
    _task_group: anyio.abc.TaskGroup | None = None
    _receiving: anyio.CancelScope | None = None  # (see Inbound._receive_loop)
    _drain_timeout = 2.0
    progress_rate: float | None = 50.0
    _waiters: dict[RequestId, _Waiter]
    _routes: dict[RequestId, ReplyRoute]  # of native handlers with a route

    def __init__(
        self,
        channel: MessageChannel,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        gate: RequestGate | None = None,
        limits: Limits = DEFAULT_LIMITS,
        max_in_flight: int = 100,
        drain_timeout: float = 2.0,
        connection: Connection | None = None,
        autoreceive: bool = True,
        on_drain: Callable[[], None] | None = None,
        peer_log: PeerLogLimiter | None = None,
    ) -> None:
        self._setup(
            channel,
            on_request,
            on_notification,
            gate,
            connection or Connection(limits),
            max_in_flight,
            autoreceive,
            on_drain,
            peer_log if peer_log is not None else PeerLogLimiter(),
        )
        self._drain_timeout = drain_timeout

    def _setup(
        self,
        channel: MessageChannel,
        on_request: RequestHandler | None,
        on_notification: NotificationHandler | None,
        gate: RequestGate | None,
        connection: Connection,
        max_in_flight: int,
        autoreceive: bool,
        on_drain: Callable[[], None] | None,
        peer_log: PeerLogLimiter,
    ) -> None:
        """What the constructor sets (see :meth:`for_session`)."""
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.channel = channel
        self.connection = connection
        self._on_request = on_request
        self._on_notification = on_notification
        self._gate = gate
        self._on_drain = on_drain
        self._max_in_flight = max_in_flight
        self._autoreceive = autoreceive
        self._peer_log = peer_log  # the peer's mistakes, logged within a bound
        # Read per request (an instance attribute reads faster than a class-level one):
        self._soon = ()  # type: ignore[assignment]  # (SoonQueue's, a deque once used)
        self._routes = self._waiters = EMPTY_TABLE
        self._closed = Flag()  # set when the connection has ended (a Flag: no event made
        # unless someone waits)
        self._idle: anyio.Event | None = None  # set when the last handler finishes
        # A handler in flight: its cancel scope (trio), its asyncio task, or the transport's
        # task it runs in (see dispatch's ``inline``).
        self._handlers: dict[RequestId, anyio.CancelScope | asyncio.Task[None] | InlineHandler] = {}

    @classmethod
    def for_session(
        cls,
        channel: MessageChannel,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        gate: RequestGate,
        limits: Limits,
        max_in_flight: int,
        autoreceive: bool,
        on_drain: Callable[[], None] | None,
        peer_log: PeerLogLimiter,
    ) -> Endpoint:
        """An endpoint as the constructor makes it with these arguments, given by position
        (a server's session: one is made per stateless HTTP POST, and a class called with
        keywords costs CPython 3.11 a dict built and unpacked).

        Raises:
            ValueError: ``max_in_flight`` is below 1.
        """
        endpoint = object.__new__(cls)
        endpoint._setup(
            channel,
            on_request,
            on_notification,
            gate,
            Connection(limits),
            max_in_flight,
            autoreceive,
            on_drain,
            peer_log,
        )
        return endpoint

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Endpoint:
        self._loop = _running_asyncio_loop()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        if self._autoreceive:
            self._task_group.start_soon(self._receive_loop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(exc_type, exc, tb)
        finally:
            self._fail_pending()
            with anyio.CancelScope(shield=True):
                await self._cancel_native_handlers()
                await self._close_channel()

    def attach(
        self, task_group: anyio.abc.TaskGroup, loop: asyncio.AbstractEventLoop | None = _FIND
    ) -> None:
        """Serve without a receive loop or a task group of its own: handlers run in
        ``task_group`` (owned by the caller, e.g. an HTTP app shared by many sessions) and
        messages arrive through :meth:`dispatch`. End with :meth:`detach`. Must be called
        from a task running on the event loop that will serve; ``loop`` is that loop
        (``None`` under trio), if the caller knows it (finding it is a system call).
        """
        self._loop = _running_asyncio_loop() if loop is _FIND else loop
        self._task_group = task_group

    async def detach(self) -> None:
        """End an :meth:`attach`-ed endpoint: pending calls fail, handlers are cancelled
        (and awaited on asyncio), the channel is closed."""
        self._fail_pending()
        for handler in list(self._handlers.values()):
            if isinstance(handler, anyio.CancelScope):
                handler.cancel()
        with anyio.CancelScope(shield=True):
            await self._cancel_native_handlers()
            await self._close_channel()
        self._task_group = None

    def detach_idle(self) -> bool:
        """End an :meth:`attach`-ed endpoint at once if nothing runs on it (no handler in
        flight, no call of ours pending), without closing its channel: the cheap end of a
        session that lived for one fully answered HTTP request. Returns whether it ended;
        if not, use :meth:`detach`."""
        if self._handlers or self._waiters:  # (not idle; inlined: runs per stateless POST)
            return False
        self._closed.set()
        self._task_group = None
        # The callbacks are usually bound methods of the endpoint's owner, which holds the
        # endpoint: let go of them, so the whole connection is freed at once by reference
        # counting instead of waiting for the cyclic garbage collector.
        self._on_request = self._on_notification = self._gate = self._on_drain = None
        return True

    async def run(self) -> None:
        """Serve until the peer closes the channel, then close it.

        Requests still being handled when the peer stops sending get up to
        ``drain_timeout`` seconds to finish and answer (stdio peers commonly close stdin
        right after writing their last request); then they are cancelled.
        """
        self._loop = _running_asyncio_loop()
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                await self._receive_loop()
                if self._on_drain is not None:
                    self._on_drain()  # e.g. end long-lived requests gracefully
                if self._handlers:
                    self._idle = anyio.Event()
                    with anyio.move_on_after(self._drain_timeout):
                        await self._idle.wait()
                tg.cancel_scope.cancel()
        finally:
            self._fail_pending()
            with anyio.CancelScope(shield=True):
                await self._cancel_native_handlers()
                await self._close_channel()

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> bool:
        """Run ``fn(*args)`` in the background, in the connection's task group (cancelled
        when :meth:`run` ends; an :meth:`attach`-ed endpoint uses the caller's group, so
        the task must end itself when the connection does). Returns ``False``, running
        nothing, when the connection is not being served."""
        if self._task_group is None or self.closed:
            return False
        self._task_group.start_soon(fn, *args)
        return True

    async def _cancel_native_handlers(self) -> None:
        tasks = [h for h in self._handlers.values() if isinstance(h, asyncio.Task)]
        inline = [h for h in self._handlers.values() if isinstance(h, InlineHandler)]
        for task in tasks:
            task.cancel()
        for handler in inline:
            handler.cancel()
        # Bounded: a handler that ignores its cancellation must not hold the connection's
        # end (and with it a session's release, or a server's exit) for ever. It is left
        # to finish on its own; its answer, if any, goes nowhere.
        with anyio.move_on_after(_STOP_GRACE) as waiting:
            if tasks:
                await asyncio.wait(tasks)
            for handler in inline:
                await handler.wait()
        if waiting.cancelled_caught:
            logger.warning(
                "%d request handler(s) did not stop within %g s of their cancellation; "
                "left to finish on their own",
                sum(not task.done() for task in tasks) + len(inline),
                _STOP_GRACE,
            )

    @property
    def closed(self) -> bool:
        """Whether the connection has ended."""
        return self._closed.is_set()

    @property
    def idle(self) -> bool:
        """Whether nothing runs on the connection: no handler of the peer's requests in
        flight and no call of ours awaiting its response (for metrics and leak checks)."""
        return not (self._handlers or self._waiters)

    async def wait_closed(self) -> None:
        """Wait until the peer closes the connection (or it breaks)."""
        await self._closed.wait()

    async def _close_channel(self) -> None:
        try:
            await self.channel.aclose()
        except Exception:  # closing a broken channel must not mask the real outcome
            logger.debug("error while closing the channel", exc_info=True)

    def _fail_pending(self) -> None:
        self._closed.set()
        for rid, waiter in list(self._waiters.items()):
            if not waiter.done:
                self.connection.forget(rid)
                waiter.finish(error=ConnectionClosedError("the connection closed"))

    # -- sending ------------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        """Send encoded bytes: through the route of the request being handled in this task
        (see :class:`ReplyRoute`), else over the channel. A broken channel ends the
        connection.

        Raises:
            ConnectionClosedError: the connection had already ended.
            MessageNotDelivered: the transport could not deliver this one message.
        """
        await self._send(data, _CURRENT.get())

    async def _send(self, data: bytes, route: ReplyRoute | None) -> None:
        try:
            if route is not None:
                await route.send(data)
            else:
                await self.channel.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            if route is None and self._receiving is not None and not self.closed:
                # Nothing can reach the peer any more (it closed our output, say): stop
                # reading too, so the connection ends instead of running requests whose
                # answers go nowhere.
                logger.warning("the connection's output is gone (%r): ending it", exc)
                self._receiving.cancel()
            self._fail_pending()
            raise ConnectionClosedError("the connection closed") from exc

    async def notify(self, method: str, params: Any = UNSET, *, related: bool = True) -> None:
        """Send a notification: with the messages of the request being handled in this
        task (see :class:`ReplyRoute`), or, when ``related`` is false, as a message of the
        connection that belongs to no request (for example a change notification sent to
        every client while one client's request is being handled).

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
            ConnectionClosedError: the connection has ended.
        """
        if self.closed:
            raise ConnectionClosedError("the connection closed")
        data = self.connection.send_notification(method, params)
        await self._send(data, _CURRENT.get() if related else None)
