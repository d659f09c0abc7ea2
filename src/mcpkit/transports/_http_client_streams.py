"""The Streamable HTTP client's reading side: bounded bodies, SSE streams, and the GET
streams that resume a request's answer or listen for the server (what a message is:
``_http_client_messages``).

MCP ``basic/transports.mdx`` "Streamable HTTP" (2025-03-26, 2025-06-18, 2025-11-25):
"Sending Messages to the Server", "Listening for Messages from the Server",
"Resumability and Redelivery".
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.lowlevel

from ..exceptions import MessageNotDelivered, RemoteProtocolError, TransportError
from ..protocol import SSEParser, media_type
from ..types import RequestId
from ._http_client_decoding import body_decoder
from ._http_client_messages import describe_http_error, one_line, retry_after

#: Why httpx could not be imported (reported when a transport is constructed), or None.
HTTPX_IMPORT_ERROR: ImportError | None = None
try:
    import httpx
except ImportError as _exc:  # the optional extra is not installed
    HTTPX_IMPORT_ERROR = _exc

__all__: list[str] = []

logger = logging.getLogger("mcpkit.transports.http.client")

SSE: Final = "text/event-stream"
SESSION: Final = "Mcp-Session-Id"
#: How much of an error body is read to explain a failure.
ERROR_BODY_LIMIT: Final = 64 * 1024
#: Bounds on reading what follows the answer on a request's SSE stream (normally just its
#: end) so that its connection can be reused: a stream held open longer is closed.
DRAIN_SECONDS: Final = 2.0
DRAIN_BYTES: Final = 64 * 1024


async def read_body(response: httpx.Response, limit: int, *, truncate: bool = False) -> bytes:
    """Read a response body of at most ``limit`` bytes (after content decoding).

    Raises:
        RemoteProtocolError: the body is longer and ``truncate`` is false.
        httpx.HTTPError: the body could not be read.
    """
    # (A compressed body's declared length is not its decoded length.)
    declared = (
        ""
        if response.headers.get("content-encoding")
        else response.headers.get("content-length", "")
    )
    if not truncate and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise RemoteProtocolError(
            f"the response body ({declared} bytes) exceeds max_response_bytes ({limit})"
        )
    buffer = bytearray()

    async def consume(chunk: bytes) -> bool:
        buffer.extend(chunk)
        if len(buffer) <= limit:
            return False
        if truncate:
            del buffer[limit:]
            return True
        raise RemoteProtocolError(f"the response body exceeds max_response_bytes ({limit})")

    await iterate_body(response, consume)
    return bytes(buffer)


async def body_excerpt(response: httpx.Response, limit: int) -> str:
    """The start of an error response's body, for a message (never the whole body)."""
    try:
        data = await read_body(response, limit, truncate=True)
    except (httpx.HTTPError, httpx.StreamError, RemoteProtocolError):
        data = b""
    # (one line, no control characters: the server's words go into exceptions and logs)
    text = one_line(data.decode("utf-8", "replace"), limit)
    return f"({text})" if text else ""


async def read_events(
    response: httpx.Response,
    parser: SSEParser,
    deliver: Callable[[bytes], Awaitable[bool]],
) -> tuple[bool, Exception | None]:
    """Feed an SSE response to ``parser`` and pass each message's data to ``deliver``
    (events named ``message``, the default, with data; others are ignored), which returns
    whether to stop. What follows the stop (the server should end the stream) is still
    read and delivered, within :data:`DRAIN_SECONDS` and :data:`DRAIN_BYTES`: a message
    the server sends after a request's answer is not dropped unseen.

    Returns ``(delivered, broken)``: whether any message was delivered, and the httpx error
    that broke the stream (``None`` when it ended normally or ``deliver`` stopped it).

    Raises:
        RemoteProtocolError: an event exceeded the parser's limit, or ``deliver`` refused
            a message.
    """
    delivered = stop = False

    async def consume(chunk: bytes) -> bool:
        nonlocal delivered, stop
        for event in parser.feed(chunk):
            if event.oversized:  # (a parser that skips them: the standalone stream's)
                logger.warning("skipped an SSE event over max_event_bytes")
                continue
            if event.event != "message" or not event.data:
                continue  # other event types, and priming events (an id, empty data)
            delivered = True
            stop = await deliver(event.data) or stop
        if parser.error is not None:
            raise RemoteProtocolError(parser.error)
        return stop

    try:
        stopped = await iterate_body(response, consume, drain=True)
    except httpx.HTTPError as exc:  # the connection broke or timed out: resumable
        parser.close()
        return delivered, exc
    if not stopped:
        parser.close()
    return delivered, None


