"""What kind of callable a tool, prompt or resource function is, and whether it has a
name of its own."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..exceptions import LocalProtocolError

__all__ = ["callable_kind", "refuse_unnamed_lambda", "registered_name"]


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


def refuse_unnamed_lambda(fn: Callable[..., Any], name: str | None) -> None:
    """For tools and prompts, whose name is what clients call them by: a lambda's own
    (``<lambda>``) is not one.

    Raises:
        LocalProtocolError: ``fn`` is a lambda and ``name`` is not given.
    """
    if name is None and getattr(fn, "__name__", None) == "<lambda>":
        raise LocalProtocolError("a lambda has no name of its own; pass name=")


def registered_name(fn: Callable[..., Any], name: str | None) -> str:
    """The name a function is registered under: ``name`` if given, else its own.

    Raises:
        LocalProtocolError: ``name`` is empty, or not given for a callable without one.
    """
    label = name if name is not None else getattr(fn, "__name__", None)
    if not label:
        raise LocalProtocolError(
            "name= must not be empty" if name is not None else f"{fn!r} has no __name__; pass name="
        )
    return str(label)
