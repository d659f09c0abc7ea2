"""The legacy HTTP+SSE transport, client side (MCP 2024-11-05 ``basic/transports.mdx``), on
httpx.

The client GETs the SSE URL and waits for the ``endpoint`` event, which names the URI to
POST messages to; the server's messages arrive as ``message`` events on that stream. The
endpoint must be on the SSE URL's origin: a server (or anything able to inject an event)
could otherwise make the client send its messages, and its credentials, elsewhere.

httpx is imported only here, and only when a transport is created: ``import
mcpkit.transports`` stays light, and a missing httpx is a clear :class:`TransportError`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..aio._lograte import PeerLogLimiter
from ..exceptions import MessageNotDelivered, TransportError
from ..protocol import FrameTooLarge, SSEEvent, SSEParser, checked_header_fields
from ..types._echo import peer_text
from ._http_client_decoding import ACCEPT_ENCODING
from ._http_client_messages import (
    check_url,
    describe_http_error,
    endpoint_on_origin,
    redirect_note,
    retry_after,
)
from ._http_client_streams import body_excerpt, iterate_body

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = ["SSEChannel", "SSETransport"]

logger = logging.getLogger("mcpkit.transports.sse")

#: Server messages parsed ahead of the session's receive loop (then the stream waits).
_INBOUND_BUFFER: Final = 64
#: Bytes of an error response's body quoted in the exception.
_ERROR_EXCERPT: Final = 300


def _require_httpx() -> None:
    try:
        import httpx  # noqa: F401
    except ImportError as exc:
        raise TransportError(
            "the HTTP+SSE transport needs httpx: pip install 'mcpkit[http]'"
        ) from exc


class SSETransport:
    """Connect to a server over the 2024-11-05 HTTP+SSE transport.

    Example::

        async with Client(SSETransport("http://127.0.0.1:8000/sse")) as client:
            print(await client.list_tools())

    Args:
        url: the server's SSE endpoint.
        headers: headers sent with every request (e.g. ``Authorization``).
        auth: an ``httpx.Auth`` applied to every request.
        timeout: seconds for connecting and for each POST.
        sse_read_timeout: seconds the stream may stay silent before it counts as broken
            (servers send keep-alive comments far more often).
        endpoint_timeout: seconds to wait for the stream and its ``endpoint`` event.
        max_event_bytes: largest accepted SSE event; a larger one is skipped (the call it
            answers fails, naming the limit) and the stream goes on.
        close_timeout: seconds closing may take before connections are abandoned.
        ssl_context: the TLS settings for ``https`` URLs, e.g. trusting a private CA:
            ``ssl.create_default_context(cafile="ca.pem")``; ``None``: the system's
            trust store.
        http_client: an ``httpx.AsyncClient`` to use (the caller keeps ownership; its
            headers, auth and timeouts apply instead of the ones above).

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
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        sse_read_timeout: float = 300.0,
        endpoint_timeout: float = 30.0,
        max_event_bytes: int = 16 * 1024 * 1024,
        close_timeout: float = 5.0,
        http_client: httpx.AsyncClient | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        _require_httpx()
        check_url(url)
        self.url = url
        self.headers = checked_header_fields(headers)
        self.auth = auth
        self.timeout = timeout
        self.sse_read_timeout = sse_read_timeout
        self.endpoint_timeout = endpoint_timeout
        self.max_event_bytes = max_event_bytes
        self.close_timeout = close_timeout
        self.http_client = http_client
        self.ssl_context = ssl_context

    def connect(self) -> SSEChannel:
        """Return the channel; entering it (``async with``) opens the stream."""
        return SSEChannel(self)


