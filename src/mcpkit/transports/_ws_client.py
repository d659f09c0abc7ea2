"""The WebSocket transport, client side (an mcpkit extension; see ``docs/websocket.md``), on
the ``websockets`` library.

One JSON-RPC message per text frame, subprotocol ``mcp``. Runs on asyncio (websockets'
asyncio client) and on trio (its trio client, websockets >= 17), picked from the running
event loop. ``websockets`` is imported only here, and only when a transport is created.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..exceptions import TransportError
from ..protocol import checked_header_fields
from ..types._echo import one_line

if TYPE_CHECKING:
    import ssl

    from websockets.asyncio.client import ClientConnection as AsyncioConnection
    from websockets.exceptions import ConnectionClosed
    from websockets.trio.client import ClientConnection as TrioConnection

__all__ = ["WebSocketChannel", "WebSocketTransport"]

logger = logging.getLogger("mcpkit.transports.ws")

#: The WebSocket subprotocol of mcpkit's binding.
SUBPROTOCOL: Final = "mcp"
_UNSUPPORTED_DATA: Final = 1003
_MESSAGE_TOO_BIG: Final = 1009
#: What the opening handshake's timeout raises: on Python 3.10 websockets raises
#: asyncio.TimeoutError, not yet the builtin TimeoutError it became in 3.11.
_TIMEOUTS: Final = (TimeoutError, asyncio.TimeoutError)


def _require_websockets() -> None:
    try:
        import websockets  # noqa: F401
    except ImportError as exc:
        raise TransportError(
            "the WebSocket transport needs websockets: pip install 'mcpkit[ws]'"
        ) from exc


def _said(code: int, reason: str) -> str:
    reason = one_line(reason, 200)
    return f"{code}: {reason}" if reason else str(code)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class WebSocketTransport:
    """Connect to a server over WebSocket (mcpkit's binding: text frames, subprotocol
    ``mcp``).

    Example::

        async with Client(WebSocketTransport("ws://127.0.0.1:8000/ws")) as client:
            print(await client.list_tools())

    Args:
        url: the server's ``ws://`` or ``wss://`` URL.
        headers: extra headers for the opening handshake (e.g. ``Authorization``).
        origin: an ``Origin`` header to send (browsers send one; other clients need not).
        max_message_bytes: largest accepted message from the server; a larger one closes
            the connection with 1009 (the default matches mcpkit's other transports for
            server-to-client messages).
        open_timeout: seconds for connecting and the opening handshake.
        close_timeout: seconds the closing handshake may take.
        send_timeout: seconds one message may take to be written (a large message on a
            slow link takes a while); past it the server is taken to have stopped reading
            and the connection is closed (1011).
        ping_interval: seconds between keep-alive pings (``None``: none).
        ping_timeout: seconds to wait for a pong before the connection counts as broken.
        ssl_context: the TLS settings for ``wss`` URLs, e.g. trusting a private CA:
            ``ssl.create_default_context(cafile="ca.pem")``; ``None``: the system's
            trust store.

    Raises:
        TransportError: websockets is not installed.
        LocalProtocolError: a header the handshake could not carry (say, a value with a
            line break).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        origin: str | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
        open_timeout: float = 10.0,
        close_timeout: float = 5.0,
        send_timeout: float = 60.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        _require_websockets()
        if not send_timeout > 0:
            raise ValueError("send_timeout must be positive")
        self.url = url
        self.headers = checked_header_fields(headers)
        self.origin = origin
        self.max_message_bytes = max_message_bytes
        self.open_timeout = open_timeout
        self.close_timeout = close_timeout
        self.send_timeout = send_timeout
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.ssl_context = ssl_context

    def connect(self) -> WebSocketChannel:
        """Return the channel; entering it (``async with``) opens the connection."""
        return WebSocketChannel(self)


