"""Running a request's handler in the task that received the request (asyncio only).

A plain asyncio task per request costs a task, two loop callbacks and a wake-up of the
waiting transport, which is a large share of an instant handler's whole answer over HTTP.
A transport that waits for the answer anyway (Streamable HTTP) can run the handler in its
own task instead: :meth:`InlineRunner.answer_inline` admits the request, awaits its
handler and hands the encoded answer back for the caller to write. When the caller needs
to know of the handler's first wait (to open a stream for what follows), the handler's
first step is taken at once, the caller told if it has to wait, and the rest awaited in
the same task with :func:`resume`. The handler sees one task from start to end, as
anyio's cancel scopes and locks require. Anything but the plain answer (a log record
queued before it, a refusal with no answer of its own, an answer due on a stream the wait
opened) goes through the request's route. ``dispatch(..., inline=True)`` is this path
with the answer then given to the route.
"""

from __future__ import annotations

import asyncio
import logging
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..exceptions import ConnectionClosedError
from ..protocol import Event, RequestReceived
from ._calls import InboundRequest, cancelled_by_someone
from ._route import _CURRENT, ReplyRoute

if TYPE_CHECKING:
    from collections import deque

    from ..protocol import Connection
    from ..types import RequestId
    from ._calls import Refused, RequestHandler

__all__ = ["InlineHandler", "InlineRunner", "resume"]

T = TypeVar("T")

logger = logging.getLogger("mcpkit.aio")


class InlineHandler:
    """A handler running in a transport's task: what the endpoint cancels and awaits in
    place of the handler's own task."""

    # Class-level defaults and no __init__: making one (per request) runs no Python code.
    #: The task running the handler (set by answer_inline as it starts the handler).
    task: asyncio.Task[Any] | None = None
    ours = False  # the endpoint (not the task's owner) cancelled it
    waited = False  # it had to wait, and on_suspend was called
    #: Where its answer goes (for Endpoint.answer_in_flight).
    route: ReplyRoute | None = None
    done = False
    _stopped: anyio.Event | None = None  # made only if someone waits

    def cancel(self) -> None:
        """Cancel the handler (a peer's ``notifications/cancelled``, or the end of the
        connection); the task itself carries on once the handler has stopped."""
        if not self.done:
            self.ours = True
            assert self.task is not None  # (set before the handler starts)
            self.task.cancel()

    def finish(self) -> None:
        """The handler has stopped."""
        self.done = True
        if self._stopped is not None:
            self._stopped.set()

    async def wait(self) -> None:
        """Wait until the handler has stopped."""
        if not self.done:
            if self._stopped is None:
                self._stopped = anyio.Event()
            await self._stopped.wait()


@types.coroutine
def resume(
    coro: Coroutine[Any, Any, T] | Generator[Any, Any, T], pending: Any
) -> Generator[Any, Any, T]:
    """Go on awaiting ``coro``, suspended at ``pending``, in the calling task: what
    ``await coro`` would have done from there on."""
    while True:
        try:
            value = yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # cancellation included: it goes to the handler
            try:
                pending = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                pending = coro.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


@types.coroutine
def _stepped(
    awaitable: Awaitable[T], on_suspend: Callable[[], None], handler: InlineHandler
) -> Generator[Any, Any, T]:
    """Await ``awaitable`` with its first step taken at once, calling ``on_suspend`` the
    first time it has to wait (then ``handler.waited`` is set)."""
    steps = awaitable.__await__()
    try:
        pending = steps.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    try:
        on_suspend()
    except BaseException as exc:
        steps.close()
        raise _NotFollowed(exc) from None  # (the caller's failure: see answer_inline)
    handler.waited = True
    return (yield from resume(steps, pending))


