"""A read-only empty table, the class-level default of tables most connections never
fill (a connection, an endpoint and a session are made per stateless HTTP POST: a table
made only when first written costs such a POST nothing)."""

from __future__ import annotations

from typing import Any, Final, NoReturn

__all__ = ["EMPTY_TABLE", "EmptyTable"]


class EmptyTable(dict[Any, Any]):
    """An empty dict that refuses every write: reading it (``in``, ``get``, ``len``,
    iteration, ``pop`` with a default) costs what reading a dict does, and a write site
    that forgot to make a table of its own fails loudly instead of sharing state between
    the objects that share this one.

    Raises:
        TypeError: on any write.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a shared empty table is read-only: make a table of your own")

    __setitem__ = __delitem__ = setdefault = update = clear = __ior__ = _refuse


#: The one instance (its type is never filled, so one is enough).
EMPTY_TABLE: Final[dict[Any, Any]] = EmptyTable()
