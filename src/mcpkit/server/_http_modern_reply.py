"""How a 2026-07-28 POST is answered once its request is dispatched: JSON when the
handler's response is its only message, else an SSE stream scoped to the request, opened
at the handler's first message; closing that stream cancels the request
(2026-07-28 ``basic/transports/streamable-http.mdx``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from ..aio import Flag
from ._asgi import Receive, Send, until_disconnected
from ._asgi_sse import SSE_HEADERS, Sink, pump

if TYPE_CHECKING:
    from ._http_modern import ModernExchange
    from ._streamable import StreamableHTTPApp

__all__ = ["Reply"]

logger = logging.getLogger("mcpkit.server.http")


async def _until_woken_or_gone(exchange: ModernExchange, receive: Receive) -> bool:
    """Wait for the handler's first message or its end; False if the client left first."""
    gone = False
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            nonlocal gone
            await until_disconnected(receive)
            gone = True
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        await exchange.wake.wait()
        tg.cancel_scope.cancel()
    return not gone


class Reply:
    """The answer to one 2026-07-28 POST: JSON when the handler's response is its only
    message, an SSE stream once it emits anything before it.

    On asyncio the handler runs in the POST's own task (``Endpoint.answer_inline``, as
    handshake-era POSTs do), so an instant handler costs no task, watcher or loop pass.
    Should it have to wait, :meth:`follow` (answer_inline's ``on_suspend``) starts a task that
    waits for its first message, then writes the stream, or for the client leaving, then
    ends the session, which cancels the handler ("closing that stream cancels the
    request"). Elsewhere the handler has a task of its own and the POST's task waits."""

    __slots__ = (
        "_app",
        "_cors",
        "_ended",
        "_exchange",
        "_receive",
        "_scope",
        "_send",
        "gone",
        "streaming",
    )

    def __init__(
        self,
        app: StreamableHTTPApp,
        exchange: ModernExchange,
        receive: Receive,
        send: Send,
        cors: list[Any],
    ) -> None:
        self._app = app
        self._exchange = exchange
        self._receive = receive
        self._send = send
        self._cors = cors
        self._scope: anyio.CancelScope | None = None
        self._ended: Flag | None = None  # set once the follower has ended
        #: The client left before the answer was complete.
        self.gone = False
        #: The stream has started: whoever started it writes it to its end.
        self.streaming = False

    def follow(self) -> None:
        """The handler has to wait: follow it from a task of its own (see the class)."""
        # One request, one answer: known now, so that the answer ends the stream should
        # one open (dispatch, which would say so, returns only when the handler has).
        self._exchange.expect(1)
        self._scope = scope = anyio.CancelScope()
        self._ended = ended = Flag()
        self._app.start_detached(self._follow, scope, ended)

    async def _follow(self, scope: anyio.CancelScope, ended: Flag) -> None:
        exchange = self._exchange
        try:
            with scope:
                if not await _until_woken_or_gone(exchange, self._receive):
                    self.gone = True
                elif not exchange.done.is_set() or exchange.early:
                    self.gone = not await self.stream()
                # (else the handler answered alone: the POST's task sends it as JSON)
            if self.gone:
                self._app.drop(exchange.session)  # cancels the handler, wherever it runs
        except Exception:  # never let one answer take the app's task group down
            logger.exception("writing a 2026-07-28 answer failed")
        finally:
            ended.set()

    async def settle(self) -> bool:
        """Wait, once dispatch has returned, until the answer is the POST task's to give
        (True) or has been given or given up (False)."""
        ended = self._ended
        if ended is None:  # (no follower: an instant handler, or one in a task of its own)
            if not self._exchange.done.is_set():
                self.gone = not await _until_woken_or_gone(self._exchange, self._receive)
            return not self.gone
        if not (self.gone or self.streaming):
            self.stop()  # (it has only been waiting: nothing was written)
        await ended.wait()
        return not (self.gone or self.streaming)

    def stop(self) -> None:
        """Cancel the follower, if any (the POST is over)."""
        if self._scope is not None:
            self._scope.cancel()

    async def stream(self) -> bool:
        """Answer with an SSE stream of what the handler emits, to its end; False if the
        client left first."""
        exchange, app, send = self._exchange, self._app, self._send
        if not exchange.take_answer():
            return True  # (the session's end answered it: see HttpSession.close)
        self.streaming = True
        sink = Sink(app.max_stream_buffer)
        await exchange.start_stream(exchange.session.new_stream(), sink, prime=False)
        headers = [*SSE_HEADERS, *self._cors]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        return await pump(sink, send, self._receive, keepalive=app.keepalive)
