"""The receiving side of the sans-I/O :class:`~mcpkit.protocol.Connection` (a mixin of
it): each framed message (or batch) in, one event out, with the bookkeeping of requests
in flight, progress and cancellation that receiving does; and the records of the pending
and in-flight tables, which sending shares.

Kept apart from ``_connection.py`` (the tables, introspection and sending; the rules the
connection enforces are listed there) so each reads in one sitting; the methods are
inherited, not wrapped, so the per-message path gains no call.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Final, TypeGuard

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..types import (
    CancelledNotificationParams,
    ErrorCode,
    ProgressNotificationParams,
    ProgressToken,
    RequestId,
)
from ..types._echo import one_line, peer_text
from ._batch import BatchReply, split_batch
from ._decode import DecodedResponse, DecodeFailure, decode_message
from ._empty import EMPTY_TABLE
from ._encode import encode_error
from ._events import (
    BatchReceived,
    CancelReceived,
    ErrorReceived,
    Event,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseInvalid,
    ResponseReceived,
)
from ._limits import Limits

__all__: list[str] = []


_RECENT: Final = 256  # finished ids remembered to tell "late" from "unknown" in the log
#: How many characters of an unparsable message the log line about it shows.
_EXCERPT: Final = 60


class _PeekMeta(msgspec.Struct, rename="camel"):
    progress_token: Any = UNSET


class _PeekParams(msgspec.Struct):
    meta: _PeekMeta | UnsetType = msgspec.field(default=UNSET, name="_meta")


class _AnswerPeek(msgspec.Struct):
    id: Any = None
    method: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


# The members of a message cut short (see Receiving._answer_in_head).
_OPEN: Final = re.compile(rb"\s*\{")
_KEY: Final = re.compile(rb'\s*"((?:[^"\\]|\\.)*)"\s*:')
_SCALAR: Final = re.compile(
    rb'\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)\s*,'
)
_PEEK_DECODER: Final = msgspec.json.Decoder(_PeekParams)
_ANSWER_DECODER: Final = msgspec.json.Decoder(_AnswerPeek)
_PROGRESS_DECODER: Final = msgspec.json.Decoder(ProgressNotificationParams)
_CANCELLED_DECODER: Final = msgspec.json.Decoder(CancelledNotificationParams)


class _InFlight(msgspec.Struct, gc=False):
    """A peer request we have not answered yet."""

    method: str
    progress_token: ProgressToken | None
    cancelled: bool = False
    last_progress: float | None = None
    batch: BatchReply | None = None  # the batch whose array answer this request joins


class _Pending(msgspec.Struct, gc=False):
    """One of our requests awaiting its response."""

    method: str
    progress_token: ProgressToken | None
    last_progress: float | None = None


def _int_or_str(value: object) -> TypeGuard[int | str]:
    """What a request id and a progress token may be: an integer or a string, no bool."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


