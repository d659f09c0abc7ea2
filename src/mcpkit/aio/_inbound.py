"""The endpoint's side of the peer's messages: the receive loop, acting on each decoded
event, and running each inbound request's handler (in its own task, or inline in the
transport's) until its answer is delivered (a mixin of :class:`~mcpkit.aio.Endpoint`,
inherited, not wrapped, so the per-message path gains no call).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.lowlevel
from msgspec import UNSET, Raw

from ..exceptions import (
    ConnectionClosedError,
    LocalProtocolError,
    RemoteProtocolError,
    RPCError,
)
from ..protocol import (
    EMPTY_TABLE,
    BatchReceived,
    CancelReceived,
    ErrorReceived,
    Event,
    FrameTooLarge,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseInvalid,
    ResponseReceived,
)
from ..types import ErrorCode, RequestId
from ..types._echo import peer_text
from ._calls import (
    PROCEED,
    InboundRequest,
    NotificationHandler,
    Refused,
    RequestGate,
    RequestHandler,
)
from ._channel import DeliveryFailed, MessageChannel
from ._inline import InlineHandler, InlineRunner
from ._lograte import PeerLogLimiter
from ._route import _CURRENT, ReplyRoute
from ._soon import SoonQueue

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Inbound"]

logger = logging.getLogger("mcpkit.aio")
_INTERNAL = ErrorCode.INTERNAL_ERROR

#: Scheduler turns given to started handlers before a request is refused as busy: a
#: quick handler takes one on asyncio, a few on trio (its task's start, the handler, the
#: write of its answer). Bounded, so a connection truly busy answers at once.
_TURNS_BEFORE_BUSY = 3


class Inbound(InlineRunner, SoonQueue):
    """Messages from the peer: requests, notifications, answers to our requests."""

    if TYPE_CHECKING:
        channel: MessageChannel
        _on_request: RequestHandler | None
        _on_notification: NotificationHandler | None
        _gate: RequestGate | None
        _max_in_flight: int
        _idle: anyio.Event | None
        _handlers: dict[RequestId, anyio.CancelScope | asyncio.Task[None] | InlineHandler]
        _routes: dict[RequestId, ReplyRoute]
        _farewells: dict[RequestId, bytes | None]
        _loop: asyncio.AbstractEventLoop | None
        _receiving: anyio.CancelScope | None
        _peer_log: PeerLogLimiter

        def _fail_pending(self) -> None: ...
        def _parting(self, rid: RequestId) -> bytes | None: ...

        def _settle(
            self, rid: RequestId, *, result: Raw | None = None, error: BaseException | None = None
        ) -> None: ...

        def _on_progress(self, event: ProgressReceived) -> None: ...

    async def _receive_loop(self) -> None:
        # (_receiving: cancelled when our side of the channel breaks, see Endpoint._send)
        try:
            with anyio.CancelScope() as self._receiving:
                while True:
                    try:
                        frame = await self.channel.receive()
                    except (
                        anyio.EndOfStream,
                        anyio.ClosedResourceError,
                        anyio.BrokenResourceError,
                    ):
                        break
                    if isinstance(frame, DeliveryFailed):
                        self.connection.forget(frame.request_id)
                        self._settle(frame.request_id, error=frame.error)
                        continue
                    if isinstance(frame, FrameTooLarge):
                        event = self.connection.receive_oversized(frame.limit, frame.head)
                    else:
                        event = self.connection.receive_message(frame)
                    try:
                        await self.dispatch(event)
                    except ConnectionClosedError:
                        break  # our side broke (the peer stopped reading)
        finally:
            self._peer_log.flush(logger)
            self._fail_pending()

    async def dispatch(
        self,
        event: Event,
        route: ReplyRoute | None = None,
        *,
        inline: bool = False,
        on_suspend: Callable[[], None] | None = None,
    ) -> int:
        """Act on one event decoded by :attr:`connection` (the receive loop does this for
        every message from the channel; a transport that reads messages itself, such as
        Streamable HTTP, calls it directly).

        Everything the event's requests produce goes through ``route`` when one is given
        (see :class:`ReplyRoute`), otherwise over the channel. Returns how many times
        ``route.finish`` will be called because of this event (some calls may already have
        happened): 0 when nothing answers it (notifications, responses).

        ``inline`` (asyncio, a single request): the handler runs in the calling task, and
        this returns once it has answered; ``on_suspend`` is called the first time it has
        to wait. It is still cancelled by the peer's ``notifications/cancelled`` and when
        the connection ends (the calling task then carries on), and counts as in flight.

        Raises:
            ConnectionClosedError: a reply could not be sent because the connection ended.
        """
        if isinstance(event, RequestReceived):
            if inline and self._loop is not None:
                data = await self.answer_inline(event, route, on_suspend)
                if data is not None:
                    await self._finish(route, data)
                return 1
            if len(self._handlers) >= self._max_in_flight:
                await self._make_room()
            admitted = self._start_handler(event, route)
            if admitted is not None:
                await self._finish(route, admitted.data)  # type: ignore[union-attr]
            return 1
        if isinstance(event, BatchReceived):
            requests = 0
            for inner in event.events:
                requests += await self.dispatch(inner, route)
            if event.reply is not None:
                await self._finish(route, event.reply)
                return requests + 1
            return requests
        if isinstance(event, MessageRejected):
            self._peer_log.rejected(logger, event)
            if event.reply is None:
                return 0
            if route is None:  # over the channel: queued, never awaited here (see send_soon)
                self.send_soon(event.reply, None, "an error answer")
            else:
                await route.finish(event.reply)
            return 1
        self._dispatch_other(event)
        if isinstance(event, NotificationReceived) and self._on_notification is not None:
            try:
                await self._on_notification(event.method, event.params)
            except Exception:
                logger.exception("notification handler for %r failed", event.method)
        return 0

    async def _make_room(self) -> None:
        # The handlers started from the same read may all be quick ones that have not had
        # a turn yet: let them run before calling the connection busy (300 quick requests
        # in one write got 200 refusals, no handler having run).
        for _ in range(_TURNS_BEFORE_BUSY):
            await anyio.lowlevel.checkpoint()

    def _dispatch_other(self, event: Event) -> None:
        if isinstance(event, ResponseReceived):
            self._settle(event.request_id, result=event.result)
        elif isinstance(event, ErrorReceived):
            self._settle(event.request_id, error=RPCError.from_error(event.error))
        elif isinstance(event, ResponseInvalid):
            error = RemoteProtocolError(f"invalid response from peer: {event.reason}")
            self._settle(event.request_id, error=error)
        elif isinstance(event, ProgressReceived):
            self._on_progress(event)
        elif isinstance(event, CancelReceived):
            rid = event.request_id
            handler = self._handlers.get(rid)
            if handler is not None:
                logger.debug("peer cancelled request %r: %s", rid, event.reason)
                handler.cancel()
                if isinstance(handler, asyncio.Task):
                    # A task cancelled before its first step never runs its own cleanup.
                    handler.add_done_callback(lambda task: self._reap(rid, task))

    def _start_handler(
        self, event: RequestReceived, route: ReplyRoute | None, inline: bool = False
    ) -> InboundRequest | Refused | None:
        """Start the request's handler, or decide its answer at once (gate, no handler,
        busy). Returns the request when it is to run inline, in the calling task, and
        the answer (for the caller to deliver) when there is no handler to run."""
        # self is an Endpoint: the only class this mixin is part of.
        request = InboundRequest(
            event.request_id,
            event.method,
            event.params,
            event.progress_token,
            self,  # type: ignore[arg-type]
            route,
        )
        if event.request_id in self._handlers:
            # The connection retired this id when its answer was encoded, but the answer is
            # still being written: for the peer the id is still in flight, so reusing it is
            # refused like any duplicate (and the first handler's bookkeeping stays its own).
            reason = (
                f"Invalid Request: request id {peer_text(event.request_id)} is already in flight"
            )
            return self._refuse(request, ErrorCode.INVALID_REQUEST, reason)
        gate = self._gate  # (read, then called: CPython 3.11 specializes no self._gate())
        if gate is not None:
            try:
                outcome = gate(request)
            except RPCError as exc:
                return self._refuse(request, exc.code, exc.message, exc.data)
            if outcome is not PROCEED:
                return Refused(self._encode_result(request, outcome))
        if self._on_request is None:
            reason = f"Method not found: {peer_text(event.method)}"
            return self._refuse(request, ErrorCode.METHOD_NOT_FOUND, reason)
        if len(self._handlers) >= self._max_in_flight:
            reason = "Too many requests in flight; retry later"
            busy = {"maxInFlight": self._max_in_flight}
            return self._refuse(request, ErrorCode.SERVER_BUSY, reason, busy)
        if inline and self._loop is not None:
            return request
        if route is not None:  # for _reap and answer_in_flight (inline: the handler's own)
            if self._routes is EMPTY_TABLE:
                self._routes = {}
            self._routes[request.id] = route
        if self._loop is not None:
            # On asyncio a plain task costs a fraction of an anyio task plus cancel scope,
            # and this is paid per request. It is still structured: tracked here, cancelled
            # by a peer's notifications/cancelled, and cancelled and awaited on close.
            self._handlers[request.id] = self._loop.create_task(self._run_handler(request))
            return None
        assert self._task_group is not None
        scope = anyio.CancelScope()
        self._handlers[request.id] = scope
        self._task_group.start_soon(self._run_handler, request, scope)
        return None

    async def _run_handler(
        self, request: InboundRequest, scope: anyio.CancelScope | None = None
    ) -> None:
        """Run a request's handler in a task of its own and deliver its one answer: on
        asyncio a plain task, on trio in ``scope``, the peer's cancel (the inline path
        is :meth:`answer_inline`)."""
        data: bytes | None = None
        rid = request.id
        _CURRENT.set(request.route)  # this task's own context: messages follow the request
        try:
            on_request = self._on_request  # (read, then called: see _start_handler)
            assert on_request is not None
            if scope is not None:
                with scope:
                    try:
                        result = await on_request(request)
                    except (Exception, SystemExit) as exc:
                        data = self._failed(request, exc)
                    else:
                        data = self._encode_result(request, result)
                if scope.cancelled_caught:
                    # Cancelled by the peer: no response is sent (basic/utilities/
                    # cancellation), though a batch it belonged to may now be complete.
                    data = self._parting(rid)
            else:
                try:
                    try:
                        result = await on_request(request)
                    except (Exception, SystemExit) as exc:
                        data = self._failed(request, exc)
                    else:
                        data = self._encode_result(request, result)
                except asyncio.CancelledError:
                    data = self._cancelled(request)
            # The answer (written here, not in a coroutine of its own: one coroutine less
            # on every request's path).
            request.answered = True
            try:
                route = request.route
                if self._soon:  # notify_soon() messages (log records) go before the answer
                    await self._flush_soon(route)
                if route is not None:
                    await route.finish(data)
                elif data is not None:
                    await self._send(data, None)
            except ConnectionClosedError:
                logger.debug("the answer to %r was not sent: the connection closed", request.method)
        finally:
            self._handler_done(rid)

    def _failed(self, request: InboundRequest, exc: BaseException | None) -> bytes | None:
        """The error answer to a handler that raised ``exc`` (``None``: a stray
        cancellation): its RPC error, or an internal error; ``None`` when the request was
        already answered (exactly one response per request: a second is logged, never sent).
        """
        rid = request.id
        if self._farewells and rid in self._farewells:  # (answered: see answer_in_flight)
            return self._farewells.pop(rid)
        try:
            if isinstance(exc, RPCError):
                return self.connection.send_error(rid, exc.code, exc.message, exc.data)
            if isinstance(exc, SystemExit):
                # sys.exit() in a handler (argparse does it on a bad option): the request's
                # failure, not the server's end; every other client is still served.
                logger.error("handler for %r called sys.exit(%r)", request.method, exc.code)
            elif exc is not None:
                logger.error("handler for %r failed", request.method, exc_info=exc)
            return self.connection.send_error(rid, _INTERNAL, "Internal error")
        except LocalProtocolError:
            logger.exception("request %r was already answered", rid)
            return None

    async def _finish(self, route: ReplyRoute | None, data: bytes | None) -> None:
        """Deliver what answers one request: through its route, or over the channel."""
        if route is not None:
            await route.finish(data)
        elif data is not None:
            await self._send(data, None)

    def _reap(self, rid: RequestId, task: asyncio.Task[None]) -> None:
        if self._handlers.get(rid) is task:
            data = self._parting(rid)
            route = self._routes.get(rid)
            self._handler_done(rid)
            if (data is not None or route is not None) and self._task_group is not None:
                self._task_group.start_soon(self._finish_quietly, route, data)

    async def _finish_quietly(self, route: ReplyRoute | None, data: bytes | None) -> None:
        try:
            await self._finish(route, data)
        except ConnectionClosedError:
            pass

    def _handler_done(self, rid: RequestId) -> None:
        # Only now, after the answer went out, does the request stop counting as in flight
        # (so a draining shutdown never cuts off a response being written).
        self._handlers.pop(rid, None)
        if self._routes:
            self._routes.pop(rid, None)
        if self._idle is not None and not self._handlers:
            self._idle.set()

    def _encode_result(self, request: InboundRequest, result: Any) -> bytes | None:
        """The answer carrying a handler's result; ``None`` when the request was already
        answered (a second answer is logged, never sent)."""
        rid = request.id
        if self._farewells and rid in self._farewells:  # (answered: see answer_in_flight)
            return self._farewells.pop(rid)
        try:
            try:
                return self.connection.send_result(rid, result)
            except LocalProtocolError as exc:
                # Never emit invalid JSON: the request still gets exactly one (error) response.
                logger.error("result of %r could not be sent: %s", request.method, exc)
                return self.connection.send_error(
                    rid, _INTERNAL, "Internal error: the result could not be encoded"
                )
        except LocalProtocolError:
            logger.exception("request %r was already answered", rid)
            return None

    def _refuse(
        self, request: InboundRequest, code: int, message: str, data: Any = UNSET
    ) -> Refused:
        return Refused(self.connection.send_error(request.id, code, message, data))
