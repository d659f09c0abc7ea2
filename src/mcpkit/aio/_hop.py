"""Running synchronous work on the event loop's thread from another thread.

Code on a thread of its own (a sync tool's worker, a plugin loader, a file watcher) may
register a tool, which tells every connected client: that work touches the loop's
structures (task groups, events), which are not thread-safe, so the loop runs it and the
thread waits for it (briefly: it only queues messages). The loop must not be waiting for
that thread itself, which no code running on it should do anyway (it would stall every
connection).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
from anyio.lowlevel import EventLoopToken

__all__ = ["on_loop_thread"]


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