class Receiving:
    """Messages from the peer (see :meth:`receive_message`)."""

    if TYPE_CHECKING:
        limits: Limits
        tolerant: bool
        allow_batches: bool
        _pending: dict[RequestId, _Pending]
        _tokens: dict[ProgressToken, RequestId]
        _in_flight: dict[RequestId, _InFlight | str]
        _held: dict[RequestId, BatchReply]
        _finished_out: OrderedDict[RequestId, None]

        def _entry(self, request_id: RequestId) -> _InFlight | None: ...

    # -- receiving ----------------------------------------------------------------------

    def receive_message(self, data: bytes) -> Event:
        """Process one framed message and return what happened."""
        # A batch over the size limit is refused whole by decode_message, like any
        # message over it (receiving a cut copy, still a batch over it, recursed for ever).
        if (
            self.allow_batches
            and len(data) <= self.limits.max_message_bytes
            and data.lstrip()[:1] == b"["
        ):
            return self._receive_batch(data)
        message = decode_message(data, self.limits, tolerant=self.tolerant)
        kind = type(message)
        if kind is RequestReceived:
            rid = message.request_id  # type: ignore[union-attr]
            method = message.method  # type: ignore[union-attr]
            # The common case inline (this is the hottest path): a new id, an ordinary
            # method, no progress token. Everything else is decided by _on_request.
            if (
                rid not in self._in_flight
                and rid not in self._held
                and not method.startswith("rpc.")
                # (rpartition: on CPython cheaper than find(), which parses an argument
                # tuple, or `in`, which first tries the needle as an integer; and its
                # backward search is 2-3x faster than partition's on CPython 3.11)
                and (message.params is None or not data.rpartition(b'"progressToken"')[1])  # type: ignore[union-attr]
            ):
                self._in_flight[rid] = method
                return message  # type: ignore[return-value]
            return self._on_request(message, data)  # type: ignore[arg-type]
        if kind is NotificationReceived:
            return self._on_notification(message)  # type: ignore[arg-type]
        if kind is DecodedResponse:
            return self._on_response(message)  # type: ignore[arg-type]
        return self._on_failure(message, data)  # type: ignore[arg-type]

    def _receive_batch(self, data: bytes) -> Event:
        elements = split_batch(data, self.limits.max_batch)
        if isinstance(elements, bytes):
            return MessageRejected(elements, "invalid batch")
        batch = BatchReply()
        events: list[Event] = []
        for element in elements:
            if element.lstrip()[:1] == b"[":
                reason = "Invalid Request: a batch must not contain a batch"
                batch.add(None, encode_error(None, ErrorCode.INVALID_REQUEST, reason))
                events.append(MessageRejected(None, reason))
                continue
            event = self.receive_message(element)
            if isinstance(event, RequestReceived):
                if event.method == "initialize":
                    # basic/lifecycle.mdx (2025-03-26): initialize MUST NOT be batched.
                    self._in_flight.pop(event.request_id, None)
                    reason = "Invalid Request: initialize must not be part of a batch"
                    reply = encode_error(event.request_id, ErrorCode.INVALID_REQUEST, reason)
                    batch.add(None, reply)
                    events.append(MessageRejected(None, reason))
                    continue
                entry = self._entry(event.request_id)
                assert entry is not None
                entry.batch = batch
                batch.pending.add(event.request_id)
            elif isinstance(event, MessageRejected) and event.reply is not None:
                batch.add(None, event.reply)
                event = MessageRejected(None, event.reason, event.level)
            events.append(event)
        return BatchReceived(events, batch.complete())

    def receive_oversized(self, limit: int, head: bytes = b"") -> Event:
        """Report a frame the framing layer discarded for exceeding ``limit`` bytes;
        ``head``, its first bytes, may show it was the answer to one of our requests,
        whose call then fails now rather than at its timeout."""
        reason = f"Parse error: message exceeds the limit of {limit} bytes"
        if head and self._pending:
            answered = self._answer_in_head(head)
            if answered is not None:
                return self._unreadable_answer(answered, reason)
        return MessageRejected(encode_error(None, ErrorCode.PARSE_ERROR, reason), reason)

    def _on_failure(self, failure: DecodeFailure, data: bytes) -> Event:
        if failure.id is None and self._pending:
            answered = self._answer_of(data)
            if answered is not None:
                return self._unreadable_answer(answered, failure.error.message)
        reply = None
        message = failure.error.message
        if failure.reply:
            reply = encode_error(failure.id, failure.error.code, message)
        if failure.error.code == ErrorCode.PARSE_ERROR and data:
            # For the log only (the reply says what the peer sent wrong): a line that is
            # not JSON is usually a program writing to the stream (a print() on a stdio
            # server's stdout), and its first characters tell which.
            head = data[:_EXCERPT].decode("utf-8", "replace")
            message = f"{message}; the message began {peer_text(head, _EXCERPT)}"
        return MessageRejected(reply, message)

    def _unreadable_answer(self, rid: RequestId, reason: str) -> ResponseInvalid:
        """The answer to our request ``rid`` cannot be read (invalid UTF-8, too deep, too
        large): its call fails now rather than at its timeout. A response is never
        answered, so no -32700 goes back."""
        self._finish_outbound(rid, self._pending.pop(rid))
        return ResponseInvalid(rid, reason)

    def _pending_id(self, rid: object) -> RequestId | None:
        """``rid`` if it is the id of one of our requests still awaiting its answer."""
        return rid if _int_or_str(rid) and rid in self._pending else None

    def _answer_of(self, data: bytes) -> RequestId | None:
        """The pending request that ``data``, a message refused before it could be
        classified, answers (it names no method, has a result or an error and a pending
        id), if its members can be read at all. The values are skipped, not checked:
        msgspec does not decode what it skips."""
        try:
            peek = _ANSWER_DECODER.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return None
        if peek.method is UNSET and (peek.result is not UNSET or peek.error is not UNSET):
            return self._pending_id(peek.id)
        return None

    def _answer_in_head(self, head: bytes) -> RequestId | None:
        """The pending request that a message cut to ``head`` answers: its members up to
        ``result`` or ``error`` are scalars (the large value comes after them), among
        them an ``id`` we are waiting for, and no ``method``."""
        start = _OPEN.match(head)
        if start is None:
            return None
        pos = start.end()
        scalars: dict[bytes, bytes] = {}
        while True:
            key = _KEY.match(head, pos)
            if key is None:
                return None
            if key.group(1) in (b"result", b"error"):
                break
            value = _SCALAR.match(head, key.end())
            if value is None:
                return None
            scalars[key.group(1)] = value.group(1)
            pos = value.end()
        if b"method" in scalars or b"id" not in scalars:
            return None
        try:
            return self._pending_id(msgspec.json.decode(scalars[b"id"]))
        except msgspec.DecodeError:
            return None

    def _on_request(self, message: RequestReceived, data: bytes) -> Event:
        rid = message.request_id
        if rid in self._in_flight or rid in self._held:
            reason = f"Invalid Request: request id {peer_text(rid)} is already in flight"
            return MessageRejected(encode_error(rid, ErrorCode.INVALID_REQUEST, reason), reason)
        if message.method.startswith("rpc."):
            # JSON-RPC 2.0 section 4: rpc.-prefixed names are reserved; never dispatched.
            reason = f"Method not found: {peer_text(message.method)}"
            return MessageRejected(encode_error(rid, ErrorCode.METHOD_NOT_FOUND, reason), reason)
        params = message.params
        if params is not None and data.find(b'"progressToken"') >= 0:
            try:
                peek = _PEEK_DECODER.decode(params)
            except msgspec.ValidationError as exc:
                reason = f"Invalid params: {one_line(str(exc))}"
                return MessageRejected(encode_error(rid, ErrorCode.INVALID_PARAMS, reason), reason)
            if peek.meta is not UNSET and peek.meta.progress_token is not UNSET:
                token = peek.meta.progress_token
                if not _int_or_str(token):
                    reason = "Invalid params: _meta.progressToken must be a string or an integer"
                    reply = encode_error(rid, ErrorCode.INVALID_PARAMS, reason)
                    return MessageRejected(reply, reason)
                self._in_flight[rid] = _InFlight(message.method, token)
                return RequestReceived(rid, message.method, params, token)
        # The common case stores just the method; _entry() upgrades it when needed.
        self._in_flight[rid] = message.method
        return message

    def _on_notification(self, message: NotificationReceived) -> Event:
        if message.method == "notifications/cancelled":
            return self._on_cancelled(message.params)
        if message.method == "notifications/progress":
            return self._on_progress(message.params)
        return message

    def _on_cancelled(self, params: Raw | None) -> Event:
        try:
            decoded = _CANCELLED_DECODER.decode(params if params is not None else b"{}")
        except msgspec.ValidationError as exc:
            return MessageRejected(
                None, f"invalid notifications/cancelled dropped: {one_line(str(exc))}"
            )
        rid = decoded.request_id
        entry = self._entry(rid) if not isinstance(rid, UnsetType) else None
        if entry is None or isinstance(rid, UnsetType):
            return MessageRejected(
                None,
                f"cancellation of unknown or finished request {peer_text(rid)} ignored",
                "debug",
            )
        if entry.method == "initialize":
            # The initialize request MUST NOT be cancelled (basic/utilities/cancellation).
            return MessageRejected(None, "cancellation of initialize ignored")
        if entry.cancelled:
            return MessageRejected(None, f"request {peer_text(rid)} was already cancelled", "debug")
        entry.cancelled = True
        reason = decoded.reason if isinstance(decoded.reason, str) else None
        return CancelReceived(rid, reason)

    def _on_progress(self, params: Raw | None) -> Event:
        try:
            decoded = _PROGRESS_DECODER.decode(params if params is not None else b"{}")
        except msgspec.ValidationError as exc:
            return MessageRejected(
                None, f"invalid notifications/progress dropped: {one_line(str(exc))}"
            )
        rid = self._tokens.get(decoded.progress_token)
        pending = self._pending.get(rid) if rid is not None else None
        if rid is None or pending is None:
            return MessageRejected(
                None,
                f"progress for unknown token {peer_text(decoded.progress_token)} dropped",
                "debug",
            )
        if pending.last_progress is not None and decoded.progress <= pending.last_progress:
            return MessageRejected(
                None, f"progress for request {peer_text(rid)} did not increase; dropped"
            )
        pending.last_progress = decoded.progress
        return ProgressReceived(rid, decoded)

    def _on_response(self, message: DecodedResponse) -> Event:
        rid = message.id
        pending = self._pending.pop(rid, None)
        if pending is None:
            if rid in self._finished_out:
                return MessageRejected(
                    None, f"late response for request {peer_text(rid)} dropped", "debug"
                )
            return MessageRejected(
                None, f"response for unknown request id {peer_text(rid)} dropped"
            )
        self._finish_outbound(rid, pending)
        if message.error is not None:
            return ErrorReceived(rid, message.error)
        if message.problem is not None or message.result is None:
            return ResponseInvalid(rid, message.problem or "empty response")
        return ResponseReceived(rid, message.result)

    def _finish_outbound(self, rid: RequestId, pending: _Pending) -> None:
        if pending.progress_token is not None:
            self._tokens.pop(pending.progress_token, None)
        if self._finished_out is EMPTY_TABLE:  # (made with the first of our requests' end)
            self._finished_out = OrderedDict()
        self._finished_out[rid] = None
        if len(self._finished_out) > _RECENT:
            self._finished_out.popitem(last=False)
