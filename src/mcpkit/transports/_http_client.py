"""The Streamable HTTP transport, client side, on httpx.

MCP ``basic/transports.mdx`` "Streamable HTTP" (2025-03-26, 2025-06-18, 2025-11-25): every
message we send is its own POST; a request's answer comes back as a JSON body or on an SSE
stream, which is resumed with ``GET`` + ``Last-Event-ID`` when it breaks; after
``notifications/initialized`` a standalone GET stream carries the server's own messages;
closing sends ``DELETE`` with the session id. A request's POST runs in the background, so
``send`` returns at once and the endpoint's timeout covers the whole exchange; when the
transport knows that a request can no longer be answered it hands the endpoint a
:class:`~mcpkit.aio.DeliveryFailed`, so the call fails promptly.

This module holds the transport, the channel's lifecycle and what it sends; each request's
exchange and the standalone GET stream are in ``_http_client_exchange.py``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc

from ..aio import DeliveryFailed
from ..aio._lograte import PeerLogLimiter
from ..exceptions import (
    LocalProtocolError,
    MessageNotDelivered,
    TransportError,
)
from ..protocol import checked_header_fields
from ..types import RequestId, Tool
from ._http_client_decoding import ACCEPT_ENCODING
from ._http_client_exchange import _JSON, _SESSION, _SSE, Exchanges, _Item, session_expired
from ._http_client_messages import (
    check_url,
    classify,
    describe_failure,
    describe_http_error,
    redirect_note,
    retry_after,
)
from ._http_client_modern import modern_headers
from ._http_client_streams import (
    ERROR_BODY_LIMIT,
    HTTPX_IMPORT_ERROR,
    read_body,
)

if HTTPX_IMPORT_ERROR is None:
    import httpx
if TYPE_CHECKING:
    import ssl

__all__ = ["StreamableHTTPChannel", "StreamableHTTPTransport"]

logger = logging.getLogger("mcpkit.transports.http.client")

_VERSION: Final = "MCP-Protocol-Version"
#: Bound on the DELETE that ends the session, and on closing the HTTP client.
_CLOSE_TIMEOUT: Final = 5.0
#: Messages received but not yet taken by ``receive`` (then the streams wait: backpressure).
_QUEUE_SIZE: Final = 1024

_ACCEPT_BOTH: Final = f"{_JSON}, {_SSE}"


class StreamableHTTPTransport:
    """Connect to an MCP server over Streamable HTTP::

        async with Client(StreamableHTTPTransport("http://127.0.0.1:8000/mcp")) as client:
            print(await client.list_tools())

    Args:
        url: the server's MCP endpoint.
        headers: extra headers for every request (e.g. ``Authorization``).
        http_client: an httpx client to use (and not close); one is created otherwise.
            Redirects are never followed, whatever it is configured to do: the session id
            must not reach another origin.
        ssl_context: the TLS settings for ``https`` URLs, e.g. trusting a private CA:
            ``ssl.create_default_context(cafile="ca.pem")``; ``None``: the system's
            trust store. (Not used with ``http_client``, which has its own.)
        timeout: seconds for connecting and for each exchange that answers at once (the
            POST of a notification or response, the DELETE).
        sse_read_timeout: seconds a request's POST may wait for its answer to start, and
            an SSE stream may stay silent, before it counts as broken.
        max_event_bytes: the largest SSE event accepted; a larger one fails its request
            (on the standalone GET stream, which answers none, it is skipped).
        max_response_bytes: the largest JSON body accepted; a larger one fails its request.
        reconnect_initial, reconnect_factor, reconnect_max: the backoff between attempts
            to resume a broken SSE stream (when the server sent no ``retry``), in seconds.
        max_reconnect_attempts: consecutive failed attempts to resume a stream before
            giving up (the request then fails; the standalone stream is abandoned). A GET
            fails when it gets no answer, an error status or a connection that breaks; one
            the server ends cleanly is a poll (2025-11-25 SSE polling) and does not count:
            a request is then bounded by its timeout. Reconnections are at least 50 ms
            apart, whatever the server's ``retry``.

    Raises:
        TransportError: httpx is not installed.
        LocalProtocolError: the URL or a header no request could carry (say, a value
            with a line break).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        max_event_bytes: int = 16 * 1024 * 1024,
        max_response_bytes: int = 16 * 1024 * 1024,
        reconnect_initial: float = 1.0,
        reconnect_factor: float = 1.5,
        reconnect_max: float = 30.0,
        max_reconnect_attempts: int = 2,
    ) -> None:
        if HTTPX_IMPORT_ERROR is not None:
            raise TransportError(
                "the Streamable HTTP client needs httpx: pip install 'mcpkit[http]'"
            ) from HTTPX_IMPORT_ERROR
        if max_event_bytes <= 0 or max_response_bytes <= 0:
            raise ValueError("max_event_bytes and max_response_bytes must be positive")
        if max_reconnect_attempts < 0:
            raise ValueError("max_reconnect_attempts must not be negative")
        check_url(url)
        self.url = url
        self.headers = checked_header_fields(headers)
        self.http_client = http_client
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.max_event_bytes = max_event_bytes
        self.max_response_bytes = max_response_bytes
        self.reconnect_initial = reconnect_initial
        self.reconnect_factor = reconnect_factor
        self.reconnect_max = reconnect_max
        self.max_reconnect_attempts = max_reconnect_attempts

    def connect(self) -> contextlib.AbstractAsyncContextManager[StreamableHTTPChannel]:
        """Return a new channel; entering it opens it, leaving it ends the session."""
        return StreamableHTTPChannel(self)


