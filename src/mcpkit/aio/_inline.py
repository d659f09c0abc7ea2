"""Running a request's handler in the task that received the request (asyncio only).

A plain asyncio task per request costs a task, two loop callbacks and a wake-up of the
waiting transport, which is a large share of an instant handler's whole answer over HTTP.
A transport that waits for the answer anyway (Streamable HTTP) can run the handler in its
own task instead: the endpoint runs the coroutine's first step at once, tells the caller
when it first has to wait (so it can open a stream for what follows), then goes on
awaiting it in the same task with :func:`resume`. The handler sees one task from start
to end, as anyio's cancel scopes and locks require.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio

from ._route import _CURRENT, ReplyRoute

if TYPE_CHECKING:
    from ..types import RequestId
    from ._calls import InboundRequest

__all__ = ["InlineHandler", "InlineRunner", "resume"]

#: What the first step of an inline handler gives when the handler has already returned.
_RETURNED: Final = object()

T = TypeVar("T")


class InlineHandler:
    """A handler running in a transport's task: what the endpoint cancels and awaits in
    place of the handler's own task."""

    # Class-level defaults and no __init__: making one (per request) runs no Python code.
    #: The task running the handler: set when it starts, or, when the endpoint steps it
    #: by hand, once it first has to wait (the lookup is a Python call on CPython 3.11,
    #: and most handlers never wait).
    task: asyncio.Task[Any] | None = None
    ours = False  # the endpoint (not the task's owner) cancelled it
    #: Where its answer goes (for Endpoint.answer_in_flight), set once it may wait.
    route: ReplyRoute | None = None
    done = False
    _stopped: anyio.Event | None = None  # made only if someone waits

    def cancel(self) -> None:
        """Cancel the handler (a peer's ``notifications/cancelled``, or the end of the
        connection); the task itself carries on once the handler has stopped."""
        if not self.done:
            self.ours = True
            task = self.task
            if task is None:
                # The handler has not waited yet, so no other task has run since it
                # started: this is its own first step, in its own task.
                self.task = task = asyncio.current_task()
                assert task is not None
            task.cancel()

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


class InlineRunner:
    """Running a request's handler inline (a mixin of :class:`~mcpkit.aio.Endpoint`,
    through its ``Inbound`` part; see the module)."""

    if TYPE_CHECKING:
        _handlers: dict[RequestId, anyio.CancelScope | asyncio.Task[None] | InlineHandler]
        _loop: asyncio.AbstractEventLoop | None

        async def _run_handler(self, request: InboundRequest, inline: bool = False) -> None: ...

    async def _run_inline(
        self, request: InboundRequest, on_suspend: Callable[[], None] | None
    ) -> None:
        handler = self._handlers[request.id] = InlineHandler()
        token = _CURRENT.set(request.route)
        try:
            coro = self._run_handler(request, True)
            if on_suspend is None:  # (await: the cheapest way, 1,100 instructions less)
                handler.task = asyncio.current_task(self._loop)  # (the loop: no getpid)
                handler.route = request.route
                await coro
            else:
                # Its first step at once: an instant handler (the common case) completes
                # in it; one that has to wait is handed on_suspend, then awaited here.
                # (coro.send(None), but a coroutine that returns None ends its iterator
                # without raising StopIteration: about 800 instructions less.)
                pending = next(coro.__await__(), _RETURNED)
                if pending is not _RETURNED:
                    handler.task = asyncio.current_task(self._loop)
                    # (Only now: an instant handler's object keeps no attribute, no dict.)
                    handler.route = request.route
                    try:
                        on_suspend()
                    except BaseException:
                        coro.close()
                        raise
                    await resume(coro, pending)
        except asyncio.CancelledError:
            if not handler.ours:
                raise  # the calling task itself is being cancelled
            # The connection ended and cancelled the handler: the task carries on.
            uncancel = getattr(handler.task, "uncancel", None)
            if uncancel is not None and uncancel() > 0:
                raise
        finally:
            handler.finish()
            _CURRENT.reset(token)
