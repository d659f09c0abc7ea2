"""Running a handler's synchronous function in a worker thread, bounded.

anyio's ``to_thread.run_sync`` shields its wait for the thread from anyio cancellation,
and its limiter (40 threads by default) bounds the threads. On asyncio a request is
cancelled natively (``task.cancel()``), which the shield does not stop: the caller went
away, the limiter's slot came back, and the thread ran on. A peer that called a blocking
sync tool and cancelled, over and over, made one more thread each time. Here the wait
runs in a task of its own, which keeps the slot until the function returns; a cancelled
caller stops waiting at once (its answer is not wanted). On trio the thread is abandoned
on cancellation (``abandon_on_cancel``): the caller stops waiting at once too, and trio
gives the slot back only when the thread ends. (Waiting for it held the request's
in-flight slot and the connection's end, without a bound, for as long as the function
blocked.)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

from ._endpoint import _running_asyncio_loop

__all__ = ["call_off_loop", "run_in_worker"]

T = TypeVar("T")


async def _outcome(fn: Callable[[], T]) -> tuple[bool, T | BaseException]:
    # The task reports what happened instead of raising it: a BaseException leaving an
    # asyncio task (SystemExit from a sys.exit() in the function) would stop the loop.
    try:
        return True, await anyio.to_thread.run_sync(fn)
    except BaseException as exc:
        return False, exc


async def run_in_worker(fn: Callable[[], T]) -> T:
    """``fn()`` in a worker thread (see the module docstring).

    Raises:
        BaseException: what ``fn`` raised (``SystemExit`` included).
    """
    loop = _running_asyncio_loop()
    if loop is None:
        return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)
    ok, value = await asyncio.shield(loop.create_task(_outcome(fn)))
    if ok:
        return value  # type: ignore[return-value]
    assert isinstance(value, BaseException)
    raise value


async def call_off_loop(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` for a callback that may be async or plain: awaited when it is a
    coroutine function, else run in a worker thread (a plain function may block), its
    value awaited if it is awaitable (a callable object returning a coroutine).

    Raises:
        BaseException: what ``fn`` raised.
    """
    if inspect.iscoroutinefunction(fn):
        return await fn(*args)
    value = await run_in_worker(functools.partial(fn, *args))
    return await value if inspect.isawaitable(value) else value
