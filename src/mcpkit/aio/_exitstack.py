"""Closing an exit stack without the exception cycle CPython can leave behind.

An exit stack rewrites the ``__context__`` of what an exit callback raises, to chain it to
what the previous callback raised (``contextlib``'s ``_fix_exception_context``). When a
callback re-raises the very exception the previous one raised (anyio's task groups do so
with a cancellation) and the stack is closed while another exception is being handled (in
an ``except`` block, or in ``__aexit__`` on the way out of an ``async with``), that
exception becomes its own context. anyio's asyncio backend walks a finished task's chain
of cancellations to its end, and on that loop it spins for ever at full CPU, deaf to
timeouts and Ctrl-C: cancelling a task that was starting or leaving a stdio client hung
the whole program (CPython 3.11 to 3.14; anyio 4.16).
"""

from __future__ import annotations

import contextlib

__all__ = ["break_context_cycle", "close_stack"]


def break_context_cycle(exc: BaseException) -> None:
    """Cut the ``__context__`` chain of ``exc`` where it comes back to itself."""
    seen = {id(exc)}
    current = exc
    while (context := current.__context__) is not None:
        if id(context) in seen:
            current.__context__ = None
            return
        seen.add(id(context))
        current = context


async def close_stack(stack: contextlib.AsyncExitStack) -> None:
    """``stack.aclose()``, with a cycle in the context chain of what it raises cut.

    Raises:
        BaseException: whatever closing the stack raised.
    """
    try:
        await stack.aclose()
    except BaseException as exc:
        break_context_cycle(exc)
        raise