class StreamableHTTPChannel(Exchanges):
    """A message channel over Streamable HTTP (see :class:`StreamableHTTPTransport`).
    Enter and exit it in the same task.

    Attributes:
        session_id: the ``Mcp-Session-Id`` the server issued in answer to ``initialize``
            (``None`` before, for a stateless server, and after the session ended).
        protocol_version: the version the server chose in its ``initialize`` result, sent
            as ``MCP-Protocol-Version`` on every later request.
        tool_definitions: the tools the client saw in ``tools/list`` (2026-07-28), by
            name: a call of one of them mirrors its ``x-mcp-header`` arguments into
            ``Mcp-Param-*`` headers (``basic/transports/streamable-http.mdx``).
    """

    def __init__(self, transport: StreamableHTTPTransport) -> None:
        self._t = transport
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.tool_definitions: dict[str, Tool] = {}
        self._client: httpx.AsyncClient | None = None
        self._owns_client = transport.http_client is None
        self._queue_in, self._queue_out = anyio.create_memory_object_stream[_Item](_QUEUE_SIZE)
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False
        self._initialize_ids: set[RequestId] = set()
        #: 2026-07-28 requests in flight (they are cancelled by closing their stream).
        self._stateless_ids: set[RequestId] = set()
        self._calls: dict[RequestId, anyio.CancelScope] = {}
        self._listening: anyio.CancelScope | None = None
        self._peer_log = PeerLogLimiter()  # the server's mistakes, logged within a bound
        #: The server forgot our session (404 on any exchange, the GET streams included):
        #: until a new ``initialize`` answers, messages fail with SessionExpiredError
        #: instead of going out without a session (which the server refuses with 400).
        self._session_lost = False
        #: Parsed once: httpx parses a string URL again at every request.
        self._url = httpx.URL(transport.url)
        self._short = httpx.Timeout(transport.timeout)
        self._long = httpx.Timeout(transport.timeout, read=transport.sse_read_timeout)

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> StreamableHTTPChannel:
        if self._task_group is not None or self._closed:
            raise LocalProtocolError("a Streamable HTTP channel is opened only once")
        # (httpx, only with the extra: imported here)
        from ._http_client_post import Poster, connection_layer, own_client

        layer = None if self._t.http_client else connection_layer(self._t.ssl_context)
        self._client = self._t.http_client or own_client(
            self._t.ssl_context, layer, timeout=self._short
        )
        self._poster = Poster(self._client, self._url, layer)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self.aclose()
        assert self._task_group is not None
        return await self._task_group.__aexit__(exc_type, exc, tb)

    async def aclose(self) -> None:
        """End the session (``DELETE``, bounded by 5 s; any answer is fine), stop every
        stream and make :meth:`receive` end. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()
        self._queue_in.close()
        self._queue_out.close()  # a waiting receive() ends now; queued messages are dropped
        client, session = self._client, self.session_id
        self.session_id = None
        with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
            if client is not None and session is not None:
                await self._delete(client, session)
            if client is not None and self._owns_client:
                await client.aclose()

    async def _delete(self, client: httpx.AsyncClient, session: str) -> None:
        # basic/transports.mdx "Session Management": clients that no longer need a session
        # SHOULD send DELETE; the server MAY answer 405 (it does not allow it).
        headers = self._headers(_JSON, session=session)
        try:
            response = await client.request(
                "DELETE",
                self._url,
                headers=headers,
                timeout=httpx.Timeout(min(self._t.timeout, _CLOSE_TIMEOUT)),
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            logger.debug("DELETE of the session failed: %s", describe_http_error(exc))
            return
        if not response.is_success and response.status_code not in (404, 405):
            logger.debug("the server answered DELETE with HTTP %d", response.status_code)

    # -- the channel --------------------------------------------------------------------

    async def receive(self) -> bytes | DeliveryFailed:
        """The next message from the server (from any of the streams, in arrival order),
        or a marker for a request that can no longer be answered.

        Raises:
            anyio.EndOfStream: the channel was closed.
        """
        try:
            return await self._queue_out.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        """POST one message. A request's POST continues in the background (its answer
        arrives through :meth:`receive`); a notification's or response's is awaited.

        Raises:
            anyio.ClosedResourceError: the channel was closed.
            MessageNotDelivered: the server refused the message or could not be reached.
            SessionExpiredError: the server no longer knows the session (HTTP 404).
            LocalProtocolError: the channel was never opened, or a 2026-07-28 request's
                method cannot travel in the ``Mcp-Method`` header.
        """
        if self._closed:
            raise anyio.ClosedResourceError
        if self._task_group is None or self._client is None:
            raise LocalProtocolError("use `async with transport.connect() as channel` first")
        out = classify(message)
        if out.request_ids:
            modern = modern_headers(message, self.tool_definitions)
            if out.initialize_id is not None:
                self._initialize_ids.add(out.initialize_id)
            scope = anyio.CancelScope()
            if len(out.request_ids) == 1:
                self._calls[out.request_ids[0]] = scope
            if modern is None:
                headers = self._headers(_ACCEPT_BOTH, initialize=out.initialize_id is not None)
            else:
                # 2026-07-28: no session; the version and method travel as headers.
                headers = self._headers(_ACCEPT_BOTH, initialize=True)
                headers.update(modern)
                self._stateless_ids.update(out.request_ids)
            self._task_group.start_soon(self._call, message, out, headers, scope)
            return
        if out.cancelled_id is not None and out.cancelled_id in self._stateless_ids:
            # 2026-07-28 basic/patterns/cancellation.mdx: over HTTP a request is cancelled
            # by closing its response stream, not with notifications/cancelled.
            call = self._calls.get(out.cancelled_id)
            if call is not None:
                call.cancel()
            return
        try:
            await self._post_quietly_answered(message)
        finally:
            if out.cancelled_id is not None:
                # The server was told; the stream of the cancelled request is of no use.
                call = self._calls.get(out.cancelled_id)
                if call is not None:
                    call.cancel()
        if "notifications/initialized" in out.methods:
            await self._start_listening()

    def _headers(
        self, accept: str, *, initialize: bool = False, session: str | None = None
    ) -> httpx.Headers:
        headers = httpx.Headers(self._t.headers)
        headers["Accept"] = accept
        headers["Accept-Encoding"] = ACCEPT_ENCODING  # only what is inflated with a bound
        session = session or self.session_id
        # A new initialize starts a new session: it carries neither header.
        if not initialize:
            if session is not None:
                headers[_SESSION] = session
            if self.protocol_version is not None:
                headers[_VERSION] = self.protocol_version
        return headers

    def _expire(self, session: str) -> None:
        """The server forgot ``session`` (404): drop it, its version and its GET stream."""
        if self.session_id != session:
            return  # already replaced by a new session
        logger.info("the server ended session %s (HTTP 404)", session)
        self.session_id = None
        self.protocol_version = None
        self._session_lost = True
        if self._listening is not None:
            self._listening.cancel()
            self._listening = None

    async def _post_quietly_answered(self, message: bytes) -> None:
        """POST a notification or response; the server answers 202 ("MUST", transports
        "Sending Messages to the Server"), but any 2xx says it took the message (RFC 9110
        section 15.3): a 204 or 200 from a lenient server is no failure (the official SDK
        and this package's HTTP+SSE client read it so too)."""
        assert self._client is not None
        if self._session_lost:
            raise session_expired()
        headers = self._headers(_ACCEPT_BOTH)
        headers["Content-Type"] = _JSON
        session = headers.get(_SESSION)
        try:
            async with self._poster.post(message, headers, self._short) as response:
                status = response.status_code
                if 200 <= status < 300:
                    return
                if status == 404 and session is not None:
                    self._expire(session)
                    raise session_expired()
                body = await read_body(response, ERROR_BODY_LIMIT, truncate=True)
        except httpx.HTTPError as exc:
            raise MessageNotDelivered(
                f"cannot deliver the message to {self._t.url}: {describe_http_error(exc)}"
            ) from exc
        content_type = response.headers.get("content-type")
        note = redirect_note(response)
        raise MessageNotDelivered(
            describe_failure(status, content_type, body, note),
            status=status,
            retry_after=retry_after(response),
        )
