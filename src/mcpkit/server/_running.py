"""Running a server: one connection, stdio, or an HTTP transport served by uvicorn (the
methods :class:`~mcpkit.server.LowLevelServer` mixes in)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, cast

import anyio

from ..aio import MessageChannel, interrupted, running_event_loop, single_errors
from ..exceptions import Interrupted, LocalProtocolError
from ..protocol import Limits
from ._session import ServerSession
from ._stopping import ExitWatchdog, on_sigint, stop_signals

if TYPE_CHECKING:
    from ..transports import HttpServer
    from ._lifespan import Lifespan
    from ._lowlevel import LowLevelServer
    from ._streamable import StreamableHTTPApp

__all__ = ["Running", "serving_line"]

logger = logging.getLogger("mcpkit.server")


_PATHS: Final = {"http": "/mcp", "sse": "/sse", "ws": "/ws"}
_NAMES: Final = {"http": "Streamable HTTP", "sse": "HTTP+SSE (2024-11-05)", "ws": "WebSocket"}


def serving_line(transport: str, http_url: str, path: str | None = None) -> str:
    """What a server says on stderr once it serves: ``mcpkit: serving Streamable HTTP on
    http://127.0.0.1:8000/mcp`` (``http_url``: the listening server's base URL)."""
    scheme = "ws" if transport == "ws" else "http"
    url = http_url.replace("http", scheme, 1) + (path or _PATHS[transport])
    return f"mcpkit: serving {_NAMES[transport]} on {url}"


#: How long a stdio server process may take to end once its client is gone (run()).
_STDIO_EXIT_AFTER: Final = 5.0


def _run(func: Callable[[], Awaitable[None]], backend: str) -> None:
    """``anyio.run``, with Ctrl-C coming out as :class:`~mcpkit.exceptions.Interrupted`
    (a ``KeyboardInterrupt`` that ends the program quietly with status 130 when nobody
    catches it) on every Python and backend.

    Raises:
        Interrupted: SIGINT stopped the server (after it shut down).
        SystemExit: 143, SIGTERM stopped the stdio server (after it shut down).
        LocalProtocolError: called from async code (an event loop runs in this thread).
    """
    running = running_event_loop()
    if running is not None:
        raise LocalProtocolError(
            f"run() starts an event loop of its own, and {running} is already running in "
            "this thread: from async code, await server.serve_stdio() or "
            "server.serve_http(transport, ...) instead"
        )
    try:
        _run_interruptible(func, backend)
    except BaseException as exc:
        if interrupted(exc):
            raise Interrupted from None  # (from None: its cause is the loop's internals)
        raise


def _run_interruptible(func: Callable[[], Awaitable[None]], backend: str) -> None:
    """``anyio.run``, with Ctrl-C coming out as ``KeyboardInterrupt`` on every Python."""
    if backend != "asyncio" or sys.version_info >= (3, 11):
        anyio.run(func, backend=backend)
        return
    # Python 3.10: anyio's copy of asyncio.Runner cancels the main task on SIGINT, like
    # 3.11's, but cannot turn its CancelledError back into KeyboardInterrupt (that takes
    # Task.uncancel, 3.11+): note the interrupt on the way in and convert it here.
    interrupted = False

    def note() -> None:
        nonlocal interrupted
        interrupted = True

    async def main() -> None:
        with on_sigint(note):  # (installed inside: the runner's handler is in place)
            await func()

    try:
        anyio.run(main, backend=backend)
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise


