"""Checking, when a handler or callback is registered, that it can take the arguments it
will be called with: otherwise the mistake shows only when the peer first calls it,
mid-request, as a ``TypeError`` far from the registration."""

from __future__ import annotations

import inspect
from typing import Any

from ..exceptions import LocalProtocolError

__all__ = ["check_arity"]


def check_arity(label: str, fn: Any, arity: int, arguments: str) -> None:
    """Refuse ``fn`` unless it can be called with ``arity`` positional arguments.

    ``label`` names the parameter it was given as (``"elicitation="``), ``arguments``
    what it is called with (``"one argument (the request's params)"``). Callables without
    a signature (some builtins) are taken on trust.

    Raises:
        LocalProtocolError: ``fn`` is not callable, or cannot take those arguments.
    """
    if not callable(fn):
        raise LocalProtocolError(f"{label} must be callable, not {type(fn).__name__}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*([None] * arity))
    except TypeError:
        name = getattr(fn, "__name__", "it")
        raise LocalProtocolError(
            f"{label} is called with {arguments}; {name} takes {signature}"
        ) from None
