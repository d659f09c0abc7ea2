"""Running synchronous work on the event loop's thread from another thread.

Code on a thread of its own (a sync tool's worker, a plugin loader, a file watcher) may
register a tool, which tells every connected client: that work touches the loop's
structures (task groups, events), which are not thread-safe, so the loop runs it and the
thread waits for it (briefly: it only queues messages). The loop must not be waiting for
that thread itself, which no code running on it should do anyway (it would stall every
connection). Work for a loop other than the caller's own (a server serving sessions on
several loops) is handed over without waiting (:func:`soon_on_loop`): two loops waiting
for each other would stall both.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from contextvars import Context
from typing import Any

import anyio
import anyio.from_thread
from anyio.lowlevel import EventLoopToken

from ._endpoint import _running_asyncio_loop

__all__ = ["on_loop_thread", "running_event_loop", "runs_event_loop", "soon_on_loop"]

logger = logging.getLogger("mcpkit.aio")


def on_loop_thread(
    loop_thread: int | None, token: EventLoopToken | None, fn: Callable[..., Any], *args: Any
) -> bool:
    """Call ``fn(*args)``: right here on ``loop_thread`` (or with no loop known), else on
    the loop of ``token`` (asyncio or trio), waiting for it. Returns False when that loop
    has ended (then ``fn`` is not called).

    Raises:
        Exception: what ``fn`` raised.
    """
    if token is None or loop_thread is None or threading.get_ident() == loop_thread:
        fn(*args)
        return True
    try:
        anyio.from_thread.run_sync(fn, *args, token=token)
    except anyio.RunFinishedError:
        return False
    return True


def runs_event_loop() -> bool:
    """Whether the calling thread is running an event loop (asyncio or trio): code there
    must not wait for another loop (see the module)."""
    return running_event_loop() is not None


def running_event_loop() -> str | None:
    """The event loop the calling thread is running: ``"asyncio"``, ``"trio"`` or
    ``None``."""
    if _running_asyncio_loop() is not None:
        return "asyncio"
    trio = sys.modules.get("trio")  # (never imported here: only a running trio has it)
    if trio is None:
        return None
    try:
        trio.lowlevel.current_trio_token()
    except RuntimeError:
        return None
    return "trio"


def soon_on_loop(
    loop_thread: int | None, token: EventLoopToken | None, fn: Callable[..., Any], *args: Any
) -> bool:
    """Call ``fn(*args)``: right here on ``loop_thread`` (or with no loop known), else
    have the loop of ``token`` (asyncio or trio) call it soon, without waiting for it; an
    exception it raises there is logged. Returns False when that loop has ended (then
    ``fn`` is not called).

    Raises:
        Exception: what ``fn`` raised, when called right here.
    """
    if token is None or loop_thread is None or threading.get_ident() == loop_thread:
        fn(*args)
        return True
    native = token.native_token
    try:
        if isinstance(native, asyncio.AbstractEventLoop):
            # In a task of its own, in a context of its own: anyio finds its event loop
            # through the current task, and the caller's context (another loop's thread)
            # may name another async library.
            native.call_soon_threadsafe(_start_task, native, fn, args, context=Context())
        else:  # a trio.lowlevel.TrioToken (which must never see an exception)
            native.run_sync_soon(_logged, fn, args)  # type: ignore[attr-defined]
    except RuntimeError:  # the loop is closed (asyncio), or trio.RunFinishedError
        return False
    return True


def _start_task(
    loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    async def call() -> None:
        _logged(fn, args)

    loop.create_task(call())


def _logged(fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        fn(*args)
    except Exception:
        logger.exception("%r failed on its event loop", fn)
