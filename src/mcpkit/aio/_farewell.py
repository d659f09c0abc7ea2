"""Answering the requests still running when the endpoint's owner goes away (a mixin of
:class:`~mcpkit.aio.Endpoint`).

A server shutting down cancels the handlers it cannot wait for. Cancelled by the peer, a
request gets no answer (``basic/utilities/cancellation.mdx``); cancelled by the server, it
still deserves one, or the client waits, or retries a server that is gone, to learn only
that the answer never came. :meth:`Farewell.answer_in_flight` gives each chosen request an
error answer just before the endpoint ends and cancels the handlers; the handler's own
task delivers that answer through its route when it stops, in place of the nothing a
peer's cancellation leaves (or of its result, should it complete first), so the answer
goes out in order, exactly once, before the route is released.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..protocol import EMPTY_TABLE

if TYPE_CHECKING:
    import anyio

    from ..protocol import Connection
    from ..types import RequestId
    from ._inline import InlineHandler
    from ._route import ReplyRoute

__all__ = ["Farewell"]


class Farewell:
    """See the module."""

    if TYPE_CHECKING:
        _handlers: dict[RequestId, anyio.CancelScope | asyncio.Task[None] | InlineHandler]
        _routes: dict[RequestId, ReplyRoute]
        connection: Connection

    # (Class-level: made only by answer_in_flight, never on a request's path.)
    _farewells: dict[RequestId, bytes | None] = EMPTY_TABLE

    def answer_in_flight(
        self, code: int, message: str, wanted: Callable[[ReplyRoute], bool]
    ) -> dict[RequestId, ReplyRoute]:
        """Answer with the error ``code``/``message`` every request whose handler runs and
        whose route ``wanted`` accepts; returns their routes by request id. Call it just
        before ending the endpoint (:meth:`detach`), which cancels the handlers: each
        answer is delivered through its route when its handler stops (or, should the
        handler complete first, in place of its result); see :meth:`undelivered` for a
        handler that never stops."""
        chosen: dict[RequestId, ReplyRoute] = {}
        for rid, route in self._answers_due():
            if route is not None and wanted(route):
                self._keep(rid, self.connection.send_error(rid, code, message))
                chosen[rid] = route
        return chosen

    def part_channel(self, code: int, message: str) -> list[bytes]:
        """Answer with the error ``code``/``message`` every request in flight that
        answers over the channel (no route): returns the encoded answers (a completed
        batch's array among them), for the caller to write before the channel closes;
        their handlers, cancelled next, send nothing more (their results, should they
        complete first, included). For a transport whose channel is the only way to the
        peer (legacy HTTP+SSE, WebSocket): the peer learns which requests were cut at a
        shutdown, in place of a bare end of the connection."""
        out: list[bytes] = []
        for rid, route in self._answers_due():
            if route is None:  # (a routed request is answer_in_flight's)
                data = self.connection.send_error(rid, code, message)
                self._keep(rid, None)  # (answered here: the handler's answer is dropped)
                if data is not None:
                    out.append(data)
        return out

    def _answers_due(self) -> list[tuple[RequestId, ReplyRoute | None]]:
        """Each request whose handler runs and whose answer is still due, with the route
        that answer takes (``None``: the channel)."""
        running: list[tuple[RequestId, ReplyRoute | None]] = []
        for rid, handler in list(self._handlers.items()):
            if self.connection.is_in_flight(rid):
                route = self._routes.get(rid) if self._routes else None
                if route is None:
                    route = getattr(handler, "route", None)  # (an inline handler keeps its own)
                running.append((rid, route))
        return running

    def _keep(self, rid: RequestId, answer: bytes | None) -> None:
        """Hold ``answer`` as the one ``rid`` gets, in place of its handler's."""
        if self._farewells is EMPTY_TABLE:
            self._farewells = {}
        self._farewells[rid] = answer

    def undelivered(self, rid: RequestId) -> bytes | None:
        """The answer :meth:`answer_in_flight` gave ``rid`` if its handler has not
        delivered it (it ignored its cancellation): the caller delivers it, once."""
        return self._farewells.pop(rid, None) if self._farewells else None

    def _parting(self, rid: RequestId) -> bytes | None:
        """What a cancelled handler's request still sends: the answer
        :meth:`answer_in_flight` gave it, else nothing (the peer cancelled it), except a
        batch's array that its end completes."""
        if self._farewells and rid in self._farewells:
            return self._farewells.pop(rid)
        return self.connection.discard(rid)