class _NotFollowed(BaseException):
    """``on_suspend`` failed: carried past the handler's own error mapping (it is not the
    handler's failure, and no answer is made for it) to the caller, as raised."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class InlineRunner:
    """Running a request's handler inline (a mixin of :class:`~mcpkit.aio.Endpoint`,
    through its ``Inbound`` part; see the module)."""

    if TYPE_CHECKING:
        _handlers: dict[RequestId, anyio.CancelScope | asyncio.Task[None] | InlineHandler]
        _loop: asyncio.AbstractEventLoop | None
        _max_in_flight: int
        _on_request: RequestHandler | None
        _soon: deque[tuple[bytes, ReplyRoute | None]]
        connection: Connection

        async def dispatch(self, event: Event, route: ReplyRoute | None = None) -> int: ...
        async def _finish(self, route: ReplyRoute | None, data: bytes | None) -> None: ...
        async def _make_room(self) -> None: ...
        def _start_handler(
            self, event: RequestReceived, route: ReplyRoute | None, inline: bool = False
        ) -> InboundRequest | Refused | None: ...
        def _failed(self, request: InboundRequest, exc: BaseException | None) -> bytes | None: ...
        def _parting(self, rid: RequestId) -> bytes | None: ...
        def _encode_result(self, request: InboundRequest, result: Any) -> bytes | None: ...
        def _handler_done(self, rid: RequestId) -> None: ...
        async def _flush_soon(self, route: ReplyRoute | None) -> None: ...

    async def answer_inline(
        self,
        event: RequestReceived,
        route: ReplyRoute | None,
        on_suspend: Callable[[], None] | None = None,
    ) -> bytes | None:
        """Dispatch one request whose handler runs in the calling task (asyncio), and
        return its answer for the caller to deliver when the answer is all the request
        produced: the common case, on one layer instead of four. ``None``: whatever
        answers it went through ``route`` (over the channel when ``route`` is ``None``;
        see :meth:`dispatch`), because a queued notification had to go first, the
        request was refused with no answer of its own, the peer cancelled it, or the
        handler waited and ``on_suspend`` was given; or nothing did (the connection ended and
        cancelled its handler). ``on_suspend`` is called the first time the handler has
        to wait (as for :meth:`dispatch`). On trio the handler runs in a task of its own
        (``dispatch(event, route)``).

        Raises:
            ConnectionClosedError: the connection ended before an answer could be sent
                through ``route``.
        """
        if self._loop is None:
            await self.dispatch(event, route)
            return None
        if len(self._handlers) >= self._max_in_flight:
            await self._make_room()
        request = self._start_handler(event, route, True)
        if type(request) is not InboundRequest:
            data = request.data  # type: ignore[union-attr]
            if data is None:
                await self._finish(route, None)
            return data
        rid = request.id
        handler = self._handlers[rid] = InlineHandler()
        handler.task = asyncio.current_task(self._loop)  # (the loop: no getpid)
        handler.route = route
        token = _CURRENT.set(route)
        on_request = self._on_request  # (read, then called: see _start_handler)
        assert on_request is not None
        try:
            try:
                if on_suspend is None:
                    result = await on_request(request)
                else:
                    result = await _stepped(on_request(request), on_suspend, handler)
            except (Exception, SystemExit) as exc:
                data = self._failed(request, exc)
            except asyncio.CancelledError:
                data = self._cancelled(request)
            else:
                data = self._encode_result(request, result)
            request.answered = True
            if data is not None and not self._soon and not handler.waited:
                return data
            try:
                if self._soon:  # notify_soon() messages (log records) go before the answer
                    await self._flush_soon(route)
                await self._finish(route, data)
            except ConnectionClosedError:
                logger.debug("the answer to %r was not sent: the connection closed", request.method)
            return None
        except asyncio.CancelledError:
            self._stopped_by_end(handler)
            return None
        except _NotFollowed as failed:
            raise failed.error from None
        finally:
            self._handler_done(rid)
            handler.finish()
            _CURRENT.reset(token)

    @staticmethod
    def _stopped_by_end(handler: InlineHandler) -> None:
        """Called in the ``except CancelledError`` around an inline handler: the
        connection's end cancelled it, and the calling task carries on.

        Raises:
            asyncio.CancelledError: the calling task itself is being cancelled.
        """
        if not handler.ours:
            raise  # the calling task itself is being cancelled
        uncancel = getattr(handler.task, "uncancel", None)
        if uncancel is not None and uncancel() > 0:
            raise  # (cancelled by someone else as well)

    def _cancelled(self, request: InboundRequest) -> bytes | None:
        """The answer of an asyncio handler that raised CancelledError (called in its
        ``except``): ``None`` or a batch's parting answer when the peer cancelled it.

        Raises:
            asyncio.CancelledError: the task itself is being cancelled (re-raised).
        """
        rid = request.id
        if self.connection.is_in_flight(rid):
            if cancelled_by_someone():
                raise  # not the peer's cancellation: the endpoint is shutting down
            # Nobody cancelled this task: the handler let through the cancellation of
            # something it awaited (say, a shared task another party cancelled). Its
            # request still gets its one answer.
            logger.error("handler for %r raised a stray CancelledError", request.method)
            return self._failed(request, None)
        # Cancelled by the peer (its entry is marked): no response is sent.
        uncancel = getattr(asyncio.current_task(), "uncancel", None)
        if uncancel is not None:  # Python 3.11+: keep the cancel count honest
            uncancel()
        return self._parting(rid)
