"""Exception groups from task groups, as the caller expects them: alone."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

if sys.version_info < (3, 11):  # pragma: no cover - exercised on 3.10 only
    from exceptiongroup import BaseExceptionGroup

__all__ = ["single_errors"]


@contextlib.contextmanager
def single_errors() -> Iterator[None]:
    """Re-raise an exception group that holds one exception as that exception.

    anyio's task groups wrap whatever escapes them in a group; an API that runs a task
    group behind the scenes (a context manager yielding to its caller, say) should raise
    its documented errors, and the caller's own, as themselves.

    Raises:
        BaseException: the one exception of a group, or the group when it holds several.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
