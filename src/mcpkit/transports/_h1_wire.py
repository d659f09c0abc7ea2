"""HTTP/1.1 on the wire for ``_h1.py``: a request's head and body out, a response in.

Timeouts are the caller's (one cancel scope per exchange); these only move bytes and turn
every failure into httpx's transport exceptions.
"""

from __future__ import annotations

import re
import ssl
from typing import Final

import anyio
import anyio.abc
import httptools
import httpx

__all__ = ["MAX_HEAD_BYTES", "Response", "receive_into", "request_head", "send_request"]

#: The most a response's status line and headers may take (httpcore's h11 allows 100 KiB;
#: MCP answers carry a handful of short headers).
MAX_HEAD_BYTES: Final = 64 * 1024
_READ_SIZE: Final = 64 * 1024
#: A request body up to this size goes out in the same write as its head.
_JOIN_BODY: Final = 64 * 1024
#: RFC 9110 section 5.1 (a token) and 5.5 (no CR, LF or NUL in a value): anything else
#: would end the header early or smuggle another one in.
_NAME: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE: Final = re.compile(rb"[\r\n\x00]")
_BROKEN: Final = (OSError, ssl.SSLError, anyio.BrokenResourceError, anyio.ClosedResourceError)


def _why(exc: BaseException) -> str:
    """What broke, in the system's words (anyio's broken-stream errors have none)."""
    cause = exc if str(exc) else exc.__cause__ or exc.__context__
    return str(cause) or type(exc).__name__ if cause is not None else type(exc).__name__


class Response:
    """httptools' callbacks for one response (and the informational ones before it)."""

    __slots__ = (
        "after",
        "chunks",
        "done",
        "framed",
        "head_bytes",
        "head_done",
        "headers",
        "informational",
        "keep_alive",
        "parser",
        "reason",
        "status",
    )

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []
        self.head_done = self.done = self.after = self.framed = self.keep_alive = False
        self.head_bytes = 0
        self.informational = False

    def on_message_begin(self) -> None:
        if self.done:  # bytes after the answer: the connection is not reused
            self.after = True

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # 100 Continue, 103 Early Hints: the answer follows
            self.informational = True
            self.headers = []
            self.reason = b""
            return
        self.status = status
        self.head_done = True
        for name, _ in self.headers:
            if name.lower() in (b"content-length", b"transfer-encoding"):
                self.framed = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if self.informational:
            self.informational = False
        elif not self.done:
            self.done = True
            # Asked here: after the message the parser has moved on (RFC 9112 section 9.3).
            self.keep_alive = self.parser.should_keep_alive()

    def feed(self, data: bytes, request: httpx.Request) -> None:
        """Parse the next bytes of the response.

        Raises:
            httpx.RemoteProtocolError: they are not HTTP/1.1, the server switched
                protocols, or the head grew past :data:`MAX_HEAD_BYTES`.
        """
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.after = True  # never reused
            if not self.head_done:
                raise httpx.RemoteProtocolError(
                    "the server switched protocols, which was not asked", request=request
                ) from None
        except httptools.HttpParserError as exc:
            if not self.done:
                raise httpx.RemoteProtocolError(
                    f"the server's HTTP response is malformed: {exc}", request=request
                ) from None
            self.after = True
        if not self.head_done:
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError(
                    f"the server's response head exceeds {MAX_HEAD_BYTES} bytes", request=request
                )


def request_head(request: httpx.Request) -> tuple[bytes, bool, bool]:
    """The request line and headers, with whether the body is chunked and whether the
    request asks for an upgrade.

    Raises:
        httpx.LocalProtocolError: a header name or value has a character HTTP forbids there.
    """
    lines = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), request.url.raw_path)]
    chunked = upgrade = False
    for name, value in request.headers.raw:
        if _NAME.fullmatch(name) is None or _BAD_VALUE.search(value) is not None:
            raise httpx.LocalProtocolError(
                f"header {name.decode('latin-1')!r} has a character HTTP forbids there",
                request=request,
            )
        lower = name.lower()
        if lower == b"transfer-encoding":
            chunked = value.lower() == b"chunked"
        elif lower == b"upgrade":
            upgrade = True
        lines.append(b"%s: %s\r\n" % (name, value))
    lines.append(b"\r\n")
    return b"".join(lines), chunked, upgrade


async def send_request(
    stream: anyio.abc.ByteStream, request: httpx.Request, head: bytes, chunked: bool
) -> None:
    """Write the request.

    Raises:
        httpx.WriteError: the connection broke.
    """
    try:
        try:
            body = request.content
        except httpx.RequestNotRead:  # a streamed body
            await stream.send(head)
            async for chunk in request.stream:  # type: ignore[union-attr]
                if chunk:
                    await stream.send(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            if chunked:
                await stream.send(b"0\r\n\r\n")
            return
        if len(body) <= _JOIN_BODY:
            await stream.send(head + body)
        else:
            await stream.send(head)
            await stream.send(body)
    except _BROKEN as exc:
        why = _why(exc)
        raise httpx.WriteError(
            f"the connection broke while sending: {why}", request=request
        ) from exc


async def receive_into(
    stream: anyio.abc.ByteStream, response: Response, request: httpx.Request
) -> None:
    """Read the next bytes of the response into ``response``.

    Raises:
        httpx.RemoteProtocolError: the server ended the connection before the response
            did, or sent something that is not an HTTP/1.1 response.
        httpx.ReadError: the connection broke.
    """
    try:
        data = await stream.receive(_READ_SIZE)
    except anyio.EndOfStream:
        if response.head_done and not response.framed:
            response.done = True  # the body ran to the connection's end (RFC 9112 6.3)
            response.keep_alive = False
            return
        what = "its response" if response.head_done else "a response"
        raise httpx.RemoteProtocolError(
            f"the server closed the connection before completing {what}", request=request
        ) from None
    except _BROKEN as exc:
        why = _why(exc)
        raise httpx.ReadError(
            f"the connection broke while reading: {why}", request=request
        ) from exc
    response.feed(data, request)