async def iterate_body(
    response: httpx.Response,
    consume: Callable[[bytes], Awaitable[bool]],
    *,
    drain: bool = False,
) -> bool:
    """Pass each chunk of the body to ``consume`` until it returns true (then return true)
    or the body ends.

    Stopping early, or ``consume`` raising, cancels the read *inside* httpx rather than
    leaving its chain of async generators suspended: on trio an abandoned async generator
    is finalized late, with a ResourceWarning. A response closed before its end also costs
    its connection (httpx cannot reuse it), so with ``drain`` what follows the stop is
    still read and passed to ``consume`` (its answer no longer matters), within
    :data:`DRAIN_SECONDS` and :data:`DRAIN_BYTES`: a server ends an answered SSE stream
    right after the answer, and the next request then reuses the connection instead of
    opening (and, over TLS, negotiating) a new one.

    Raises:
        httpx.HTTPError: the body could not be read (also while draining).
        Exception: what ``consume`` raised.
    """
    error: BaseException | None = None
    draining: int | None = None  # bytes read since consume asked to stop, when draining
    # The body is read raw and inflated here, a bounded piece at a time (see
    # _http_client_decoding): httpx would inflate each network chunk whole. (Unless an
    # event hook of the caller's http_client has read it already: then as httpx has.)
    read_already = response.is_stream_consumed
    decoder = None if read_already else body_decoder(response.headers.get("content-encoding"))
    chunks = _content_of(response) if read_already else response.aiter_raw()
    with anyio.CancelScope() as scope:

        async def take(chunk: bytes) -> bool:
            """Hand a decoded chunk on; whether to go on reading."""
            nonlocal draining, error
            if draining is not None:
                draining += len(chunk)
                if draining > DRAIN_BYTES:
                    logger.debug("closing an answered stream the server keeps sending on")
                    scope.cancel()
                    return False
            try:
                if draining is not None:
                    # The drain's deadline ends a wait in consume (for room in a queue,
                    # say) here, not as a cancellation escaping to the caller.
                    with anyio.CancelScope(shield=True, deadline=scope.deadline):
                        await consume(chunk)
                elif await consume(chunk):
                    if drain:
                        draining = 0
                        scope.deadline = anyio.current_time() + DRAIN_SECONDS
                    else:
                        scope.cancel()
            except BaseException as exc:  # re-raised below, once httpx let go
                error = exc
                scope.cancel()
            return not scope.cancel_called

        async for raw in chunks:
            if scope.cancel_called:
                continue  # the cancellation lands in httpx's next read
            if decoder is None:
                await take(raw)
                continue
            try:
                for chunk in decoder.feed(raw):
                    if not await take(chunk):
                        break
            except ValueError as exc:  # corrupt data: as httpx reports it
                error = httpx.DecodingError(str(exc), request=response.request)
                scope.cancel()
    if error is not None:
        if isinstance(error, anyio.get_cancelled_exc_class()):
            await anyio.lowlevel.checkpoint()  # the outer cancellation, raised afresh
        raise error
    return scope.cancel_called or draining is not None


async def _content_of(response: httpx.Response) -> AsyncIterator[bytes]:
    yield response.content


Deliver = Callable[[bytes], Awaitable[bool]]


#: The shortest wait between two GETs of a stream, whatever ``retry`` says: a server that
#: answers every GET at once (``retry: 0``) is polled at most 20 times a second.
MIN_RECONNECT_DELAY: Final = 0.05


@dataclass(frozen=True, slots=True)
class _Attempt:
    status: int | None  # None: no HTTP answer
    delivered: bool  # the stream delivered at least one message
    expired: bool  # 404 for our session: the server forgot it
    why: str
    #: The server answered with a stream that it ended cleanly, or that moved the event
    #: id on: it is polling (2025-11-25, SEP-1699: it may close the connection without
    #: ending the stream and expects the client back after ``retry``), not failing.
    polled: bool = False
    #: The refusal's Retry-After (seconds), if it had one.
    retry_after: float | None = None