class Running:
    """Serving methods of :class:`~mcpkit.server.LowLevelServer`."""

    if TYPE_CHECKING:
        limits: Limits
        sessions: set[ServerSession]
        lifespan: Lifespan

    def end_subscriptions(self) -> None:
        """End every open ``subscriptions/listen`` stream gracefully (e.g. before shutting
        down): each delivers what is queued for it, then its final result, carrying its
        subscription id (2026-07-28 ``basic/patterns/subscriptions.mdx``, "Graceful
        Closure"). Call it on the event loop's thread."""
        for session in list(self.sessions):
            session.end_listens()

    async def serve(self, channel: MessageChannel) -> None:
        """Serve one connection over ``channel`` until the client closes it.

        The server's lifespan is entered before the first message is read (unless another
        connection or an HTTP app of this server holds it already) and exited after the
        connection ended, even when cancelled.

        Raises:
            Exception: the lifespan's startup failed (its own exception; the channel is
                closed and nothing is served).
        """
        served = False
        try:
            async with self.lifespan.hold():
                served = True
                session = ServerSession(cast("LowLevelServer", self), channel)
                self.sessions.add(session)
                try:
                    await session.run()
                finally:
                    self.sessions.discard(session)
        finally:
            if not served:
                with anyio.CancelScope(shield=True):
                    await channel.aclose()  # the client sees the connection end at once

    async def serve_stdio(self, *, exit_after: float | None = None) -> None:
        """Serve over this process's stdin/stdout until stdin closes or the parent exits.

        Args:
            exit_after: once the client is gone (stdin closed, the parent exited) or
                SIGINT or SIGTERM arrived (each a graceful stop, given ``exit_after``; one
                while a stop is under way ends the process at once), end the process
                (``os._exit``) if it has not ended by itself within this many seconds: a
                handler that ignores its cancellation must not keep a server its client
                has left running for ever. ``None`` (the default, for a server embedded in
                a larger program): no such bound. ``run("stdio")`` and ``mcpkit run`` use
                5 s.

        Raises:
            KeyboardInterrupt: SIGINT stopped it (given ``exit_after``; else as the
                event loop delivers Ctrl-C).
            SystemExit: 143, SIGTERM stopped it (given ``exit_after``).
        """
        from ..transports import stdio_channel, wait_parent_exit

        channel = stdio_channel(limits=self.limits)
        arm = ExitWatchdog(exit_after) if exit_after is not None else None
        if arm is not None:
            channel.on_eof = lambda: arm(0)
        stopped: list[int] = []
        # single_errors: Ctrl-C comes out as KeyboardInterrupt (trio delivers it inside
        # the task group, which would wrap it in an exception group), as on asyncio.
        with single_errors(), stop_signals(arm is not None) as (signals, sigint):
            async with anyio.create_task_group() as tg:

                async def watch_parent() -> None:
                    await wait_parent_exit()
                    if arm is not None:
                        arm(0)
                    tg.cancel_scope.cancel()

                # Shielded: it keeps listening while the server stops, until it has.
                listening = anyio.CancelScope(shield=True)

                async def watch_signals(signals: AsyncIterator[int], arm: ExitWatchdog) -> None:
                    with listening:
                        async for signum in signals:
                            arm.stop_signal(128 + signum)  # (130 for SIGINT, 143 for SIGTERM)
                            stopped.append(signum)
                            tg.cancel_scope.cancel()

                tg.start_soon(watch_parent)
                if signals is not None and arm is not None:  # (signals come with arm)
                    tg.start_soon(watch_signals, signals, arm)
                try:
                    with on_sigint(None if arm is None or sigint else lambda: arm(130)):
                        await self.serve(channel)
                finally:
                    listening.cancel()
                    tg.cancel_scope.cancel()
        if stopped:  # (the server has shut down)
            if stopped[0] == signal.SIGTERM:
                raise SystemExit(128 + signal.SIGTERM)
            raise KeyboardInterrupt

    def streamable_http_app(self, **options: Any) -> StreamableHTTPApp:
        """This server as a Streamable HTTP ASGI application (see
        :class:`~mcpkit.server.StreamableHTTPApp` for the options).

        Raises:
            LocalProtocolError: an invalid option.
        """
        from ._http_apps import app_for

        return cast("StreamableHTTPApp", app_for(cast("LowLevelServer", self), "http", **options))

    async def serve_http(
        self,
        transport: str = "http",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        ready: Callable[[HttpServer], None] | None = None,
        ssl_certfile: str | os.PathLike[str] | None = None,
        ssl_keyfile: str | os.PathLike[str] | None = None,
        ssl_keyfile_password: str | None = None,
        **options: Any,
    ) -> None:
        """Serve over HTTP with uvicorn until cancelled (asyncio only).

        Args:
            transport: ``"http"`` (Streamable HTTP), ``"sse"`` (the 2024-11-05 HTTP+SSE
                transport) or ``"ws"`` (WebSocket).
            host: the address to bind (loopback by default).
            port: the port (0: any free port, reported to ``ready``).
            ready: called with the running server once it accepts connections (after
                the lifespan's startup).
            ssl_certfile, ssl_keyfile, ssl_keyfile_password: serve TLS only (HTTPS,
                WSS) with this PEM certificate chain and key (see
                :func:`mcpkit.transports.serve_http`).
            options: passed to the ASGI app (path, stateless, security, ...).

        Raises:
            LocalProtocolError: unknown transport or option; a certificate or key that
                cannot be loaded.
            OSError: the address cannot be bound.
        """
        from ..protocol import TransportSecurity
        from ..transports import serve_http
        from ._http_apps import app_for

        options.setdefault("security", TransportSecurity.for_bind(host, port))
        app = app_for(cast("LowLevelServer", self), transport, **options)
        close_all = getattr(app, "close_all", None)
        shutdown = getattr(app, "shutdown", None)  # (WebSocketApp's: see there)

        def on_shutdown() -> Awaitable[None] | None:
            # Open subscriptions/listen streams end with their final result, not a cut;
            # sessions end with their streams, so open SSE responses finish now instead
            # of holding the shutdown for uvicorn's whole grace period.
            self.end_subscriptions()
            if shutdown is not None:
                return cast("Awaitable[None]", shutdown())
            if close_all is not None:
                close_all()
            return None

        # (serve_http gives uvicorn a WebSocket app's own frame limit.)
        await serve_http(
            app,
            host=host,
            port=port,
            ready=ready,
            on_shutdown=on_shutdown,
            ssl_certfile=ssl_certfile,
            ssl_keyfile=ssl_keyfile,
            ssl_keyfile_password=ssl_keyfile_password,
        )

    def run(
        self,
        transport: str = "stdio",
        *,
        backend: str = "asyncio",
        host: str = "127.0.0.1",
        port: int = 8000,
        **options: Any,
    ) -> None:
        """Run the server until it is told to stop (blocking).

        Args:
            transport: ``"stdio"``, ``"http"`` (Streamable HTTP), ``"sse"`` (legacy
                HTTP+SSE) or ``"ws"`` (WebSocket).
            backend: ``"asyncio"`` or ``"trio"`` (stdio only: uvicorn runs on asyncio).
            host: the address to bind for the HTTP transports.
            port: the port for the HTTP transports.
            options: options of the HTTP transport's ASGI app, and ``ssl_certfile``,
                ``ssl_keyfile`` and ``ssl_keyfile_password`` to serve TLS (see
                :meth:`serve_http`).

        Serving HTTP, it says where on stderr once it accepts connections
        (``mcpkit: serving Streamable HTTP on http://127.0.0.1:8000/mcp``).

        Ctrl-C (SIGINT) shuts the server down (for stdio within 5 s, see
        :meth:`serve_stdio`) and then raises :class:`~mcpkit.exceptions.Interrupted`: a
        ``KeyboardInterrupt`` for code that catches one around ``run()``; uncaught, the
        program ends with status 130 and no traceback. SIGTERM shuts it down the same way,
        then ends the program with status 143 (128 + SIGTERM).

        Raises:
            LocalProtocolError: unknown transport, trio asked for an HTTP transport, or
                called from async code (await :meth:`serve_stdio` or :meth:`serve_http`).
            Interrupted: Ctrl-C stopped the server.
            SystemExit: 143, SIGTERM stopped the server (stdio; over HTTP uvicorn ends
                the process with the signal itself once it has shut down).
        """
        if transport == "stdio":
            _run(functools.partial(self.serve_stdio, exit_after=_STDIO_EXIT_AFTER), backend)
            return
        if transport not in ("http", "sse", "ws"):
            raise LocalProtocolError(
                f"unknown transport {transport!r}; available: 'stdio', 'http', 'sse', 'ws'"
            )
        if backend != "asyncio":
            raise LocalProtocolError("the HTTP transports are served by uvicorn, on asyncio")
        path = options.get("path", options.get("sse_path"))  # (app_for takes both for sse)

        def announce(http: HttpServer) -> None:  # (as `mcpkit run` does: where to connect)
            print(serving_line(transport, http.url, path), file=sys.stderr, flush=True)

        ready = options.pop("ready", None) or announce  # (the CLI says it its own way)
        serve = functools.partial(self.serve_http, transport, host=host, port=port)
        _run(functools.partial(serve, ready=ready, **options), "asyncio")
