"""A one-shot event that costs nothing until someone waits for it."""

from __future__ import annotations

import anyio

__all__ = ["Flag"]


class Flag:
    """Like :class:`anyio.Event` (set once, never cleared), but the event object is made
    only when a task actually waits: per-request flags that are mostly set before anyone
    waits (an HTTP exchange answered at once) then cost an attribute, not an event."""

    # Class-level defaults and no __init__: making a flag (several per HTTP request) runs
    # no Python code.
    _set = False
    _event: anyio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Wait until set (returns at once, after a checkpoint-free check, if it is)."""
        if self._set:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()
