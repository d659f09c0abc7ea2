"""Probes for the leak replays (``test_leak_replay*.py``): what a Streamable HTTP app
running in a :func:`running_server` thread keeps, read on the server's own loop, and
bounded waits for it to return to a baseline."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import anyio

from mcpkit.server import Server, StreamableHTTPApp

from ._httpserver import RunningServer
from ._mcphttp import JSON_HEADERS
from ._wire import MODERN, meta

#: Bound on one wait for the server's state to settle.
SETTLE: Final = 20.0
#: The headers of a handshake-era POST that stands alone (stateless: no session id).
OLD_HEADERS: Final = {**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    """The headers of a 2026-07-28 POST (``Mcp-Method`` / ``Mcp-Name``)."""
    out = {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    return out


def modern_body(rid: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    """A 2026-07-28 request: the client's version and capabilities in ``_meta``."""
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    message["params"] = {"_meta": meta(), **(params or {})}
    return json.dumps(message).encode()


@dataclass(frozen=True)
class State:
    """What the server holds between requests: tasks on its loop, its sessions (the app's
    table, the server's set, the one-POST sessions still running), the mcpkit objects
    alive by class, and the events waiting for resumption."""

    tasks: int
    sessions: int
    served: int
    sessionless: int
    objects: Counter[str]
    stored: int

    @property
    def held(self) -> tuple[int, int, int]:
        """(app's session table, server's set of sessions, one-POST sessions running)"""
        return (self.sessions, self.served, self.sessionless)


def mcpkit_objects() -> Counter[str]:
    """How many objects of each mcpkit class are alive (after a collection)."""
    gc.collect()
    return Counter(
        type(o).__qualname__
        for o in gc.get_objects()
        if str(getattr(type(o), "__module__", "")).startswith("mcpkit.")
    )


def state(http: RunningServer, app: StreamableHTTPApp, server: Server) -> State:
    """The server's state, read on its loop."""

    def read() -> State:
        store = app.event_store
        return State(
            tasks=len(asyncio.all_tasks()),
            sessions=len(app.sessions),
            served=len(server.sessions),
            sessionless=len(app.sessionless),
            objects=mcpkit_objects(),
            stored=len(store) if store is not None else 0,  # type: ignore[arg-type]
        )

    result: State = http.call(read)
    return result


def settled(http: RunningServer, app: StreamableHTTPApp) -> bool:
    """Whether no request is in flight anywhere in the app: every session's connection
    has no peer request unanswered and no call of its own pending, its endpoint runs no
    handler, it has no POST exchange and no open HTTP request; and no one-POST session
    (stateless, 2026-07-28) is left."""

    def read() -> bool:
        return not app.sessionless and all(
            session.endpoint.idle
            and session.endpoint.connection.in_flight_count == 0
            and not session.endpoint.connection.pending_ids
            and not session.exchanges
            and session.connections == 0
            for session in app.sessions.values()
        )

    return bool(http.call(read))


async def until(condition: Callable[[], bool], limit: float = SETTLE) -> None:
    """Poll ``condition`` until it holds, for at most ``limit`` seconds. (The state lives
    on another thread's loop: there is nothing to wait on but the state itself.)"""
    with anyio.fail_after(limit):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def back_to(http: RunningServer, app: StreamableHTTPApp, server: Server, base: State) -> None:
    """Wait (bounded) until the server holds what it held at ``base``: tasks end a little
    after their HTTP responses, ended sessions' work stops in the background."""
    http.run(app.wait_ended)
    seen: list[State] = []

    def back() -> bool:
        seen[:] = [state(http, app, server)]
        return seen[0] == base

    try:
        await until(back)
    except TimeoutError:
        now = seen[0]
        raise AssertionError(
            f"not back to the baseline: {now.tasks} tasks (were {base.tasks}), sessions "
            f"{now.held} (were {base.held}), {now.stored} events stored (were "
            f"{base.stored}), objects gained {now.objects - base.objects}, lost "
            f"{base.objects - now.objects}"
        ) from None


@contextmanager
def traced() -> Iterator[None]:
    """Trace allocations (every thread: the server's and the test's) for the block."""
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


#: The checker's own allocations are not the server's: counting every object walks all of
#: them, and the interpreter tables that walk can grow (a one-time resize of 1.9 MB landed
#: inside the measured window once, depending on which test files ran before).
OWN: Final = tracemalloc.Filter(inclusive=False, filename_pattern=__file__)


def traced_bytes(http: RunningServer) -> int:
    """Bytes traced now, after a collection on the server's thread, less the blocks this
    module's own code allocated."""
    http.call(gc.collect)
    return sum(trace.size for trace in tracemalloc.take_snapshot().filter_traces([OWN]).traces)
