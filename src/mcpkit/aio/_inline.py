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
from collections.abc import Coroutine, Generator
from typing import Any, Final, TypeVar

import anyio

__all__ = ["RETURNED", "InlineHandler", "resume"]

#: What the first step of an inline handler gives when the handler has already returned.
RETURNED: Final = object()

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
