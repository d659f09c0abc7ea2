"""Decoding a response body's ``Content-Encoding`` a bounded piece at a time.

httpx decodes a compressed body one network chunk at a time, whole: 64 KiB of gzip can
inflate to about 66 MB in a single step (deflate's ratio is at most about 1032:1), before
any of mcpkit's limits on events and bodies can look at it. So the HTTP clients read the
raw body and inflate it here with ``zlib``'s ``max_length``: never more than :data:`PIECE`
bytes at once, each piece handed to the reader (which applies its limits and may stop)
before the next is made. Memory stays bounded by one piece plus one raw chunk, whatever
the compression ratio.

Only what can be bounded this way is asked for (:data:`ACCEPT_ENCODING`, sent on every
request whatever the ``http_client``'s defaults say); a body in any other coding is
refused with a clear error rather than decoded without a bound (RFC 9110 section 8.4).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Final

from ..exceptions import RemoteProtocolError

__all__ = ["ACCEPT_ENCODING", "PIECE", "BodyDecoder", "body_decoder"]

#: The codings the clients ask for: the ones :class:`BodyDecoder` inflates with a bound.
ACCEPT_ENCODING: Final = "gzip, deflate"
#: The most decoded bytes made at once.
PIECE: Final = 64 * 1024
_GZIP: Final = zlib.MAX_WBITS | 16
_ZLIB: Final = zlib.MAX_WBITS
_RAW_DEFLATE: Final = -zlib.MAX_WBITS


class BodyDecoder:
    """Inflates a gzip or deflate body in pieces of at most :data:`PIECE` bytes.

    A gzip body may hold several members one after the other (RFC 1952 section 2.2); a
    ``deflate`` body is zlib data (RFC 9110 section 8.4.1.2), or raw deflate as some servers
    send it, told apart by its first bytes as browsers do.
    """

    __slots__ = ("_coding", "_head", "_inflater")

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._inflater = zlib.decompressobj(_GZIP if coding == "gzip" else _ZLIB)
        #: deflate: the first bytes, kept until there are two to tell zlib from raw
        #: deflate by; None once told (and for gzip).
        self._head: bytes | None = b"" if coding == "deflate" else None

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of the next raw chunk, made one at a time as they are taken.

        Raises:
            ValueError: the data is not valid for the coding (the message says where).
        """
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = None
            if not _zlib_header(data):
                self._inflater = zlib.decompressobj(_RAW_DEFLATE)
        while True:
            inflater = self._inflater
            try:
                piece = inflater.decompress(data, PIECE)
            except zlib.error as exc:
                raise ValueError(f"invalid {self._coding} data: {exc}") from None
            if piece:
                yield piece
            if inflater.eof:
                data = inflater.unused_data
                if not data:
                    return
                if self._coding != "gzip":
                    raise ValueError(f"{len(data)} bytes follow the end of the deflate data")
                # Another gzip member follows (a concatenation is one gzip body).
                self._inflater = zlib.decompressobj(_GZIP)
                continue
            # Output full: the input left, or (none left) output the inflater still holds.
            data = inflater.unconsumed_tail
            if not data and len(piece) < PIECE:
                return


def _zlib_header(data: bytes) -> bool:
    """Whether ``data`` starts with a zlib header (RFC 1950 section 2.2: method 8, and the
    first two bytes as a big-endian number a multiple of 31). Raw deflate data starts so
    only with a stored block padded with non-zero bits, which encoders do not write."""
    return data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


def body_decoder(content_encoding: str | None) -> BodyDecoder | None:
    """The decoder for a response's ``Content-Encoding`` (``None``: the body is as sent).

    Raises:
        RemoteProtocolError: a coding the clients did not ask for, or several layered.
    """
    if not content_encoding:
        return None
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return BodyDecoder("deflate" if codings[0] == "deflate" else "gzip")
    raise RemoteProtocolError(
        f"the server sent a body with Content-Encoding {content_encoding!r}; mcpkit asks for "
        f"{ACCEPT_ENCODING!r} only and decodes nothing else (it could not bound its size)"
    )
