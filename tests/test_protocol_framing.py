"""NDJSON framing: line splitting, CRLF, blank lines, the line limit and resync."""

from __future__ import annotations

import pytest

from mcpkit.protocol import FrameTooLarge, LineBuffer, encode_line


def frames(buffer: LineBuffer, *chunks: bytes, eof: bool = False) -> list[bytes | FrameTooLarge]:
    out: list[bytes | FrameTooLarge] = []
    for chunk in chunks:
        buffer.feed(chunk)
        while (frame := buffer.next_frame()) is not None:
            out.append(frame)
    if eof and (last := buffer.end_of_input()) is not None:
        out.append(last)
    return out


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        pytest.param([b"a\nb\n"], [b"a", b"b"], id="two lines"),
        pytest.param([b"a\r\nb\r\n"], [b"a", b"b"], id="crlf"),
        pytest.param([b"\n\n  \r\n\t\na\n\n"], [b"a"], id="blank lines skipped"),
        pytest.param([b"ab", b"c", b"\nd", b"\n"], [b"abc", b"d"], id="split across chunks"),
        pytest.param([b"a\r", b"\n"], [b"a"], id="crlf split"),
        pytest.param([b"x" * 10 + b"\n"], [b"x" * 10], id="exactly at limit"),
        pytest.param([b"x" * 11 + b"\nok\n"], [FrameTooLarge(10), b"ok"], id="one byte over"),
        pytest.param([b"x" * 10 + b"\r\n"], [b"x" * 10], id="crlf not counted"),
        pytest.param(
            [b"x" * 8, b"x" * 8, b"x" * 8, b"\nok\n"],
            [FrameTooLarge(10), b"ok"],
            id="over across chunks",
        ),
        pytest.param(
            [b"x" * 50, b"y" * 50, b"\n", b"after\n"],
            [FrameTooLarge(10), b"after"],
            id="discard until newline",
        ),
    ],
)
def test_framing(chunks: list[bytes], expected: list[bytes | FrameTooLarge]) -> None:
    assert frames(LineBuffer(10), *chunks) == expected


def test_overlong_line_reported_once_and_memory_bounded() -> None:
    buffer = LineBuffer(100)
    out = frames(buffer, *([b"z" * 1000] * 100))
    assert out == [FrameTooLarge(100)]
    assert buffer.buffered == 0
    assert frames(buffer, b"tail\nnext\n") == [b"next"]


def test_unterminated_last_line_is_flushed_at_eof() -> None:
    assert frames(LineBuffer(10), b"a\nlast", eof=True) == [b"a", b"last"]
    assert frames(LineBuffer(10), b"a\n  ", eof=True) == [b"a"]
    assert frames(LineBuffer(3), b"toolong", eof=True) == [FrameTooLarge(3)]


def test_eof_while_discarding_yields_nothing() -> None:
    assert frames(LineBuffer(3), b"xxxxxxxx", eof=True) == [FrameTooLarge(3)]


def test_many_small_lines_in_one_chunk() -> None:
    chunk = b"".join(b"%d\n" % i for i in range(10_000))
    assert frames(LineBuffer(100), chunk) == [b"%d" % i for i in range(10_000)]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineBuffer(0)


def test_encode_line() -> None:
    assert encode_line(b"{}") == b"{}\n"
    with pytest.raises(ValueError):
        encode_line(b"{\n}")