class WebSocketChannel:
    """A message channel over one WebSocket connection. Enter and exit it in the same task.

    Attributes:
        connection: the underlying ``websockets`` connection, once open.

    Raises:
        TransportError: on entry: the connection or handshake failed (``status`` set when
            the server answered with an HTTP error), or the server did not select the
            ``mcp`` subprotocol.
    """

    def __init__(self, transport: WebSocketTransport) -> None:
        self._t = transport
        self._cm: Any = None  # websockets' connect(), an async context manager
        self.connection: AsyncioConnection | TrioConnection | None = None
        self._lock = anyio.Lock()
        self._closed = False
        #: Why the connection ended, when the server ended it or broke the binding.
        self._why: str | None = None

    def connect(self) -> contextlib.AbstractAsyncContextManager[WebSocketChannel]:
        """Act as a transport: an unopened channel opens itself."""
        if self._cm is None:
            return self
        return contextlib.nullcontext(self)

    async def __aenter__(self) -> WebSocketChannel:
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI
        from websockets.typing import Origin, Subprotocol
        from websockets.uri import parse_uri

        t = self._t
        if _on_asyncio():
            from websockets.asyncio.client import connect as asyncio_connect

            factory: Any = asyncio_connect
        else:
            try:
                from websockets.trio.client import connect as trio_connect
            except ImportError as exc:
                raise TransportError(
                    "the WebSocket client on trio needs websockets >= 17 (Python 3.11+): "
                    "pip install 'websockets>=17'"
                ) from exc
            factory = trio_connect
        try:
            # Parsed here, not left to connect(): websockets 16 parses only on entry,
            # where a bad port's ValueError would escape as itself.
            parse_uri(t.url)
            self._cm = factory(
                t.url,
                subprotocols=[Subprotocol(SUBPROTOCOL)],
                origin=None if t.origin is None else Origin(t.origin),
                additional_headers=t.headers or None,
                max_size=t.max_message_bytes,
                open_timeout=t.open_timeout,
                close_timeout=t.close_timeout,
                ping_interval=t.ping_interval,
                ping_timeout=t.ping_timeout,
                # (only for wss: websockets refuses an ssl argument for a ws:// URL)
                **({} if t.ssl_context is None else {"ssl": t.ssl_context}),
            )
        except (InvalidURI, ValueError) as exc:  # a malformed URL (scheme, host, port)
            raise TransportError(f"cannot open a WebSocket to {t.url!r}: {exc}") from exc
        try:
            self.connection = await self._cm.__aenter__()
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise TransportError(
                f"the server refused the WebSocket handshake at {t.url}: HTTP {status}",
                status=status,
            ) from exc
        except (InvalidHandshake, InvalidURI, OSError, *_TIMEOUTS) as exc:
            raise TransportError(f"cannot open a WebSocket to {t.url}: {exc}") from exc
        if self.connection.subprotocol != SUBPROTOCOL:
            await self.__aexit__(None, None, None)
            raise TransportError(
                f"the server at {t.url} did not select the {SUBPROTOCOL!r} subprotocol: "
                "it does not speak MCP over WebSocket"
            )
        return self

    async def receive(self) -> bytes:
        """Receive the next message from the server.

        Raises:
            anyio.EndOfStream: the connection closed.
        """
        from websockets.exceptions import ConnectionClosed

        ws = self.connection
        if ws is None or self._closed:
            raise anyio.EndOfStream
        try:
            data = await ws.recv()
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code not in (1000, 1001):
                logger.warning("the server closed the WebSocket: %s", exc)
            elif exc.sent is not None and exc.sent.code not in (1000, 1001):
                logger.warning("closed the WebSocket: %s", exc)
            if not self._closed:
                self._why = self._why or self._closed_why(exc)
            raise anyio.EndOfStream from None
        if isinstance(data, str):
            return data.encode()
        # One JSON-RPC message per *text* frame: a binary frame breaks the binding.
        logger.warning("the server sent a binary frame: closing the connection (1003)")
        self._why = "the server sent a binary frame (MCP messages are text frames); closed (1003)"
        await self._close(_UNSUPPORTED_DATA, "MCP messages are text frames")
        raise anyio.EndOfStream

    def _closed_why(self, exc: ConnectionClosed) -> str:
        """Why the connection ended, in a few words: who closed it first, with which code
        and reason (one short line: the server's reason is its own text)."""
        sent, rcvd = exc.sent, exc.rcvd
        if sent is not None and not exc.rcvd_then_sent:  # websockets closed it first
            if sent.code == _MESSAGE_TOO_BIG:
                return (
                    f"a message from the server exceeded max_message_bytes "
                    f"({self._t.max_message_bytes}); closed (1009)"
                )
            # e.g. 1011 "keepalive ping timeout", 1007 invalid UTF-8, 1002 a bad frame
            return f"the client closed the WebSocket ({_said(sent.code, sent.reason)})"
        if rcvd is not None:
            return f"the server closed the WebSocket ({_said(rcvd.code, rcvd.reason)})"
        return "the WebSocket connection was lost without a closing handshake (1006)"

    async def exit_reason(self) -> str | None:
        """Why the connection ended, for the error of the calls it cut short: the server's
        close code and reason, or what the server sent that broke the binding; ``None``
        while it is open or when the client closed it."""
        return self._why

    async def send(self, message: bytes) -> None:
        """Send one message as a text frame.

        Raises:
            anyio.ClosedResourceError: the channel was closed.
            anyio.BrokenResourceError: the connection is gone.
        """
        from websockets.exceptions import ConnectionClosed

        ws = self.connection
        if ws is None or self._closed:
            raise anyio.ClosedResourceError
        try:
            async with self._lock:
                # A frame, once started, goes out whole: websockets compresses it before
                # writing (permessage-deflate), and a send cancelled in between (trio
                # checkpoints there) leaves the peer's decompressor out of step, so every
                # later frame arrives garbled. Bounded by send_timeout, then the
                # connection is given up.
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(self._t.send_timeout) as stuck,
                ):
                    await ws.send(message, text=True)  # already UTF-8 JSON: no re-encoding
                if stuck.cancelled_caught:
                    logger.warning(
                        "closing the WebSocket: a %d-byte message was not written within "
                        "send_timeout (%g s); the server reads too slowly or not at all",
                        len(message),
                        self._t.send_timeout,
                    )
                    self._why = (
                        f"a message was not written within send_timeout "
                        f"({self._t.send_timeout:g} s); closed (1011)"
                    )
                    await self._close(1011, "send timed out")
                    raise anyio.BrokenResourceError
        except ConnectionClosed as exc:
            if not self._closed:
                self._why = self._why or self._closed_why(exc)
            raise anyio.BrokenResourceError from None

    async def _close(self, code: int, reason: str) -> None:
        ws = self.connection
        if ws is None or self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._t.close_timeout + 1):
            if _on_asyncio():
                await ws.close(code, reason)  # type: ignore[union-attr, unused-ignore]
            else:
                await ws.aclose(code, reason)  # type: ignore[union-attr, unused-ignore]

    async def aclose(self) -> None:
        """Close the connection (the closing handshake is bounded by ``close_timeout``)."""
        await self._close(1000, "")

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
        cm, self._cm = self._cm, None
        if cm is None:
            return
        if _on_asyncio():
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._t.close_timeout + 1):
                await cm.__aexit__(None, None, None)
        else:
            # websockets' trio connect() exits the nursery it opened on entry: that must
            # happen in the same cancel scope, not inside a new one (trio would report a
            # corrupted cancel scope stack). The connection is already closed (above,
            # shielded and bounded), so this only reaps its background tasks.
            await cm.__aexit__(None, None, None)
