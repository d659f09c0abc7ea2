"""What kind of callable a tool, prompt or resource function is."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..exceptions import LocalProtocolError

__all__ = ["callable_kind"]


def callable_kind(fn: Callable[..., Any], label: str) -> tuple[Callable[..., Any], bool]:
    """The function behind ``fn`` (``functools.partial`` unwrapped) and whether calling it
    gives a coroutine (an ``async def``, or an object whose ``__call__`` is one).

    Raises:
        LocalProtocolError: ``fn`` is a generator: a tool returns its result.
    """
    target = fn
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
        raise LocalProtocolError(f"{label!r} is a generator; a tool must return its result")
    is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None)  # noqa: B004 (an object with an async __call__)
    )
    return target, is_async
