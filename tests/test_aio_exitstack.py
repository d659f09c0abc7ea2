"""``close_stack``: an exit stack closed while another exception is being handled, whose
second exit callback re-raises what the first raised (as anyio's task groups re-raise a
cancellation), leaves that exception as its own ``__context__`` (CPython's
``_fix_exception_context``); anyio's asyncio backend then spins for ever following the
chain when the task ends. ``close_stack`` raises the same exception with the cycle cut."""

from __future__ import annotations

import contextlib
from types import TracebackType

import pytest

from mcpkit.aio import close_stack
from mcpkit.aio._exitstack import break_context_cycle

pytestmark = pytest.mark.anyio


def chain(exc: BaseException) -> list[BaseException]:
    """The ``__context__`` chain of ``exc``; fails on a cycle instead of looping."""
    found = [exc]
    while (context := found[-1].__context__) is not None:
        assert all(context is not seen for seen in found), "a context cycle"
        found.append(context)
    return found


class Reraise:
    """An exit callback that re-raises the exception it is given (anyio's task groups
    do so with a cancellation they cannot swallow)."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:
            raise exc


class RaiseNew:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *_: object) -> None:
        raise self.exc


async def close_while_handling(stack: contextlib.AsyncExitStack) -> None:
    try:
        raise RuntimeError("being handled while the stack closes")
    except RuntimeError:
        await close_stack(stack)


async def test_closing_inside_a_handler_leaves_no_context_cycle() -> None:
    second = KeyError("raised by the first exit callback, re-raised by the next")
    stack = contextlib.AsyncExitStack()
    await stack.enter_async_context(Reraise())
    await stack.enter_async_context(RaiseNew(second))  # (exits first)
    with pytest.raises(KeyError) as raised:
        await close_while_handling(stack)
    assert raised.value is second
    assert chain(raised.value)[1:] == []  # the cut: no context, rather than itself


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        ({0: 0}, [0]),  # its own context
        ({0: 1, 1: 0}, [0, 1]),  # back to itself through another
        ({0: 1, 1: 2, 2: 1}, [0, 1, 2]),  # a cycle further down
        ({0: 1, 1: 2}, [0, 1, 2]),  # no cycle: left alone
    ],
)
def test_break_context_cycle(links: dict[int, int], expected: list[int]) -> None:
    errors = [ValueError(str(i)) for i in range(3)]
    for source, target in links.items():
        errors[source].__context__ = errors[target]
    break_context_cycle(errors[0])
    assert chain(errors[0]) == [errors[i] for i in expected]
