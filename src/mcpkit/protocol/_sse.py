"""Server-Sent Events: an incremental, linear-time parser (sans-I/O); the encoder is
``_sse_encode.py``.

Streamable HTTP carries server-to-client messages as an SSE stream (MCP 2025-11-25
``basic/transports.mdx``, "Streamable HTTP"). The wire format and the parsing algorithm are
the HTML Living Standard's "Server-sent events" §9.2.5 "Parsing an event stream" and §9.2.6
"Interpreting an event stream"; the comments below quote the steps they implement.

The parser never rescans bytes: each chunk is split into lines once (``bytes.splitlines``
splits on exactly CRLF, LF and CR, the three line endings §9.2.5 allows), and only the
unterminated tail of a chunk is kept for the next one. Memory for one event is bounded by
``max_event_bytes``.
"""

from __future__ import annotations

import msgspec

from ..exceptions import LocalProtocolError, RemoteProtocolError

__all__ = ["OVERSIZED_HEAD", "SSEEvent", "SSEParser"]

_BOM = b"\xef\xbb\xbf"
# A reconnection time with more significant digits than this is ignored: no sane client
# waits 10**18 ms, and int() of a long digit string is slow (and capped by
# sys.int_max_str_digits).
_MAX_RETRY_DIGITS = 18


# --------------------------------------------------------------------------- parser


class SSEEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One dispatched SSE event.

    Attributes:
        data: the event's data lines joined with LF (§9.2.6), as bytes.
        event: the event type; ``message`` when the stream named none (or an empty one).
        id: the value of this event's own ``id`` field, if it had one; the running "last
            event ID" is :attr:`SSEParser.last_event_id`.
        oversized: the event exceeded the limit and was skipped (a parser made with
            ``skip_oversized``): ``data`` holds only its first bytes (at most
            :data:`OVERSIZED_HEAD`), to tell whose message it was.
    """

    data: bytes
    event: str = "message"
    id: str | None = None
    oversized: bool = False


#: How much of an oversized event's data a skipping parser keeps (see SSEEvent.oversized).
OVERSIZED_HEAD = 256


class SSEParser:
    """Incremental SSE parser (HTML Living Standard §9.2.5-§9.2.6).

    Feed the bytes of one stream as they arrive with :meth:`feed`, which returns the events
    completed so far; call :meth:`close` at the end of the stream (it also readies the
    parser for the next connection, keeping :attr:`last_event_id` and :attr:`retry`).

    ``max_event_bytes`` bounds the memory held for one event: at every moment the bytes of
    the line being read (without its line ending) plus the data collected for the current
    event (each data line's value plus one LF) must not exceed it. So a single
    ``data:<value>`` line of exactly ``max_event_bytes`` bytes is accepted, one byte more is
    not. The check is applied to every complete line as well as to the unterminated tail, so
    the outcome does not depend on how the stream is split into chunks.

    Attributes:
        last_event_id: the spec's "last event ID string": the ``id`` of the last block
            that was complete (ended by a blank line), also of blocks that dispatch nothing;
            ``""`` initially. Send it as ``Last-Event-ID`` when resuming. An ``id`` line
            whose block never ended (the connection broke inside it) does not count: the
            event was not received (§9.2.6, "dispatch the event", step 1; an incomplete
            event "is not dispatched").
        retry: the last valid ``retry`` value (the reconnection time, ms), or ``None``.

    Args:
        max_event_bytes: the limit described above.
        skip_oversized: an event over the limit is skipped to its end (the blank line) and
            reported as an :class:`SSEEvent` with ``oversized`` set, and the stream goes
            on; by default the parser fails instead (where one stream carries one answer,
            nothing after it matters).

    Raises:
        LocalProtocolError: ``max_event_bytes`` is not positive.
    """

    __slots__ = (
        "_bom_pending",
        "_data",
        "_data_size",
        "_error",
        "_event_id",
        "_event_type",
        "_head",
        "_id_buffer",
        "_max",
        "_partial",
        "_skip_lf",
        "_skip_mid",
        "_skip_oversized",
        "_skipped",
        "last_event_id",
        "retry",
    )

    def __init__(
        self, *, max_event_bytes: int = 16 * 1024 * 1024, skip_oversized: bool = False
    ) -> None:
        if max_event_bytes <= 0:
            raise LocalProtocolError("max_event_bytes must be positive")
        self._max = max_event_bytes
        self._skip_oversized = skip_oversized
        self.last_event_id = ""
        self.retry: int | None = None
        self._id_buffer = ""
        self._error: str | None = None
        self._reset()

    def _reset(self) -> None:
        self._bom_pending = True  # the stream's first bytes may still be a BOM
        self._head = b""  # up to two bytes that might begin a BOM
        self._skip_lf = False  # the last line ended with CR: an LF next is part of it
        self._partial = bytearray()  # the unterminated last line
        # The data lines joined with LF as they come (the spec's data buffer less its last
        # LF): one bytes for the usual single line, a bytearray from the second on. A list
        # of one item per line would cost ~40 bytes a line: short data lines could make it
        # hold ~20 times max_event_bytes.
        self._data: bytes | bytearray = b""
        self._data_size = 0  # len of the spec's data buffer: values plus one LF each
        self._event_type = ""
        self._event_id: str | None = None
        # Skipping an oversized event (skip_oversized): the head of its data, else None;
        # and whether the line being skipped continues in the next chunk.
        self._skipped: bytes | None = None
        self._skip_mid = False
        # The spec starts every stream's "last event ID buffer" empty, so an event without
        # an id on a resumed stream would forget the resume position; it starts from the
        # last committed id instead (an empty ``id`` line still clears it).
        self._id_buffer = self.last_event_id

    def forget_last_event_id(self) -> None:
        """Start over without a resume position (the server refused to resume from
        :attr:`last_event_id`); the next stream's ids set it again."""
        self.last_event_id = self._id_buffer = ""

    @property
    def error(self) -> str | None:
        """Why the parser failed (an event exceeded the limit), or ``None``. Check it after
        handling the events :meth:`feed` returned: the next call raises it, but a stream
        may send nothing more."""
        return self._error

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume the next bytes of the stream; return the events they complete.

        If the limit is crossed after some events were completed by this chunk, those
        events are returned and the error is raised by the next call (nothing valid is
        lost).

        Raises:
            RemoteProtocolError: an event exceeded ``max_event_bytes``; the parser stays
                failed and raises on every later call.
        """
        if self._error is not None:
            raise RemoteProtocolError(self._error)
        if self._bom_pending:
            # §9.2.5: one leading U+FEFF BOM is skipped; it may arrive split across chunks.
            head = self._head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head
                return []
            self._bom_pending = False
            self._head = b""
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
        if self._skip_lf and chunk:
            # §9.2.5: CRLF is one line ending even when a chunk ends between CR and LF.
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if not chunk:
            return []
        events: list[SSEEvent] = []
        lines = chunk.splitlines(keepends=True)
        last = lines[-1]
        tail = b""
        if last[-1] not in b"\r\n":
            tail = lines.pop()
        elif last[-1] == 0x0D:
            self._skip_lf = True
        partial = self._partial
        for piece in lines:
            # A piece holds line-ending bytes only at its end (at most CRLF).
            line = piece.rstrip(b"\r\n")
            if self._skipped is not None:
                if self._skip_mid:  # the end of a line begun in an earlier chunk
                    self._skip_mid = False
                elif not line:
                    events.append(self._end_skip())
                continue
            if partial:
                partial += line
                line = bytes(partial)
                partial.clear()
            if len(line) + self._data_size > self._max:
                if not self._skip_oversized:
                    return self._fail(events)
                self._begin_skip(line)
                continue
            if line:
                self._process_line(line)
                continue
            # §9.2.6 "dispatch the event", step 1: the block is complete, its id counts.
            self.last_event_id = self._id_buffer
            if self._data_size:  # (at least one data line, even an empty one)
                events.append(self._dispatch())
            else:
                # Step 2: an empty data buffer dispatches nothing; the buffers are reset.
                self._event_type = ""
                self._event_id = None
        if tail:
            if self._skipped is not None:
                self._skip_mid = True
            elif len(partial) + len(tail) + self._data_size > self._max:
                if not self._skip_oversized:
                    return self._fail(events)
                self._begin_skip(bytes(partial[: OVERSIZED_HEAD + 6]) + tail[: OVERSIZED_HEAD + 6])
                partial.clear()
                self._skip_mid = True
            else:
                partial += tail
        return events

    def _begin_skip(self, line: bytes) -> None:
        """The event being read crossed the limit at ``line`` (its start): keep the head
        of its data and discard the rest up to the blank line that ends it."""
        head = bytes(self._data[:OVERSIZED_HEAD])
        if not head and line.startswith(b"data:"):
            # Crossed inside an unterminated line, only its first max + 1 bytes may be
            # known: no more than those make the head, whatever the chunking.
            value = line[5:]
            size = min(OVERSIZED_HEAD, self._max - 5)
            head = (value[1:] if value[:1] == b" " else value)[: max(size, 0)]
        self._skipped = head
        self._data = b""
        self._data_size = 0

    def _end_skip(self) -> SSEEvent:
        # The oversized event's block is complete: its id counts, as any block's does.
        self.last_event_id = self._id_buffer
        event = SSEEvent(
            data=self._skipped or b"",
            event=self._event_type or "message",
            id=self._event_id,
            oversized=True,
        )
        self._skipped = None
        self._event_type = ""
        self._event_id = None
        return event

    def close(self) -> list[SSEEvent]:
        """End of the stream: discard any incomplete event and get ready for the next one.

        §9.2.6: "If the file ends in the middle of an event, before the final empty line,
        the incomplete event is not dispatched", so this always returns ``[]``. The BOM rule
        applies again to the next stream; :attr:`last_event_id` and :attr:`retry` survive,
        as a reconnecting client needs them.

        Raises:
            RemoteProtocolError: the parser failed earlier (see :meth:`feed`).
        """
        if self._error is not None:
            raise RemoteProtocolError(self._error)
        self._reset()
        return []

    def _fail(self, events: list[SSEEvent]) -> list[SSEEvent]:
        self._error = (
            f"an SSE event exceeded the limit of {self._max} bytes (max_event_bytes); "
            "the stream cannot be parsed further"
        )
        self._reset()
        self._bom_pending = False
        if events:
            return events  # raised by the next call; these events are complete and valid
        raise RemoteProtocolError(self._error)

    def _process_line(self, line: bytes) -> None:
        # §9.2.6: "If the line starts with a U+003A COLON character (:) - Ignore the line."
        if line[0] == 0x3A:
            return
        colon = line.find(b":")
        if colon < 0:
            # "Otherwise, the string is not empty but does not contain a U+003A COLON
            # character (:)": the whole line is the field name, the value is empty.
            name, value = line, b""
        else:
            name = line[:colon]
            # "If value starts with a U+0020 SPACE character, remove it from value."
            start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
            value = line[start:]
        # Field names are compared as bytes: a name with invalid UTF-8 decodes (with
        # replacement) to something that is never one of these four.
        if name == b"data":
            # "Append the field value to the data buffer, then append a single U+000A LINE
            # FEED (LF) character to the data buffer."
            if not self._data_size:
                self._data = value
            else:
                if type(self._data) is bytes:
                    self._data = bytearray(self._data)
                self._data += b"\n"
                self._data += value
            self._data_size += len(value) + 1
        elif name == b"event":
            self._event_type = value.decode("utf-8", "replace")
        elif name == b"id":
            # "If the field value does not contain U+0000 NULL, then set the last event ID
            # buffer to the field value. Otherwise, ignore the field."
            if b"\0" not in value:
                self._id_buffer = self._event_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            # "If the field value consists of only ASCII digits, then interpret the field
            # value as an integer in base ten ... Otherwise, ignore the field."
            # bytes.isdigit(): ASCII digits only, False when empty.
            significant = value.lstrip(b"0")
            if value.isdigit() and len(significant) <= _MAX_RETRY_DIGITS:
                self.retry = int(significant or b"0")
        # "Otherwise: The field is ignored."

    def _dispatch(self) -> SSEEvent:
        # §9.2.6 "dispatch the event": the data buffer without its trailing LF is the data
        # lines joined with LF; an empty event type buffer means "message".
        data = self._data
        event = SSEEvent(
            data=data if type(data) is bytes else bytes(data),
            event=self._event_type or "message",
            id=self._event_id,
        )
        self._data = b""
        self._data_size = 0
        self._event_type = ""
        self._event_id = None
        return event