class SSEChannel:
    """A message channel over one HTTP+SSE session. Enter and exit it in the same task.

    Attributes:
        endpoint_url: where messages are POSTed (from the server's ``endpoint`` event).

    Raises:
        TransportError: on entry: the server refused the stream (``status`` set), sent
            something other than an event stream, sent no ``endpoint`` event in time, or
            named an endpoint on another origin.
    """

    def __init__(self, transport: SSETransport) -> None:
        self._t = transport
        self.endpoint_url: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._response: httpx.Response | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._in_send: MemoryObjectSendStream[bytes | FrameTooLarge]
        self._in_receive: MemoryObjectReceiveStream[bytes | FrameTooLarge]
        self._in_send, self._in_receive = anyio.create_memory_object_stream[bytes | FrameTooLarge](
            _INBOUND_BUFFER
        )
        self._ready = anyio.Event()  # the endpoint is known, or it never will be
        self._peer_log = PeerLogLimiter()  # the server's mistakes, logged within a bound
        self._failure: TransportError | None = None
        self._reader_done = anyio.Event()
        self._reading = False
        self._closed = False
        self._why: str | None = None  # (see exit_reason)

    def connect(self) -> contextlib.AbstractAsyncContextManager[SSEChannel]:
        """Act as a transport: an unopened channel opens itself."""
        if self._client is None:
            return self
        return contextlib.nullcontext(self)

    # -- opening ---------------------------------------------------------------------------

    async def __aenter__(self) -> SSEChannel:
        import httpx

        from ._http_client_post import connection_layer, own_client

        t = self._t
        self._client = t.http_client or own_client(
            t.ssl_context,
            connection_layer(t.ssl_context),
            headers=t.headers,
            auth=t.auth,
            timeout=httpx.Timeout(t.timeout, read=t.sse_read_timeout),
        )
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        try:
            try:
                with anyio.fail_after(t.endpoint_timeout):
                    await self._open(self._client)
            except TimeoutError:
                raise TransportError(
                    f"no endpoint event from {t.url} within {t.endpoint_timeout:g} s"
                ) from None
            except httpx.HTTPError as exc:
                raise TransportError(f"cannot open the SSE stream at {t.url}: {exc}") from exc
        except BaseException:
            await self.aclose()  # cancels the reader: the task group ends without errors
            await self._task_group.__aexit__(None, None, None)
            raise
        return self

    async def _open(self, client: httpx.AsyncClient) -> None:
        headers = {
            "accept": "text/event-stream",
            "cache-control": "no-store",
            "accept-encoding": ACCEPT_ENCODING,  # (see _http_client_decoding)
        }
        request = client.build_request("GET", self._t.url, headers=headers)
        # Never a redirect, whatever a given http_client does: the endpoint's origin check
        # is what keeps messages (and credentials) from being sent elsewhere.
        self._response = response = await client.send(request, stream=True, follow_redirects=False)
        if response.status_code != 200:
            note = redirect_note(response)
            excerpt = await body_excerpt(response, _ERROR_EXCERPT) if note is None else f"({note})"
            raise TransportError(
                f"the server refused the SSE stream at {self._t.url}: HTTP "
                f"{response.status_code} {excerpt}".rstrip(),
                status=response.status_code,
                retry_after=retry_after(response),
            )
        ctype = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != "text/event-stream":
            raise TransportError(
                f"{self._t.url} answered with {peer_text(ctype or 'no content type')}, "
                "not an event stream: is it an HTTP+SSE endpoint?",
                status=response.status_code,
            )
        assert self._task_group is not None
        self._reading = True
        self._task_group.start_soon(self._read, response)
        await self._ready.wait()
        if self._failure is not None:
            raise self._failure

    # -- the stream ------------------------------------------------------------------------

    async def _read(self, response: httpx.Response) -> None:
        import httpx

        # One stream carries every message of the session: an event over the limit is
        # skipped to its end, not the end of the session (see _on_event).
        parser = SSEParser(max_event_bytes=self._t.max_event_bytes, skip_oversized=True)

        async def consume(chunk: bytes) -> bool:
            """Handle a chunk; True to stop reading."""
            try:
                for event in parser.feed(chunk):
                    if not await self._on_event(event):
                        return True
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return True  # the channel was closed while a message was handed over
            return False

        try:
            if not await iterate_body(response, consume):
                parser.close()
                logger.debug("the server ended the SSE stream")
                self._why = "the server ended the SSE stream"
        except (httpx.HTTPError, httpx.StreamError) as exc:
            logger.debug("SSE stream from %s broke: %s", self._t.url, exc)
            self._why = f"the SSE stream broke: {describe_http_error(exc)}"
        except Exception as exc:
            # Anything else is a bug (ours or a library's): the stream ends as if broken, so
            # pending calls fail promptly (not the caller's task group, from a background task).
            logger.exception("SSE stream from %s failed unexpectedly", self._t.url)
            self._why = f"the SSE stream failed unexpectedly: {exc!r}"
        finally:
            self._in_send.close()  # the session's receive sees the end of the stream
            if not self._ready.is_set():
                self._failure = self._failure or TransportError(
                    f"the SSE stream at {self._t.url} ended before its endpoint event"
                )
                self._ready.set()
            self._reader_done.set()

    async def _on_event(self, event: SSEEvent) -> bool:
        """Handle one event; returns False to stop reading."""
        if event.event == "endpoint":
            if self.endpoint_url is not None:
                self._peer_log.log(
                    logger, logging.WARNING, "ignoring a second endpoint event from %s", self._t.url
                )
                return True
            if event.oversized:
                limit = self._t.max_event_bytes
                self._failure = TransportError(f"the endpoint event exceeded {limit} bytes")
                return False
            try:
                self.endpoint_url = endpoint_on_origin(self._t.url, event.data)
            except TransportError as exc:
                self._failure = exc
                return False
            self._ready.set()
        elif event.event == "message":
            message: bytes | FrameTooLarge = event.data
            if event.oversized:
                # The call it answers (named in its first bytes) fails with the reason,
                # as over stdio; the others are unharmed.
                message = FrameTooLarge(self._t.max_event_bytes, event.data)
                self._peer_log.log(logger, logging.WARNING, "skipped an SSE event too large")
            elif not event.data:  # an empty event is a keep-alive, not a message
                return True
            if self._ready.is_set():
                await self._in_send.send(message)
                return True
            # Before the endpoint event nothing reads the messages (the session starts
            # once the endpoint is known): waiting for room would stall the stream until
            # endpoint_timeout, and then blame a missing endpoint.
            try:
                self._in_send.send_nowait(message)
            except anyio.WouldBlock:
                self._failure = TransportError(
                    f"the SSE stream at {self._t.url} sent more than {_INBOUND_BUFFER} "
                    "messages before its endpoint event"
                )
                return False
        else:
            logger.debug("ignoring an SSE event of type %s", peer_text(event.event))
        return True

    async def exit_reason(self) -> str | None:
        """Why the stream ended, for the calls it cut short (``None``: open, or closed by us)."""
        return self._why

    # -- the channel -----------------------------------------------------------------------

    async def receive(self) -> bytes | FrameTooLarge:
        """Receive the next message from the server (or word of one over the limit).

        Raises:
            anyio.EndOfStream: the SSE stream ended (the session is over).
        """
        try:
            return await self._in_receive.receive()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise anyio.EndOfStream from None

    async def send(self, message: bytes) -> None:
        """POST one message to the endpoint.

        Raises:
            anyio.ClosedResourceError: the channel was closed.
            MessageNotDelivered: the server answered with an error status (``status``
                set) or the request failed; the session itself may still be usable.
        """
        import httpx

        if self._closed or self._client is None or self.endpoint_url is None:
            raise anyio.ClosedResourceError
        # The stream's client waits sse_read_timeout for data; a POST is answered at once
        # (202), so it gets `timeout` for every phase (a given http_client keeps its own).
        own = self._t.http_client is None
        timeout: Any = httpx.Timeout(self._t.timeout) if own else httpx.USE_CLIENT_DEFAULT
        try:
            async with self._client.stream(
                "POST",
                self.endpoint_url,
                content=message,
                headers={"content-type": "application/json", "accept-encoding": ACCEPT_ENCODING},
                timeout=timeout,
                follow_redirects=False,  # (see _open)
            ) as response:
                status = response.status_code
                # 202 Accepted is what servers send; any 2xx means the message was taken.
                if 200 <= status < 300:
                    return
                excerpt = await body_excerpt(response, _ERROR_EXCERPT)
                wait = retry_after(response)
        except httpx.HTTPError as exc:
            why = describe_http_error(exc)
            raise MessageNotDelivered(f"the message could not be POSTed: {why}") from exc
        raise MessageNotDelivered(
            f"the server answered HTTP {status} to a message {excerpt}".rstrip(),
            status=status,
            retry_after=wait,
        )

    async def aclose(self) -> None:
        """Close the stream and the connections (bounded by ``close_timeout``)."""
        if self._closed:
            return
        self._closed = True
        self._in_send.close()
        self._in_receive.close()
        if self._task_group is not None:
            self._task_group.cancel_scope.cancel()  # stops the reader
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._t.close_timeout):
            if self._reading:
                await self._reader_done.wait()
            if self._response is not None:
                await self._response.aclose()
            if self._client is not None and self._t.http_client is None:
                await self._client.aclose()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()  # cancels the reader, which never fails
        assert self._task_group is not None
        # Not handed the exception: it propagates as it is, not wrapped in a group.
        await self._task_group.__aexit__(None, None, None)
