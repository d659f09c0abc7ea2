"""Newline-delimited JSON framing for byte-stream transports (stdio and friends).

MCP's stdio transport sends one JSON-RPC message per line; messages MUST NOT contain
embedded newlines (``basic/transports.mdx``, "stdio"). The buffer below splits a byte stream
into lines without ever rescanning bytes it has already searched (h11 ``_receivebuffer``
style), accepts CRLF, skips blank lines, and bounds the size of a line: an overlong line is
reported once and discarded up to its newline, so reading goes on with the next message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FrameTooLarge", "LineBuffer", "encode_line"]


#: How much of a discarded line is kept (enough for the members before a large one).
HEAD_BYTES = 256


@dataclass(frozen=True, slots=True)
class FrameTooLarge:
    """A line longer than the limit arrived; its bytes were discarded.

    Attributes:
        limit: the configured maximum line length in bytes.
        head: the line's first bytes (at most 256): enough to tell, say, whose answer
            it was, when the members before the large one are there (not compared).
    """

    limit: int
    head: bytes = field(default=b"", compare=False, repr=False)


class LineBuffer:
    """Split a byte stream into NDJSON frames.

    Feed bytes with :meth:`feed`; take frames with :meth:`next_frame` until it returns
    ``None`` (more data needed). At end of input call :meth:`end_of_input` to flush an
    unterminated last line.

    Args:
        max_line_bytes: largest accepted line, excluding the line ending.

    Raises:
        ValueError: ``max_line_bytes`` is not positive.
    """

    __slots__ = ("_buf", "_discarding", "_max", "_scan", "_start")

    def __init__(self, max_line_bytes: int) -> None:
        if max_line_bytes <= 0:
            raise ValueError("max_line_bytes must be positive")
        self._max = max_line_bytes
        self._buf = bytearray()
        self._start = 0  # offset of the first unconsumed byte
        self._scan = 0  # offset from which no newline has been searched yet
        self._discarding = False  # inside an overlong line, dropping bytes until "\n"

    def feed(self, data: bytes) -> None:
        """Append bytes read from the stream."""
        if self._start:
            # Compact before growing, so consumed lines never accumulate.
            del self._buf[: self._start]
            self._scan -= self._start
            self._start = 0
        self._buf += data

    def next_frame(self) -> bytes | FrameTooLarge | None:
        """Return the next complete line (without its line ending), a :class:`FrameTooLarge`
        marker for an overlong line, or ``None`` when more data is needed. Blank lines are
        skipped."""
        buf = self._buf
        while True:
            nl = buf.find(b"\n", self._scan)
            if nl < 0:
                pending = len(buf) - self._start
                if self._discarding:
                    self._reset()
                    return None
                if pending > self._max + 1:  # +1: room for a trailing "\r"
                    head = bytes(buf[self._start : self._start + HEAD_BYTES])
                    self._reset()
                    self._discarding = True
                    return FrameTooLarge(self._max, head)
                self._scan = len(buf)
                return None
            line = bytes(buf[self._start : nl])
            self._start = self._scan = nl + 1
            if self._discarding:
                self._discarding = False
                continue
            if line.endswith(b"\r"):
                line = line[:-1]
            if len(line) > self._max:
                return FrameTooLarge(self._max, line[:HEAD_BYTES])
            if not line.strip():
                continue
            return line

    def end_of_input(self) -> bytes | FrameTooLarge | None:
        """Flush at end of input: the unterminated last line, if any."""
        line = bytes(self._buf[self._start :]).rstrip(b"\r")
        discarding = self._discarding
        self._reset()
        self._discarding = False
        if discarding or not line.strip():
            return None
        if len(line) > self._max:
            return FrameTooLarge(self._max, line[:HEAD_BYTES])
        return line

    def _reset(self) -> None:
        self._buf.clear()
        self._start = self._scan = 0

    @property
    def buffered(self) -> int:
        """Bytes currently held and not yet returned (for tests and statistics)."""
        return len(self._buf) - self._start


def encode_line(message: bytes) -> bytes:
    """Frame one encoded message for a byte stream.

    Raises:
        ValueError: the message contains a newline (our encoder never produces one).
    """
    if b"\n" in message:
        raise ValueError("an NDJSON frame must not contain a newline")
    return message + b"\n"
