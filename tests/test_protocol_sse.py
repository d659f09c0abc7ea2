"""Server-Sent Events: the encoder, the parser (HTML Living Standard §9.2.5-§9.2.6 and its
examples), the event size limit, and hypothesis properties (round trip, any chunking,
exception allowlist)."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.exceptions import LocalProtocolError, RemoteProtocolError
from mcpkit.protocol import (
    OVERSIZED_HEAD,
    SSEEvent,
    SSEParser,
    encode_comment,
    encode_event,
)

BOM = b"\xef\xbb\xbf"


def ev(data: bytes, event: str = "message", id: str | None = None) -> SSEEvent:
    return SSEEvent(data=data, event=event, id=id)


def parse(*chunks: bytes, limit: int = 1 << 20) -> tuple[list[SSEEvent], str, int | None]:
    parser = SSEParser(max_event_bytes=limit)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    assert parser.close() == []
    return events, parser.last_event_id, parser.retry


# --------------------------------------------------------------------------- encoder


@pytest.mark.parametrize(
    ("data", "kwargs", "expected"),
    [
        pytest.param(b"{}", {}, b"data: {}\n\n", id="plain"),
        pytest.param(b"{}", {"id": "7"}, b"id: 7\ndata: {}\n\n", id="with id"),
        pytest.param(None, {"id": "s1-0"}, b"id: s1-0\ndata:\n\n", id="priming event"),
        pytest.param(
            None, {"id": "0", "retry": 3000}, b"id: 0\nretry: 3000\ndata:\n\n", id="priming+retry"
        ),
        pytest.param(b"", {}, b"data:\n\n", id="empty data"),
        pytest.param(None, {}, b"data:\n\n", id="none data without id"),
        pytest.param(b"x", {"retry": 0}, b"retry: 0\ndata: x\n\n", id="retry zero"),
        pytest.param(b"x", {"event": "ping"}, b"event: ping\ndata: x\n\n", id="event type"),
        pytest.param(
            b"x",
            {"retry": 5, "event": "e", "id": "i"},
            b"id: i\nevent: e\nretry: 5\ndata: x\n\n",
            id="field order",
        ),
        pytest.param(b"a\nb", {}, b"data: a\ndata: b\n\n", id="lf"),
        pytest.param(b"a\r\nb", {}, b"data: a\ndata: b\n\n", id="crlf"),
        pytest.param(b"a\rb", {}, b"data: a\ndata: b\n\n", id="cr"),
        pytest.param(b"a\r\rb", {}, b"data: a\ndata: \ndata: b\n\n", id="cr cr"),
        pytest.param(b"a\n\r\nb\r", {}, b"data: a\ndata: \ndata: b\ndata: \n\n", id="mixed"),
        pytest.param(b"\n", {}, b"data: \ndata: \n\n", id="only newline"),
        pytest.param(b" lead", {}, b"data:  lead\n\n", id="leading space kept"),
        pytest.param(b"x", {"id": ""}, b"id: \ndata: x\n\n", id="empty id resets"),
        pytest.param(
            b"x",
            {"id": "\u00e9", "event": "\u2603"},
            "id: é\nevent: ☃\ndata: x\n\n".encode(),
            id="utf8",
        ),
    ],
)
def test_encode_event(data: bytes | None, kwargs: dict[str, Any], expected: bytes) -> None:
    assert encode_event(data, **kwargs) == expected


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"event": "a\nb"}, id="event lf"),
        pytest.param({"event": "a\rb"}, id="event cr"),
        pytest.param({"id": "a\n"}, id="id lf"),
        pytest.param({"id": "\ra"}, id="id cr"),
        pytest.param({"id": "a\0b"}, id="id nul"),
        pytest.param({"id": "\ud800"}, id="id surrogate"),
        pytest.param({"event": "\udfff"}, id="event surrogate"),
        pytest.param({"retry": -1}, id="negative retry"),
        pytest.param({"retry": True}, id="bool retry"),
        pytest.param({"retry": cast(Any, 1.5)}, id="float retry"),
    ],
)
def test_encode_event_rejects(kwargs: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        encode_event(b"x", **kwargs)
    with pytest.raises(LocalProtocolError):
        encode_event(b"a\nb", **kwargs)  # the general path too


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", b":\n\n"), ("keep-alive", b": keep-alive\n\n"), ("é", ": é\n\n".encode())],
)
def test_encode_comment(text: str, expected: bytes) -> None:
    assert encode_comment(text) == expected
    assert parse(expected) == ([], "", None)


@pytest.mark.parametrize("text", ["a\nb", "a\r", "\ud800"])
def test_encode_comment_rejects(text: str) -> None:
    with pytest.raises(LocalProtocolError):
        encode_comment(text)


# --------------------------------------------------------------------------- parser

SPEC_COMMENTS_AND_IDS = (
    b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
)


@pytest.mark.parametrize(
    ("chunks", "events", "last_id", "retry"),
    [
        pytest.param(
            [b"data: YHOO\ndata: +2\ndata: 10\n\n"],
            [ev(b"YHOO\n+2\n10")],
            "",
            None,
            id="spec: stock ticker (data lines joined with LF)",
        ),
        pytest.param(
            [SPEC_COMMENTS_AND_IDS],
            [ev(b"first event", id="1"), ev(b"second event", id=""), ev(b" third event")],
            "",
            None,
            id="spec: comments, id, id without value resets",
        ),
        pytest.param(
            [b"data\n\ndata\ndata\n\ndata:"],
            [ev(b""), ev(b"\n")],
            "",
            None,
            id="spec: data without colon; unterminated last block discarded",
        ),
        pytest.param(
            [b"data:test\n\ndata: test\n\n"],
            [ev(b"test"), ev(b"test")],
            "",
            None,
            id="spec: one optional space after the colon",
        ),
        pytest.param(
            [
                b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
            ],
            [ev(b"73857293", "add"), ev(b"2153", "remove"), ev(b"113411", "add")],
            "",
            None,
            id="spec: event types",
        ),
        pytest.param([b"data:  two\n\n"], [ev(b" two")], "", None, id="only one space removed"),
        pytest.param([b"data:a:b\n\n"], [ev(b"a:b")], "", None, id="colon in value"),
        pytest.param([b"event:\ndata: x\n\n"], [ev(b"x")], "", None, id="empty event type"),
        pytest.param([b"event: a\n\ndata: x\n\n"], [ev(b"x")], "", None, id="type reset by blank"),
        pytest.param([b"id: 5\n\n"], [], "5", None, id="id-only block sets last id"),
        pytest.param(
            [b"id: 5\ndata:\n\n"], [ev(b"", id="5")], "5", None, id="priming event: empty data"
        ),
        pytest.param(
            [b"id: 1\n\nid: a\x00b\ndata: x\n\n"],
            [ev(b"x")],
            "1",
            None,
            id="id with NUL ignored",
        ),
        pytest.param([b"id: 1\nid: 2\ndata: x\n\n"], [ev(b"x", id="2")], "2", None, id="last id"),
        pytest.param(
            [b"id: 1\ndata: a\n\ndata: b\n\n"],
            [ev(b"a", id="1"), ev(b"b")],
            "1",
            None,
            id="event id is per event; last id persists",
        ),
        pytest.param([b"retry: 1000\n"], [], "", 1000, id="retry digits"),
        pytest.param([b"retry: 007\n"], [], "", 7, id="retry leading zeros"),
        pytest.param([b"retry: 5\nretry: 10a\n"], [], "", 5, id="retry non-digit ignored"),
        pytest.param([b"retry: -1\nretry:\nretry: 1.5\n"], [], "", None, id="retry invalid"),
        pytest.param([b"retry:  100\n"], [], "", None, id="retry two spaces ignored"),
        pytest.param(["retry: ١٢\n".encode()], [], "", None, id="retry non-ASCII digits"),
        pytest.param([b"retry: " + b"9" * 19 + b"\n"], [], "", None, id="retry absurd ignored"),
        pytest.param([b"retry: " + b"9" * 18 + b"\n"], [], "", 10**18 - 1, id="retry 18 digits"),
        pytest.param([b": comment\n:\n\n"], [], "", None, id="comments"),
        pytest.param(
            [b"foo: bar\nDATA: y\ndata: x\n\n"], [ev(b"x")], "", None, id="unknown fields"
        ),
        pytest.param([b"data: x"], [], "", None, id="unterminated line at EOF"),
        pytest.param([b"data: x\n"], [], "", None, id="no blank line at EOF"),
        pytest.param([b"id: 9"], [], "", None, id="unterminated id line ignored"),
        pytest.param(
            [b"id: 1\ndata: a\n\nid: 2\ndata: b\n"],
            [ev(b"a", id="1")],
            "1",
            None,
            id="id of an event cut off before its blank line is not committed",
        ),
        pytest.param([b"id: 1\n\nid\n\n"], [], "", None, id="empty id clears the last id"),
        pytest.param([BOM + b"data: x\n\n"], [ev(b"x")], "", None, id="BOM skipped"),
        pytest.param(
            [BOM[:1], BOM[1:2], BOM[2:] + b"data: x\n\n"], [ev(b"x")], "", None, id="BOM split"
        ),
        pytest.param([BOM + BOM + b"data: x\n\n"], [], "", None, id="second BOM is a field name"),
        pytest.param([b"\xef\xbbdata: x\n\n"], [], "", None, id="partial BOM is data"),
        pytest.param([b"\xef", b"\xbb", b"x\n\ndata: y\n\n"], [ev(b"y")], "", None, id="no BOM"),
        pytest.param(
            [b"data: x\r\rdata: y\r\n\r\n"], [ev(b"x"), ev(b"y")], "", None, id="CR, CRLF"
        ),
        pytest.param([b"data: x\r", b"\n\r", b"\n"], [ev(b"x")], "", None, id="CRLF split"),
        pytest.param(
            [b"data: x\r", b"", b"\ndata: y\r\n\r\n"],
            [ev(b"x\ny")],
            "",
            None,
            id="CR, empty chunk, LF",
        ),
        pytest.param([b"data: x\n\r\n"], [ev(b"x")], "", None, id="LF then CRLF"),
        pytest.param([b"data: a\x00\xff\n\n"], [ev(b"a\x00\xff")], "", None, id="data stays bytes"),
        pytest.param(
            [b"event: \xff\ndata: x\n\n"], [ev(b"x", "\ufffd")], "", None, id="bad UTF-8 event"
        ),
        pytest.param([b"id: \xff\n\n"], [], "\ufffd", None, id="bad UTF-8 id"),
        pytest.param([b"data\xff: x\n\n"], [], "", None, id="bad UTF-8 field name"),
        pytest.param([b"da", b"ta: x", b"\n", b"\n"], [ev(b"x")], "", None, id="split anywhere"),
    ],
)
def test_parser(
    chunks: list[bytes], events: list[SSEEvent], last_id: str, retry: int | None
) -> None:
    assert parse(*chunks) == (events, last_id, retry)
    assert parse(*(bytes([b]) for b in b"".join(chunks))) == (events, last_id, retry)


def test_close_discards_and_resets_but_keeps_last_id_and_retry() -> None:
    parser = SSEParser()
    assert parser.feed(b"id: 3\nretry: 500\n\ndata: lost") == []
    assert parser.close() == []
    assert (parser.last_event_id, parser.retry) == ("3", 500)
    # A new stream (reconnection): the BOM rule applies again, nothing of the old is left.
    assert parser.feed(BOM + b"data: new\n\n") == [ev(b"new")]
    assert parser.last_event_id == "3"


def test_an_event_cut_off_by_the_connection_does_not_move_the_resume_point() -> None:
    # The connection breaks after the answer's id line: resuming from that id would skip
    # the answer, which never arrived. A resumed stream's id-less events keep the point.
    parser = SSEParser()
    assert parser.feed(b"id: 1\ndata: a\n\nid: 2\ndata: {partial") == [ev(b"a", id="1")]
    assert parser.last_event_id == "1"
    assert parser.close() == []
    assert parser.last_event_id == "1"
    assert parser.feed(b"data: c\n\n") == [ev(b"c")]
    assert parser.last_event_id == "1"
    assert parser.feed(b"id: 2\ndata: b\n\n") == [ev(b"b", id="2")]
    assert parser.last_event_id == "2"
    # The server refused to resume from there: the next stream starts without a position.
    parser.close()
    parser.forget_last_event_id()
    assert parser.feed(b"data: d\n\n") == [ev(b"d")]
    assert parser.last_event_id == ""


def test_cr_at_end_then_close_then_lf_starts_fresh() -> None:
    parser = SSEParser()
    parser.feed(b"data: x\r")
    parser.close()
    assert parser.feed(b"\ndata: y\n\n") == [ev(b"y")]  # the LF is a blank line of the new stream


def test_long_line_fed_one_byte_at_a_time() -> None:
    """Linear: the pending line is never rescanned (a quadratic parser would crawl here)."""
    payload = b"x" * 300_000
    parser = SSEParser()
    for byte in b"data: " + payload + b"\n":
        assert parser.feed(bytes([byte])) == []
    assert parser.feed(b"\n") == [ev(payload)]


def test_many_events_in_one_chunk() -> None:
    stream = b"".join(encode_event(b"%d" % i, id=str(i)) for i in range(10_000))
    events, last_id, _ = parse(stream)
    assert [e.data for e in events] == [b"%d" % i for i in range(10_000)]
    assert last_id == "9999"


def feed_all(parser: SSEParser, chunks: list[bytes]) -> list[SSEEvent]:
    return [event for chunk in chunks for event in parser.feed(chunk)]


# --------------------------------------------------------------------------- the size limit
# Counted: the current line without its line ending, plus the data buffer (each data
# line's value plus one LF). Limit 10 below.


@pytest.mark.parametrize(
    ("chunks", "ok"),
    [
        pytest.param([b"data:12345\n\n"], True, id="line exactly at limit"),
        pytest.param([b"data:123456\n\n"], False, id="line one over"),
        pytest.param([b"data:12345\r\n\r\n"], True, id="line ending not counted"),
        pytest.param([b"data:1234", b"5", b"\n\n"], True, id="partial at limit"),
        pytest.param([b"data:1234", b"56"], False, id="partial one over"),
        pytest.param([b"data:12\ndata:12\n\n"], True, id="3 + 7 = 10"),
        pytest.param([b"data:12\ndata:123\n\n"], False, id="3 + 8 = 11"),
        pytest.param([b"data:12\ndata:12"], True, id="3 + partial 7 = 10"),
        pytest.param([b"data:12\ndata:123"], False, id="3 + partial 8 = 11"),
        pytest.param([b"data:12\ndata:1\n\ndata:12\ndata:12\n\n"], True, id="reset per event"),
        pytest.param([b": 34567890\n"], True, id="comment at limit"),
        pytest.param([b": 345678901\n"], False, id="comment one over"),
        pytest.param([b"data:12\n: 345678\n"], False, id="data buffer plus comment"),
        pytest.param([b"id: 1234567\n\n" * 3], False, id="id line one over"),
    ],
)
def test_limit(chunks: list[bytes], ok: bool) -> None:
    for chunking in (chunks, [b"".join(chunks)], [bytes([b]) for b in b"".join(chunks)]):
        parser = SSEParser(max_event_bytes=10)
        if ok:
            feed_all(parser, chunking)
            parser.close()
        else:
            with pytest.raises(RemoteProtocolError, match=r"limit of 10 bytes \(max_event_bytes\)"):
                feed_all(parser, chunking)


def test_after_the_limit_the_parser_stays_failed() -> None:
    parser = SSEParser(max_event_bytes=10)
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"data: 0123456789\n")
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"data: ok\n\n")
    with pytest.raises(RemoteProtocolError):
        parser.close()


def test_events_before_the_violation_are_returned_then_the_error() -> None:
    parser = SSEParser(max_event_bytes=10)
    assert parser.error is None
    assert parser.feed(b"data: a\n\ndata: 0123456789\n") == [ev(b"a")]
    error: str | None = parser.error  # mypy narrowed it to None above
    assert error is not None
    assert "limit of 10 bytes" in error
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"")
    parser = SSEParser(max_event_bytes=10)
    assert parser.feed(b"data: a\n\ndata: 0123456789") == [ev(b"a")]
    with pytest.raises(RemoteProtocolError):
        parser.close()


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_positive(limit: int) -> None:
    with pytest.raises(LocalProtocolError):
        SSEParser(max_event_bytes=limit)


def skipped(head: bytes, event: str = "message", id: str | None = None) -> SSEEvent:
    return SSEEvent(data=head, event=event, id=id, oversized=True)


BIG = b"0123456789" * 40  # 400 bytes: over the limit below, past OVERSIZED_HEAD


@pytest.mark.parametrize(
    ("stream", "expected", "last_id"),
    [
        pytest.param(
            b"data: a\n\ndata: " + BIG + b"\n\ndata: b\n\n",
            [ev(b"a"), skipped(BIG[:OVERSIZED_HEAD]), ev(b"b")],
            "",
            id="skipped between two events",
        ),
        pytest.param(
            b'event: message\nid: 7\ndata: {"id":5,' + BIG + b"\ndata: more\n\ndata: b\n\n",
            [skipped((b'{"id":5,' + BIG)[:OVERSIZED_HEAD], id="7"), ev(b"b")],
            "7",
            id="its type, id and head are kept, its other lines skipped",
        ),
        pytest.param(
            b"data: first\ndata: " + BIG + b"\n\ndata: b\n\n",
            [skipped(b"first"), ev(b"b")],
            "",
            id="crossed by a later data line: the data so far is the head",
        ),
        pytest.param(
            b": " + BIG + b"\ndata: lost\n\ndata: b\n\n",
            [skipped(b""), ev(b"b")],
            "",
            id="crossed by a comment: the rest of the event is skipped",
        ),
        pytest.param(
            b"data: " + BIG + b"\r\n\r\ndata: b\r\n\r\n",
            [skipped(BIG[:OVERSIZED_HEAD]), ev(b"b")],
            "",
            id="CRLF",
        ),
    ],
)
def test_skip_oversized_skips_the_event_and_goes_on(
    stream: bytes, expected: list[SSEEvent], last_id: str
) -> None:
    for chunking in ([stream], [bytes([b]) for b in stream], [stream[:300], stream[300:]]):
        parser = SSEParser(max_event_bytes=300, skip_oversized=True)
        assert feed_all(parser, chunking) == expected
        assert parser.last_event_id == last_id
        assert parser.error is None
        assert parser.close() == []


def test_an_oversized_event_cut_off_by_the_connection_is_dropped() -> None:
    parser = SSEParser(max_event_bytes=10, skip_oversized=True)
    assert parser.feed(b"id: 1\ndata: 0123456789") == []
    assert parser.close() == []
    assert parser.last_event_id == ""
    assert parser.feed(b"data: ok\n\n") == [ev(b"ok")]


# --------------------------------------------------------------------------- properties

no_breaks = st.characters(codec="utf-8", exclude_characters="\r\n")
ids = st.none() | st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=8)
events = st.lists(
    st.tuples(
        st.binary(max_size=40) | st.sampled_from([b"", b"\r", b"\n", b"\r\n", b"a\r\nb\rc\nd"]),
        st.none() | st.text(no_breaks, max_size=8),
        ids,
        st.none() | st.integers(min_value=0, max_value=10**12),
    ),
    max_size=8,
)


@given(events)
@settings(max_examples=300)
def test_round_trip(items: list[tuple[bytes, str | None, str | None, int | None]]) -> None:
    stream = b"".join(encode_event(d, event=e, id=i, retry=r) for d, e, i, r in items)
    expected = [ev(re.sub(rb"\r\n?", b"\n", d), e or "message", i) for d, e, i, _ in items]
    last_id = next((i for _, _, i, _ in reversed(items) if i is not None), "")
    retry = next((r for _, _, _, r in reversed(items) if r is not None), None)
    assert parse(stream) == (expected, last_id, retry)


FRAGMENTS = [
    b"data", b"id", b"event", b"retry", b"x", b"1", b"\xff", b"\x00",
    b":", b": ", b" ", b"\r", b"\n", b"\r\n", b"\n\n", BOM, b"\xef",
]  # fmt: skip


@st.composite
def chunked_streams(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    stream = b"".join(draw(st.lists(st.sampled_from(FRAGMENTS) | st.binary(max_size=4))))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    bounds = [0, *cuts, len(stream)]
    return stream, [stream[a:b] for a, b in pairwise(bounds)]


def run(
    chunks: list[bytes], limit: int, *, skip: bool = False
) -> tuple[list[SSEEvent], str, int | None, bool]:
    """Events until a failure, last id, retry, and whether the limit was hit (``skip``:
    a parser that skips oversized events, which never fails)."""
    parser = SSEParser(max_event_bytes=limit, skip_oversized=skip)
    out: list[SSEEvent] = []
    try:
        for chunk in chunks:
            result = parser.feed(chunk)
            assert isinstance(result, list)
            assert all(isinstance(e, SSEEvent) for e in result)
            out += result
        parser.close()
    except RemoteProtocolError:
        with pytest.raises(RemoteProtocolError):
            parser.feed(b"data: more\n\n")
        return out, parser.last_event_id, parser.retry, True
    return out, parser.last_event_id, parser.retry, False


@given(chunked_streams())
@settings(max_examples=500)
def test_any_chunking_gives_the_same_result(sample: tuple[bytes, list[bytes]]) -> None:
    stream, chunks = sample
    whole = run([stream], 1 << 20)
    assert not whole[3]
    assert run(chunks, 1 << 20) == whole
    assert run([bytes([b]) for b in stream], 1 << 20) == whole


@given(chunked_streams(), st.integers(min_value=1, max_value=24))
@settings(max_examples=500)
def test_limit_outcome_does_not_depend_on_chunking(
    sample: tuple[bytes, list[bytes]], limit: int
) -> None:
    stream, chunks = sample
    assert run(chunks, limit) == run([stream], limit)


@given(chunked_streams(), st.integers(min_value=1, max_value=24))
@settings(max_examples=500)
def test_skipping_does_not_depend_on_chunking(
    sample: tuple[bytes, list[bytes]], limit: int
) -> None:
    stream, chunks = sample
    whole = run([stream], limit, skip=True)
    assert not whole[3]
    assert run(chunks, limit, skip=True) == whole
    assert run([bytes([b]) for b in stream], limit, skip=True) == whole
    # Below the limit, the same events as a parser that fails on it.
    failing = run([stream], limit)
    if not failing[3]:
        assert whole == failing
    assert all(len(e.data) <= OVERSIZED_HEAD for e in whole[0] if e.oversized)


@given(st.lists(st.binary(max_size=64), max_size=10), st.integers(min_value=1, max_value=200))
@settings(max_examples=500)
def test_arbitrary_bytes_only_events_or_remote_protocol_error(
    chunks: list[bytes], limit: int
) -> None:
    run(chunks, limit)  # run() lets any exception but RemoteProtocolError through


def test_encode_retry_sets_the_delay_without_dispatching() -> None:
    from mcpkit.protocol import encode_retry

    parser = SSEParser()
    assert encode_retry(250) == b"retry: 250\n\n"
    assert parser.feed(encode_retry(250)) == []
    assert parser.retry == 250
    for bad in (-1, True, 1.5):
        with pytest.raises(LocalProtocolError):
            encode_retry(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("line", [b"data: ab\n", b"data: abcdef\n", b"data:\n"], ids=str)
def test_short_data_lines_hold_no_more_than_the_limit(line: bytes) -> None:
    """The data buffer is the spec's buffer itself: an event of many short data lines
    (under the limit) costs about what the limit counts, not ~40 bytes per line."""
    import tracemalloc

    limit = 256 * 1024
    value = line[len(b"data: ") : -1] if line.startswith(b"data: ") else b""
    count = (limit - len(line)) // (len(value) + 1)  # the event just fits
    chunk = line * 4096
    parser = SSEParser(max_event_bytes=limit)
    tracemalloc.start()
    try:
        for _ in range(count // 4096):
            assert parser.feed(chunk) == []
        assert parser.feed(line * (count % 4096)) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [event] = parser.feed(b"\n")
    assert event.data == b"\n".join([value] * count)
    # The buffer (<= limit, plus growth slack) and one chunk's lines; a list of lines
    # took 14 times the limit for 2-byte values.
    assert peak < 3 * limit, f"peak {peak / limit:.1f} x the limit"
