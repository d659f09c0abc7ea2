"""The sans-I/O JSON-RPC connection: id allocation, the pending and in-flight tables, and
the progress and cancellation bookkeeping of MCP (``basic/utilities/{progress,cancellation}``).

A :class:`Connection` takes one framed message at a time and returns one event; it takes
calls describing what to send and returns the bytes to send. It performs no I/O, starts no
tasks and reads no clock, so every rule below is tested without an event loop.

Rules it enforces:

1. Our request ids are unique for the life of the connection (a counter; never reused).
2. A peer request whose id is still in flight is refused with -32600 echoing the id; the
   first request is unaffected and stays cancellable.
3. Exactly one response per request: answering an id that is not in flight raises
   :class:`LocalProtocolError`; answering a request the peer cancelled sends nothing.
4. Progress is only sent for a request in flight that asked for it, and must increase;
   progress received for an unknown token, or after the response, is dropped.
5. A cancellation stops the request (no response will be sent); cancelling an unknown or
   finished request, or ``initialize``, is ignored.
6. Responses for unknown or already-answered ids are dropped and reported for logging.

Receiving (each message in, one event out) is in ``_connection_receive.py``, a mixin.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec
from msgspec import UNSET

from ..exceptions import LocalProtocolError
from ..types import (
    CancelledNotificationParams,
    ProgressNotificationParams,
    ProgressToken,
    RequestId,
)
from ._batch import BatchReply
from ._connection_receive import Receiving, _InFlight, _Pending
from ._empty import EMPTY_TABLE
from ._encode import encode_error, encode_notification, encode_request, encode_result
from ._limits import DEFAULT_LIMITS, Limits

__all__ = ["Connection"]


class Connection(Receiving):
    """One JSON-RPC peer-to-peer connection, free of I/O.

    Args:
        limits: bounds on incoming messages.
        tolerant: accept ``"params": null`` as absent params.
    """

    # Class-level defaults (a connection is made per stateless HTTP POST: what its
    # constructor need not set, it does not). The tables of our own requests, and of
    # batches, are made when first written (a server's connection often never sends a
    # request): until then they are the one read-only EMPTY_TABLE.
    limits: Limits  # (set by the constructor, as is _held: see there)
    #: Accept known real-world deviations (``"params": null``) instead of refusing them.
    tolerant = False
    #: Accept JSON-RPC batches (set when 2025-03-26 is negotiated; see _batch.py).
    allow_batches = False
    _next_id = 1
    _pending: dict[RequestId, _Pending] = EMPTY_TABLE
    _tokens: dict[ProgressToken, RequestId] = EMPTY_TABLE
    #: Batched requests answered while their batch is not: for the peer, still in
    #: flight (their answers go out with the batch's array), so their ids are too.
    _held: dict[RequestId, BatchReply]
    _finished_out: OrderedDict[RequestId, None] = EMPTY_TABLE  # type: ignore[assignment]

    def __init__(self, limits: Limits = DEFAULT_LIMITS, *, tolerant: bool = False) -> None:
        # (limits may be given by position: a class called with keywords costs CPython
        # 3.11 a dict built and unpacked, and a server makes a connection per session)
        # What receive_message reads per message is set here all the same: on CPython
        # 3.11 an instance attribute reads faster than a class-level one (and no read of
        # one is specialized while the class has a value of a Python-defined class for
        # it, such as DEFAULT_LIMITS or EMPTY_TABLE: hence no class-level default).
        self.limits = limits
        self.tolerant = tolerant
        self.allow_batches = False
        self._held = EMPTY_TABLE
        # A request in flight maps to its method name, or to an _InFlight record once it
        # has a progress token or was cancelled (most requests never need one).
        self._in_flight: dict[RequestId, _InFlight | str] = {}

    # -- introspection ------------------------------------------------------------------

    @property
    def pending_ids(self) -> list[RequestId]:
        """Ids of our requests still awaiting a response."""
        return list(self._pending)

    @property
    def in_flight_ids(self) -> list[RequestId]:
        """Ids of peer requests not yet answered (including cancelled ones not yet finished)."""
        return list(self._in_flight)

    @property
    def in_flight_count(self) -> int:
        """How many peer requests are not yet answered (see :attr:`in_flight_ids`)."""
        return len(self._in_flight)

    def is_in_flight(self, request_id: RequestId) -> bool:
        """Whether a peer request with this id awaits our answer and was not cancelled."""
        entry = self._in_flight.get(request_id)
        return entry is not None and (type(entry) is str or not entry.cancelled)  # type: ignore[union-attr]

    def _entry(self, request_id: RequestId) -> _InFlight | None:
        """The full record of a peer request in flight, created on first need."""
        entry = self._in_flight.get(request_id)
        if type(entry) is str:
            entry = self._in_flight[request_id] = _InFlight(entry, None)
        return entry  # type: ignore[return-value]

    # -- sending ------------------------------------------------------------------------

    def send_request(
        self, method: str, params: Any = UNSET, *, progress: bool = False
    ) -> tuple[RequestId, bytes]:
        """Allocate an id and encode a request.

        With ``progress=True`` the request asks for progress notifications: its id doubles
        as the progress token, written into ``params._meta.progressToken``, and is registered
        before the bytes are returned (so no early notification can be missed).

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
        """
        rid = self._next_id
        token: ProgressToken | None = None
        if progress:
            token = rid
            params = _with_progress_token(params, token)
        data = encode_request(rid, method, params)
        self._next_id += 1
        if self._pending is EMPTY_TABLE:  # our first request: tables of our own
            self._pending = {}
            self._tokens = {}
        self._pending[rid] = _Pending(method, token)
        if token is not None:
            self._tokens[token] = rid
        return rid, data

    def send_notification(self, method: str, params: Any = UNSET) -> bytes:
        """Encode a notification.

        Raises:
            LocalProtocolError: ``params`` is not an object or cannot be encoded.
        """
        return encode_notification(method, params)

    def _not_in_flight(self, request_id: RequestId) -> LocalProtocolError:
        return LocalProtocolError(
            f"no request with id {request_id!r} is in flight (already answered?)"
        )

    def send_result(self, request_id: RequestId, result: Any) -> bytes | None:
        """Encode the success response to a peer request and mark it answered.

        Returns ``None`` (send nothing) if the peer cancelled the request.

        Raises:
            LocalProtocolError: the request is not in flight (answered twice, or never
                received), or ``result`` is not an object / cannot be encoded. In the latter
                case the request stays in flight so an error can still be sent.
        """
        entry = self._in_flight.get(request_id)
        if entry is None:
            raise self._not_in_flight(request_id)
        if type(entry) is not str:
            if entry.cancelled:  # type: ignore[union-attr]
                del self._in_flight[request_id]
                return self._batched(entry, request_id, None)  # type: ignore[arg-type]
            data = encode_result(request_id, result)
            del self._in_flight[request_id]
            return self._batched(entry, request_id, data)  # type: ignore[arg-type]
        data = encode_result(request_id, result)
        del self._in_flight[request_id]
        return data

    def send_error(
        self, request_id: RequestId, code: int, message: str, data: Any = UNSET
    ) -> bytes | None:
        """Encode an error response to a peer request and mark it answered.

        Returns ``None`` (send nothing) if the peer cancelled the request.

        Raises:
            LocalProtocolError: the request is not in flight.
        """
        entry = self._in_flight.pop(request_id, None)
        if entry is None:
            raise self._not_in_flight(request_id)
        if type(entry) is str:
            return encode_error(request_id, code, message, data)
        reply = None if entry.cancelled else encode_error(request_id, code, message, data)  # type: ignore[union-attr]
        return self._batched(entry, request_id, reply)  # type: ignore[arg-type]

    def _batched(
        self, entry: _InFlight, request_id: RequestId, reply: bytes | None
    ) -> bytes | None:
        """A batched request's answer joins its batch; the last one releases the array
        (and, with it, the ids of the answers it held)."""
        batch = entry.batch
        if batch is None:
            return reply
        released = batch.add(request_id, reply)
        if released is None:
            if reply is not None:
                if self._held is EMPTY_TABLE:
                    self._held = {}
                self._held[request_id] = batch
                batch.held.append(request_id)
        else:
            for rid in batch.held:
                self._held.pop(rid, None)
        return released

    def discard(self, request_id: RequestId) -> bytes | None:
        """Forget a peer request without answering it (after the peer cancelled it).

        Returns what must still be sent: for a request inside a batch whose other answers
        are complete, the batch's array; otherwise ``None``.
        """
        entry = self._in_flight.pop(request_id, None)
        if isinstance(entry, _InFlight) and entry.batch is not None:
            return self._batched(entry, request_id, None)
        return None

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bytes | None:
        """Encode a progress notification for a peer request in flight.

        Returns ``None`` when nothing may be sent: the request did not ask for progress,
        was cancelled, or was already answered (never progress after the response).

        Raises:
            LocalProtocolError: ``progress`` did not increase, or a value is not finite.
        """
        entry = self._entry(request_id)
        if entry is None or entry.cancelled or entry.progress_token is None:
            return None
        if entry.last_progress is not None and not progress > entry.last_progress:
            raise LocalProtocolError(
                f"progress must increase with every notification "
                f"({progress!r} after {entry.last_progress!r})"
            )
        params = ProgressNotificationParams(
            progress_token=entry.progress_token,
            progress=progress,
            total=UNSET if total is None else total,
            message=UNSET if message is None else message,
        )
        data = encode_notification("notifications/progress", params)
        entry.last_progress = progress
        return data

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bytes | None:
        """Give up on one of our requests: forget it and encode ``notifications/cancelled``.

        A late response is then dropped. Returns ``None`` if the request is no longer
        pending (its response already arrived), so a cancel racing completion yields exactly
        one outcome. ``initialize`` is never cancelled on the wire (it is only forgotten).
        """
        pending = self._pending.pop(request_id, None)
        if pending is None:
            return None
        self._finish_outbound(request_id, pending)
        if pending.method == "initialize":
            return None
        params = CancelledNotificationParams(
            request_id=request_id, reason=UNSET if reason is None else reason
        )
        return encode_notification("notifications/cancelled", params)

    def forget(self, request_id: RequestId) -> None:
        """Stop waiting for one of our requests without telling the peer."""
        pending = self._pending.pop(request_id, None)
        if pending is not None:
            self._finish_outbound(request_id, pending)


def _with_progress_token(params: Any, token: ProgressToken) -> Any:
    """Return ``params`` with ``_meta.progressToken`` set, without mutating the caller's."""
    if params is UNSET or params is None:
        return {"_meta": {"progressToken": token}}
    if isinstance(params, dict):
        meta = dict(params.get("_meta") or {})
        meta["progressToken"] = token
        return {**params, "_meta": meta}
    if isinstance(params, msgspec.Struct) and "meta" in params.__struct_fields__:
        current = params.meta  # type: ignore[attr-defined]
        meta = dict(current) if isinstance(current, dict) else {}
        meta["progressToken"] = token
        return msgspec.structs.replace(params, meta=meta)
    raise LocalProtocolError("progress needs params given as a dict or a params struct")
