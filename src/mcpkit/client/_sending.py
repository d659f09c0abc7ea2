"""Sending one request within the client's bounds: a slot among
``max_concurrent_requests``, waited for within the call's timeouts (a mixin of
:class:`~mcpkit.client.Client`)."""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ..aio import Endpoint, ProgressCallback
from ..exceptions import ConnectionClosedError, LocalProtocolError, RequestTimeoutError
from ._inprocess import exit_reason
from ._methods import Timeout

__all__ = ["SlotSending"]


class SlotSending:
    """How :class:`~mcpkit.client.Client` sends one request over its endpoint."""

    if TYPE_CHECKING:
        timeout: float | None
        max_timeout: float | None
        _endpoint: Endpoint | None
        _stack: contextlib.AsyncExitStack | None
        _limiter: anyio.Semaphore | None
        _max_concurrent: int

    async def _request_once(
        self,
        method: str,
        params: Any,
        timeout: Timeout,
        max_timeout: Timeout,
        on_progress: ProgressCallback | None,
    ) -> bytes:
        assert self._endpoint is not None
        assert self._limiter is not None
        idle = self.timeout if isinstance(timeout, msgspec.UnsetType) else timeout
        hard = self.max_timeout if isinstance(max_timeout, msgspec.UnsetType) else max_timeout
        # Waiting for a slot (max_concurrent_requests) counts against both timeouts: the
        # caller's bound covers the whole call, queue included.
        if (idle is not None and not idle > 0) or (hard is not None and not hard > 0):  # NaN too
            raise LocalProtocolError(f"timeouts must be positive seconds or None: {idle}, {hard}")
        bound = min((t for t in (idle, hard) if t is not None), default=math.inf)
        waited = 0.0
        try:
            self._limiter.acquire_nowait()  # the common case: a slot is free, no timer
        except anyio.WouldBlock:
            started = anyio.current_time()
            with anyio.move_on_after(bound) as queued:
                await self._limiter.acquire()
            waited = anyio.current_time() - started
            if queued.cancelled_caught:  # no slot is held
                raise self._no_slot(method) from None
        try:  # released before any renewal: initialize needs a slot
            if waited >= bound:
                raise self._no_slot(method)
            raw = await self._endpoint.request(
                method,
                params,
                timeout=None if idle is None else idle - waited,
                max_timeout=None if hard is None else hard - waited,
                on_progress=on_progress,
            )
        except ConnectionClosedError as exc:
            explained = await self._explained(exc)
            if explained is None:
                raise
            raise explained from exc
        finally:
            self._limiter.release()
        return bytes(raw)

    async def _closed_error(self) -> ConnectionClosedError:
        """The error of a call made after the connection ended, saying why if known."""
        closed = ConnectionClosedError("the connection closed")
        return await self._explained(closed) or closed

    async def _explained(self, exc: ConnectionClosedError) -> ConnectionClosedError | None:
        """The connection ended under a call: say why when the transport can tell (a
        server subprocess that died: its exit status and the end of its stderr), as
        connecting does. Not while connecting (that says it once itself) nor closing
        (the client ended it: there is nothing to explain)."""
        if self._stack is None or self._endpoint is None:
            return None
        why = await exit_reason(self._endpoint.channel)
        return None if why is None else ConnectionClosedError(f"{exc}: {why}")

    def _no_slot(self, method: str) -> RequestTimeoutError:
        return RequestTimeoutError(
            f"{method} found no free request slot in time (max_concurrent_requests"
            f"={self._max_concurrent} in flight); it was not sent"
        )
