"""``SSEParser`` against a reference written from the HTML Living Standard's
event-stream interpretation (§9.2.5 "Parsing an event stream", §9.2.6 "Interpreting an
event stream") as plainly as the prose reads: decode the whole stream, drop one leading
BOM, split it into lines at CRLF, CR or LF, and apply the field rules line by line.

The round trips of ``test_protocol_sse.py`` only feed the parser what mcpkit's encoder
writes; here the streams are arbitrary sequences of the grammar's pieces (field names
with and without a colon, a space or not after it, comments, every line ending, BOMs,
NULs in ids, retry values that are not numbers), cut into arbitrary chunks. The parser
reads bytes and keeps ``data`` as bytes, so the streams are valid UTF-8 (the reference
decodes first, as a browser does); the parser's own ``SSEEvent.id`` is the event's own
``id`` field, which the reference tracks beside the spec's "last event ID buffer".
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Final

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcpkit.protocol import SSEParser

Outcome = tuple[list[tuple[str, str, str | None]], str, int | None]

_LINE_END: Final = re.compile(r"\r\n|\r|\n")
_MAX_RETRY: Final = 10**18 - 1  # mcpkit ignores longer retry values (a documented bound)


def reference(text: str) -> Outcome:
    """(events as (data, type, own id), last event ID, retry) per §9.2.5-§9.2.6."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # The last piece has no line ending: an incomplete line, never processed (and the
    # incomplete event it belongs to is "not dispatched").
    lines = _LINE_END.split(text)[:-1]
    events: list[tuple[str, str, str | None]] = []
    data, event_type, id_buffer, own_id = "", "", "", None
    last_id, retry = "", None
    for line in lines:
        if line == "":
            last_id = id_buffer  # the block is complete: its id counts (mcpkit's resume point)
            if data == "":
                event_type, own_id = "", None
                continue
            events.append((data.removesuffix("\n"), event_type or "message", own_id))
            data, event_type, own_id = "", "", None
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event_type = value
        elif name == "id":
            if "\0" not in value:
                id_buffer = own_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value) if int(value) <= _MAX_RETRY else retry
    return events, last_id, retry


def parsed(chunks: list[bytes]) -> Outcome:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    parser.close()
    found = [(e.data.decode(), e.event, e.id) for e in events]
    return found, parser.last_event_id, parser.retry


PIECES: Final = [
    "data", "data:", "data: ", "event:", "event: ", "id:", "id: ", "retry:", "retry: ",
    ":", ": comment", " ", "x", "é", "𝄞", "0", "7", "-1", "\0", "\ufeff",
    "\r", "\n", "\r\n", "\n\n", "\r\r", "datax:", "Data:", "dat", "a:", "id", "retry",
]  # fmt: skip


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    text = "".join(draw(st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40)))
    raw = text.encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    return text, [raw[a:b] for a, b in pairwise([0, *cuts, len(raw)])]


@given(streams())
@settings(max_examples=800, deadline=None, derandomize=True)
@example(("data: a\r\n\r\n", [b"data: a\r", b"\n\r", b"\n"]))
@example(("\ufeff\ufeffdata:x\n\n", [b"\xef\xbb", b"\xbf\xef\xbb\xbfdata:x\n\n"]))
@example(("id: 1\nid: 2\0\ndata:\n\nretry: 012\nretry:1x\n\n", []))
@example(("data\n\nevent\ndata:y\n\n:c\rid\r\r", []))
def test_the_parser_agrees_with_the_standard(sample: tuple[str, list[bytes]]) -> None:
    text, chunks = sample
    if not chunks:
        chunks = [text.encode()]
    expected = reference(text)
    assert parsed(chunks) == expected
    assert parsed([bytes([b]) for b in text.encode()]) == expected
