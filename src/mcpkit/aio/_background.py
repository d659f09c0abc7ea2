"""Starting work that must outlive the task that starts it.

Structured concurrency is the rule (every task belongs to a task group), but an ASGI app
mounted in a framework that does not forward the lifespan protocol has no task group of
its own until some request creates one, and that request's task ends long before the
sessions it starts. This is the one escape hatch, used to start the owner task group.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["spawn_background"]

_KEEP: set[Any] = set()  # asyncio holds tasks weakly: keep them alive until done


async def _run(fn: Callable[[], Awaitable[None]]) -> None:
    await fn()


def spawn_background(fn: Callable[[], Awaitable[None]]) -> None:
    """Start ``fn()`` as a task of the event loop itself (a trio system task), not of the
    calling task's scope. It runs until it returns or the loop ends."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        import trio

        async def run() -> None:
            await fn()

        trio.lowlevel.spawn_system_task(run)
        return
    task: asyncio.Task[None] = loop.create_task(_run(fn))
    _KEEP.add(task)
    task.add_done_callback(_KEEP.discard)
