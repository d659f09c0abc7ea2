"""Exception groups from task groups, as the caller expects them: alone."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

if sys.version_info < (3, 11):  # pragma: no cover - exercised on 3.10 only
    from exceptiongroup import BaseExceptionGroup

__all__ = ["interrupted", "single_errors"]


@contextlib.contextmanager
def single_errors() -> Iterator[None]:
    """Re-raise an exception group that holds one exception as that exception.

    anyio's task groups wrap whatever escapes them in a group; an API that runs a task
    group behind the scenes (a context manager yielding to its caller, say) should raise
    its documented errors, and the caller's own, as themselves. Nested groups of one
    (task groups inside task groups) are unwrapped to the one exception inside.

    Raises:
        BaseException: the one exception of a group, or the group when it holds several.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if inner is group:
            raise
        raise inner from None


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``KeyboardInterrupt``, alone or in exception groups holding
    nothing else (trio can deliver Ctrl-C inside a task group, which wraps it)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and bool(inner) and all(interrupted(e) for e in inner)
