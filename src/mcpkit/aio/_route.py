"""Reply routes: where the messages belonging to one inbound request go.

Over stdio every message shares one pipe. Over Streamable HTTP each POST has its own
answer (a JSON body or an SSE stream), and the server SHOULD send the messages related to a
request (progress, log messages, its own requests such as sampling) on that request's
stream, then the response (``basic/transports.mdx`` 2025-11-25, "Sending Messages to the
Server"). A transport that cares hands :meth:`Endpoint.dispatch` a route with each message
it received; the endpoint sends everything the request's handler produces through it.
"""

from __future__ import annotations

from contextvars import Context, ContextVar, copy_context
from typing import Final, Protocol, runtime_checkable

__all__ = ["ReplyRoute", "current_route", "detached_context"]


@runtime_checkable
class ReplyRoute(Protocol):
    """The answer channel of one message received by a transport (for example one POST).

    The endpoint calls :meth:`finish` exactly once for every request it dispatched on the
    route, and :meth:`send` for every other message produced while handling one of them.
    """

    async def send(self, message: bytes) -> None:
        """Send a message related to a request on this route (a notification or a request
        of our own).

        Raises:
            mcpkit.exceptions.MessageNotDelivered: the message cannot be delivered.
        """

    async def finish(self, message: bytes | None) -> None:
        """One request on this route is done; ``message`` is what answers it: its response
        (or, for a JSON-RPC batch, the whole batch reply once complete), or ``None`` when
        nothing is to be sent (cancelled, or a batch still waiting for other answers)."""

    def close_connection(self, retry_ms: int | None = None) -> bool:
        """Close the network connection carrying this route without ending the stream, so
        the peer reconnects and resumes it (SSE polling, SEP-1699). ``retry_ms`` asks the
        peer to wait that long before reconnecting. Returns whether it was closed."""


_CURRENT: Final[ContextVar[ReplyRoute | None]] = ContextVar("mcpkit_reply_route", default=None)


def current_route() -> ReplyRoute | None:
    """The route of the request whose handler is running in this task, if any."""
    return _CURRENT.get()


def detached_context() -> Context:
    """A copy of the current context without the reply route: to start a task from a
    request's handler that does not belong to the request. A task inherits its creator's
    context, and every timer it arms (a cancel scope's deadline) keeps a snapshot of it
    until that timer is due, cancelled or not; through the route, that would keep the
    request's exchange and session alive, and send the task's messages down its stream."""
    context = copy_context()
    context.run(_CURRENT.set, None)
    return context
