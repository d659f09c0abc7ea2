"""The endpoint's own requests to the peer: sending one, waiting for its answer within
its timeouts (pushed back by progress), and cancelling it on the wire when the wait ends
early (a mixin of :class:`~mcpkit.aio.Endpoint`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
from msgspec import UNSET, Raw

from ..exceptions import (
    ConnectionClosedError,
    MessageNotDelivered,
    RequestTimeoutError,
)
from ..protocol import EMPTY_TABLE, Connection, ProgressReceived
from ..types import RequestId
from ._calls import ProgressCallback, _call_progress, _Waiter

__all__ = ["Outbound"]

#: Bound on sending a cancellation while the caller is already being cancelled.
_CANCEL_SEND_TIMEOUT: Final = 1.0


class Outbound:
    """Requests from this side of the connection (see :meth:`request`)."""

    if TYPE_CHECKING:
        connection: Connection
        _waiters: dict[RequestId, _Waiter]

        @property
        def closed(self) -> bool: ...

        async def send_raw(self, data: bytes) -> None: ...

    def _settle(
        self, rid: RequestId, *, result: Raw | None = None, error: BaseException | None = None
    ) -> None:
        waiter = self._waiters.get(rid)
        if waiter is not None and not waiter.done:
            waiter.finish(result, error)

    def _on_progress(self, event: ProgressReceived) -> None:
        waiter = self._waiters.get(event.request_id)
        if waiter is None or waiter.done:
            return
        waiter.progress.append(event.params)
        if waiter.scope is not None and waiter.timeout < math.inf:
            # Progress shows the peer is alive: push the inactivity deadline back, but never
            # past the absolute maximum (basic/lifecycle.mdx, "Timeouts").
            waiter.scope.deadline = min(anyio.current_time() + waiter.timeout, waiter.hard_deadline)
        waiter.changed.set()

    async def request(
        self,
        method: str,
        params: Any = UNSET,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_sent: Callable[[RequestId], None] | None = None,
    ) -> Raw:
        """Send a request and wait for its result (the raw JSON object).

        Args:
            method: the method name.
            params: a struct, a dict, or UNSET for none.
            timeout: seconds without an answer before giving up; each progress notification
                starts the wait anew. ``None`` waits without this bound.
            max_timeout: absolute bound in seconds, however much progress arrives.
            on_progress: called with every progress notification, in order, from this task;
                registered before the request is sent.
            on_sent: called with the request's id before it is sent (to route messages
                that name it, e.g. a listen stream's notifications).

        Raises:
            RPCError: the peer answered with an error.
            RequestTimeoutError: no answer in time; the request was cancelled on the wire.
            RemoteProtocolError: the answer broke the protocol.
            ConnectionClosedError: the connection ended first.
            LocalProtocolError: ``params`` cannot be encoded.
        """
        if self.closed:
            raise ConnectionClosedError("the connection closed")
        rid, data = self.connection.send_request(method, params, progress=on_progress is not None)
        if on_sent is not None:
            on_sent(rid)
        waiter = _Waiter()
        if self._waiters is EMPTY_TABLE:  # our first call: a table of our own
            self._waiters = {}
        self._waiters[rid] = waiter
        now = anyio.current_time()
        waiter.timeout = math.inf if timeout is None else timeout
        waiter.hard_deadline = math.inf if max_timeout is None else now + max_timeout
        sent = False
        try:
            # The deadlines cover the send too: a peer that stops reading must not hold
            # the caller past its timeout (basic/lifecycle.mdx, "Timeouts").
            with anyio.CancelScope(
                deadline=min(now + waiter.timeout, waiter.hard_deadline)
            ) as scope:
                waiter.scope = scope
                await self.send_raw(data)
                sent = True
                while True:
                    await waiter.changed.wait()
                    waiter.changed = anyio.Event()
                    while waiter.progress:
                        await _call_progress(on_progress, waiter.progress.popleft())
                    if waiter.done:
                        break
            if scope.cancelled_caught and not waiter.done:
                if sent:
                    await self._send_cancel(rid, "timed out")
                raise RequestTimeoutError(f"{method} got no response in time")
        except BaseException:
            if not sent:
                # The send did not complete (refused, cancelled, or timed out): the peer
                # never got the request, so there is nothing to cancel on the wire.
                self.connection.forget(rid)
            elif not waiter.done:
                with anyio.CancelScope(shield=True):
                    await self._send_cancel(rid, "cancelled by the caller")
            raise
        finally:
            self._waiters.pop(rid, None)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.result is not None
        return waiter.result

    async def _send_cancel(self, rid: RequestId, reason: str) -> None:
        data = self.connection.cancel(rid, reason)
        if data is None or self.closed:
            return
        with anyio.move_on_after(_CANCEL_SEND_TIMEOUT):
            try:
                await self.send_raw(data)
            except (ConnectionClosedError, MessageNotDelivered):
                pass