@dataclass(slots=True)
class Resumer:
    """Opens GET streams: to resume a request's broken answer stream (``Last-Event-ID``)
    and to listen for the server's own messages, reconnecting with the server's ``retry``
    or exponential backoff, at most ``attempts`` times in a row without a message or a
    clean end (a poll)."""

    client: httpx.AsyncClient
    url: str
    timeout: httpx.Timeout
    headers: Callable[[], httpx.Headers]  # Accept, session and version headers
    expire: Callable[[str], None]  # called with the session id the server forgot
    attempts: int
    initial: float
    factor: float
    maximum: float

    def delay(self, parser: SSEParser, failures: int, asked: float | None = None) -> float:
        """The server's ``retry`` if it sent one, else exponential backoff; at least what
        the last refusal's ``Retry-After`` (``asked``) said; all capped at ``maximum``
        (every wait has a bound)."""
        if parser.retry is not None:
            delay = min(parser.retry / 1000, self.maximum)
        else:
            delay = min(self.initial * self.factor**failures, self.maximum)
        if asked is not None:
            delay = max(delay, min(asked, self.maximum))
        return max(delay, MIN_RECONNECT_DELAY)

    async def _get(
        self, parser: SSEParser, deliver: Deliver, opened: Callable[[], None] | None = None
    ) -> _Attempt:
        """One GET of the stream, from ``parser.last_event_id`` if there is one.

        Raises:
            RemoteProtocolError: an event was too large, or ``deliver`` refused a message.
        """
        headers = self.headers()
        if parser.last_event_id:
            headers["Last-Event-ID"] = parser.last_event_id
        session = headers.get(SESSION)
        before = parser.last_event_id
        try:
            async with self.client.stream(
                "GET", self.url, headers=headers, timeout=self.timeout, follow_redirects=False
            ) as response:
                status = response.status_code
                if opened is not None:
                    opened()  # the server answered: the stream exists (or was refused)
                if status == 404 and session is not None:
                    self.expire(session)
                    return _Attempt(status, False, True, "HTTP 404")
                if status != 200 or media_type(response.headers.get("content-type")) != SSE:
                    asked = retry_after(response)
                    return _Attempt(status, False, False, f"HTTP {status}", retry_after=asked)
                delivered, broken = await read_events(response, parser, deliver)
        except httpx.HTTPError as exc:
            return _Attempt(None, False, False, describe_http_error(exc))
        why = describe_http_error(broken) if broken is not None else "the stream ended"
        polled = broken is None or parser.last_event_id not in (None, before)
        return _Attempt(200, delivered, False, why, polled)

    async def resume(
        self, parser: SSEParser, pending: set[RequestId], deliver: Deliver, why: str
    ) -> Exception | None:
        """Resume a request's stream until ``pending`` is answered; the error that fails
        the request, or ``None``.

        Raises:
            RemoteProtocolError: an event was too large, or ``deliver`` refused a message.
        """
        if not parser.last_event_id:
            return MessageNotDelivered(
                f"the server closed the response stream before answering ({why}) and sent "
                "no event id to resume it from"
            )
        failures, status, asked = 0, None, None
        while pending:
            if failures >= self.attempts:
                return MessageNotDelivered(
                    f"the response stream could not be resumed ({why}; {failures} attempts)",
                    status=status,
                    retry_after=asked,
                )
            await anyio.sleep(self.delay(parser, failures, asked))
            attempt = await self._get(parser, deliver)
            if attempt.expired:
                # Not a SessionExpiredError, which makes the client send the request again
                # in a new session: the server has seen this one and may have acted on it.
                return TransportError(
                    "the server ended the session while answering (HTTP 404 on resuming "
                    "the response stream); the request may have been processed, so it is "
                    "not sent again",
                    status=404,
                )
            if attempt.status == 405:
                return MessageNotDelivered(
                    "the server does not allow resuming the response stream (GET 405)",
                    status=405,
                )
            status, why, asked = attempt.status, attempt.why, attempt.retry_after
            # While the server keeps answering, the caller's timeout is the bound.
            failures = 0 if attempt.delivered or attempt.polled else failures + 1
        return None

    async def listen(
        self, parser: SSEParser, deliver: Deliver, opened: Callable[[], None] | None = None
    ) -> None:
        """Keep the standalone GET stream open until the server refuses it (405), forgets
        the session (404) or ``attempts`` reconnections in a row deliver nothing;
        ``opened`` is called when the server first answers the GET."""
        failures = 0
        while True:
            try:
                attempt = await self._get(parser, deliver, opened)
            except RemoteProtocolError as exc:
                logger.warning("abandoning the standalone SSE stream: %s", exc)
                return
            if attempt.status == 405:
                logger.debug("the server offers no standalone SSE stream (GET 405)")
                return
            if attempt.expired:
                return
            if attempt.status == 400 and parser.last_event_id:
                # The server cannot resume from there (its events were evicted, say): what
                # it sent meanwhile is lost, but what it sends from now on is not.
                logger.warning(
                    "the server refused to resume the standalone SSE stream from event %r "
                    "(HTTP 400): messages sent while it was closed are lost; reopening it",
                    parser.last_event_id,
                )
                parser.forget_last_event_id()
            logger.debug("the standalone SSE stream ended: %s", attempt.why)
            failures = 0 if attempt.delivered or attempt.polled else failures + 1
            if failures >= self.attempts:
                logger.warning(
                    "the standalone SSE stream could not be reopened (%s; %d attempts): "
                    "server messages outside requests will not arrive",
                    attempt.why,
                    failures,
                )
                return
            await anyio.sleep(self.delay(parser, failures, attempt.retry_after))
