"""The server's lifespan: the user's startup and shutdown around everything it serves.

``LowLevelServer(lifespan=fn)``: ``fn(server)`` returns an async context manager (an
``@asynccontextmanager`` function, say) entered before the first connection is served and
exited after the last one ended; what it yields is ``ctx.lifespan`` in every handler. Who
serves holds it (:meth:`Lifespan.hold`): a connection served with ``serve()``, or an HTTP
app for as long as it runs (once per app run, never per session or request: the official
SDK's per-session lifespan gives each client its own database pool). Holders that overlap
share one run.

The context manager runs in a task of its own, so that it is entered and exited in one task
(anyio's cancel scopes require it) whichever holder came first or left last.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import anyio

from ..aio._background import spawn_background
from ..exceptions import LocalProtocolError
from ..types import ErrorCode
from ._asgi import Receive, Send, respond_error

__all__ = [
    "EXIT_TIMEOUT",
    "Lifespan",
    "LifespanFunction",
    "asgi_lifespan",
    "started_or_refused",
]

logger = logging.getLogger("mcpkit.server")

#: ``fn(server)`` -> an async context manager whose value handlers see as ``ctx.lifespan``.
LifespanFunction = Callable[[Any], AbstractAsyncContextManager[Any]]

#: Seconds the last holder waits for the user's shutdown code (then it runs on, logged).
EXIT_TIMEOUT: Final = 10.0


class _Run:
    """One entry into the user's context manager, shared by its holders."""

    __slots__ = ("done", "entered", "error", "state", "stop", "users")

    def __init__(self) -> None:
        self.entered = anyio.Event()  # entered, or failed to (then ``error`` is set)
        self.stop = anyio.Event()
        self.done = anyio.Event()
        self.error: BaseException | None = None
        self.state: Any = None
        self.users = 0


def _check_function(function: Any) -> None:
    """Refuse what cannot give an async context manager: the common slip is an undecorated
    generator or coroutine function (entering it failed only at startup, with a TypeError
    and a "coroutine never awaited" warning).

    Raises:
        LocalProtocolError: not callable, or a generator or coroutine function.
    """
    if not callable(function):
        raise LocalProtocolError(f"lifespan= must be callable, not {type(function).__name__}")
    if (
        inspect.isasyncgenfunction(function)
        or inspect.isgeneratorfunction(function)
        or inspect.iscoroutinefunction(function)
    ):
        name = getattr(function, "__name__", "it")
        raise LocalProtocolError(
            f"lifespan= must return an async context manager: decorate {name} with "
            "@contextlib.asynccontextmanager (an async generator that yields once)"
        )


class Lifespan:
    """A server's lifespan and its current run (``function`` ``None``: no lifespan, and
    holding it costs nothing).

    Args:
        server: passed to ``function``.
        function: what ``lifespan=`` gave the server.
    """

    def __init__(self, server: object, function: LifespanFunction | None) -> None:
        if function is not None:
            _check_function(function)
        self.server = server
        self.function = function
        self._run: _Run | None = None
        self._ending: _Run | None = None  # the run whose shutdown is under way

    @property
    def state(self) -> Any:
        """What the context manager yielded (``None`` while it is not entered)."""
        run = self._run
        return run.state if run is not None else None

    @property
    def running(self) -> bool:
        """Whether it is entered now (always, without a lifespan)."""
        run = self._run
        return self.function is None or (
            run is not None and run.entered.is_set() and run.error is None
        )

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[Any]:
        """Enter the lifespan unless a holder already did, for the duration; the last
        holder to leave exits it (waiting up to :data:`EXIT_TIMEOUT` seconds for it, even
        when cancelled). Yields its value.

        Raises:
            Exception: whatever the user's startup code raised (for every holder waiting).
        """
        if self.function is None:
            yield None
            return
        run = await self._acquire()
        try:
            yield run.state
        finally:
            await self._release(run)

    async def pin(self) -> None:
        """Enter the lifespan if it is not entered, and hold it until the event loop ends:
        for an HTTP app that no ASGI lifespan reaches (mounted in a framework that does not
        forward it), started by its first request.

        Raises:
            Exception: whatever the user's startup code raised.
        """
        if not self.running:
            await self._acquire()  # never released: exited when its task is cancelled

    async def _acquire(self) -> _Run:
        ending = self._ending
        if ending is not None:
            # One run at a time: a holder arriving during a shutdown waits for its end.
            with anyio.move_on_after(EXIT_TIMEOUT):
                await ending.done.wait()
        run = self._run
        if run is None:
            run = self._run = _Run()
            spawn_background(functools.partial(self._hold_open, run))
        run.users += 1
        try:
            # The user's startup code: as unbounded as it is (an ASGI server's own
            # lifespan startup waits for it in the same way).
            await run.entered.wait()
        except BaseException:
            await self._release(run)
            raise
        if run.error is not None:
            run.users -= 1
            raise run.error
        return run

    async def _release(self, run: _Run) -> None:
        run.users -= 1
        if run.users > 0 or run.done.is_set():
            return
        if self._run is run:
            self._run = None
        self._ending = run
        run.stop.set()
        with anyio.move_on_after(EXIT_TIMEOUT, shield=True) as waited:
            await run.done.wait()
        if waited.cancelled_caught:
            logger.warning("the server's lifespan did not shut down within %g s", EXIT_TIMEOUT)

    async def _hold_open(self, run: _Run) -> None:
        assert self.function is not None
        entered = False
        try:
            async with self.function(self.server) as state:
                run.state = state
                entered = True
                run.entered.set()
                await run.stop.wait()
        except Exception as exc:
            if entered:
                logger.exception("the server's lifespan failed at shutdown")
            else:
                run.error = exc
        finally:
            if not entered and run.error is None:
                run.error = RuntimeError("the event loop ended before the server's lifespan began")
            if self._run is run and not entered:
                self._run = None  # the next holder tries again
            if self._ending is run:
                self._ending = None
            run.entered.set()
            run.done.set()


async def asgi_lifespan(
    hold: Callable[[], AbstractAsyncContextManager[object]], receive: Receive, send: Send
) -> None:
    """An HTTP app's side of the ASGI lifespan protocol: ``hold()`` (the app's background
    work and the server's lifespan) from startup to shutdown. A failing startup is reported
    with ``lifespan.startup.failed``: the ASGI server refuses to start (uvicorn logs the
    message and exits) instead of serving requests the app cannot answer."""
    message = await receive()
    if message["type"] != "lifespan.startup":
        return
    started = False
    try:
        async with hold():
            started = True
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
    except Exception as exc:
        stage = "shutdown" if started else "startup"
        logger.exception("the app's %s failed", stage)
        await send({"type": f"lifespan.{stage}.failed", "message": f"{stage} failed: {exc!r}"})
        return
    await send({"type": "lifespan.shutdown.complete"})


async def started_or_refused(start: Callable[[], Awaitable[object]], send: Send) -> bool:
    """Start an app's lifespan for a request that found it not running (no ASGI lifespan
    reached the app); if that fails, answer 500 (the traceback goes to the log, not to
    the client) and return ``False``."""
    try:
        await start()
    except Exception:
        logger.exception("the server's lifespan failed to start: answering 500")
        await respond_error(
            send,
            500,
            "Internal Server Error: the server failed to start (its log says why)",
            code=ErrorCode.INTERNAL_ERROR,
        )
        return False
    return True
