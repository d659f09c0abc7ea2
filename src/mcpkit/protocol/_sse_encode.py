"""Server-Sent Events: the encoder (sans-I/O); the parser is ``_sse.py``.

The wire format is the HTML Living Standard's "Server-sent events" §9.2.5-§9.2.6; MCP
carries server-to-client messages in it (2025-11-25 ``basic/transports.mdx``).
"""

from __future__ import annotations

import re

from ..exceptions import LocalProtocolError

__all__ = ["encode_comment", "encode_event", "encode_retry"]

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def encode_event(
    data: bytes | None,
    *,
    event: str | None = None,
    id: str | None = None,  # the SSE field's name, shadowing the builtin on purpose
    retry: int | None = None,
) -> bytes:
    """Encode one SSE event, terminated by a blank line.

    Fields are written in the order ``id``, ``event``, ``retry``, ``data``, each as
    ``field: value``. ``data`` is split on CRLF, CR and LF into one ``data:`` line per line
    (§9.2.6: the receiver joins them with LF, so CRLF and CR in ``data`` arrive as LF).
    ``data=None`` writes one empty ``data:`` field: with an ``id`` this is the *priming
    event* MCP 2025-11-25 asks a server to send when it opens a stream (``id: X`` and an
    empty data field, SEP-1699) so the client can resume with ``Last-Event-ID``.

    Args:
        data: the event's payload (normally one UTF-8 JSON message), or ``None``.
        event: the event type; ``None`` leaves the default type ``message``.
        id: the event ID, which the client echoes in ``Last-Event-ID`` when it reconnects.
        retry: the reconnection time in milliseconds.

    Raises:
        LocalProtocolError: ``event`` contains CR or LF; ``id`` contains CR, LF or NUL (the
            receiver would ignore it, §9.2.6); a string is not encodable as UTF-8; ``retry``
            is negative or not an int.
    """
    # Fast path, the server's per-message case: one data line, no event type or retry.
    # (find, not `in`: `in` on bytes first tries its operand as an integer, and the
    # TypeError it raises and clears costs more than the search.)
    if (
        event is None
        and retry is None
        and data
        and data.find(b"\n") == -1
        and data.find(b"\r") == -1
    ):
        if id is None:
            return b"data: " + data + b"\n\n"
        return b"id: " + _id_bytes(id) + b"\ndata: " + data + b"\n\n"
    parts: list[bytes] = []
    if id is not None:
        parts.append(b"id: " + _id_bytes(id) + b"\n")
    if event is not None:
        if "\r" in event or "\n" in event:
            raise LocalProtocolError(f"an SSE event type must not contain CR or LF: {event!r}")
        parts.append(b"event: " + _utf8(event, "event type") + b"\n")
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 0:
            raise LocalProtocolError(
                f"SSE retry must be a non-negative int of milliseconds, got {retry!r}"
            )
        parts.append(b"retry: %d\n" % retry)
    if not data:
        parts.append(b"data:\n")
    else:
        # "data: " + each line; an empty line still yields an (empty) data field.
        parts.append(b"data: " + b"\ndata: ".join(_LINE_BREAK.split(data)) + b"\n")
    parts.append(b"\n")
    return b"".join(parts)


def encode_comment(text: str = "") -> bytes:
    """Encode a comment line and a blank line (``: text``), e.g. a keep-alive.

    A line starting with a colon is ignored by the receiver (§9.2.6); the blank line makes
    intermediaries flush. It dispatches nothing, since the data buffer is empty.

    Raises:
        LocalProtocolError: ``text`` contains CR or LF, or is not encodable as UTF-8.
    """
    if "\r" in text or "\n" in text:
        raise LocalProtocolError(f"an SSE comment must not contain CR or LF: {text!r}")
    if not text:
        return b":\n\n"
    return b": " + _utf8(text, "comment") + b"\n\n"


def encode_retry(retry_ms: int) -> bytes:
    """Encode a block that only sets the client's reconnection delay (``retry: N``): with
    no data field it dispatches no event (§9.2.6), unlike :func:`encode_event`.

    Raises:
        LocalProtocolError: ``retry_ms`` is not a non-negative integer.
    """
    if isinstance(retry_ms, bool) or not isinstance(retry_ms, int) or retry_ms < 0:
        raise LocalProtocolError(f"retry must be a non-negative integer, not {retry_ms!r}")
    return b"retry: %d\n\n" % retry_ms


def _id_bytes(value: str) -> bytes:
    # §9.2.6: an id field whose value contains NULL is ignored by the receiver, so sending
    # one is a local bug; CR/LF would end the line early.
    if "\r" in value or "\n" in value or "\0" in value:
        raise LocalProtocolError(f"an SSE event id must not contain CR, LF or NUL: {value!r}")
    return _utf8(value, "event id")


def _utf8(value: str, what: str) -> bytes:
    try:
        return value.encode()
    except UnicodeEncodeError as exc:
        raise LocalProtocolError(f"the SSE {what} is not encodable as UTF-8: {exc}") from None
