"""What a :class:`Client` connects to: a transport, an open channel, or a server object
in this process (``Client(server)``, the in-memory connection tests use)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

import anyio

from ..aio import MessageChannel, memory_channel_pair, single_errors
from ..exceptions import LocalProtocolError

__all__ = ["ClientTransport", "InProcessServer", "check_target", "exit_reason", "open_channel"]


@runtime_checkable
class ClientTransport(Protocol):
    """Something that can open a message channel to a server, e.g. :class:`StdioTransport`."""

    def connect(self) -> contextlib.AbstractAsyncContextManager[MessageChannel]:
        """Return a context manager that opens the channel on entry and closes it on exit."""
        ...


@runtime_checkable
class InProcessServer(Protocol):
    """A server in this process that serves a connection over a channel: mcpkit's
    ``Server`` and ``LowLevelServer`` (the client never imports them: anything with this
    method will do)."""

    async def serve(self, channel: MessageChannel) -> None:
        """Serve one connection over ``channel`` until it is closed."""
        ...


Target = ClientTransport | MessageChannel | InProcessServer


def check_target(target: object) -> None:
    """Refuse, at once, what a client cannot connect to (a URL is checked when used).

    Raises:
        LocalProtocolError: ``target`` is none of the accepted kinds.
    """
    if not isinstance(target, (str, ClientTransport, MessageChannel, InProcessServer)):
        raise LocalProtocolError(
            f"a Client connects to a server URL, a transport (StdioTransport, ...), an open "
            f"MessageChannel or a server object in this process, not "
            f"{type(target).__name__}"
        )


async def open_channel(stack: contextlib.AsyncExitStack, target: Target) -> MessageChannel:
    """The channel to ``target``, to be closed by ``stack``."""
    if isinstance(target, ClientTransport):
        return await stack.enter_async_context(target.connect())
    if isinstance(target, MessageChannel):
        return target
    return await stack.enter_async_context(_serve_in_process(target))


@contextlib.asynccontextmanager
async def _serve_in_process(server: InProcessServer) -> AsyncIterator[MessageChannel]:
    """Run ``server`` on one end of an in-memory channel pair for as long as the client
    uses the other end. An exception from either side propagates as itself."""
    client_end, server_end = memory_channel_pair()
    with single_errors():
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            try:
                yield client_end
            finally:
                # The client closed its end (the server then ends by itself): stop
                # waiting for it regardless, a server's cleanup must not hold the caller.
                tg.cancel_scope.cancel()


async def exit_reason(channel: MessageChannel | None) -> str | None:
    """Why the peer behind ``channel`` went away, when its transport can tell (a server
    subprocess: its exit status and the end of its captured stderr)."""
    reason = getattr(channel, "exit_reason", None)
    if reason is None:
        return None
    try:
        with anyio.fail_after(2):
            found = await reason()
    except Exception:  # (an explanation must never replace the error it explains)
        return None
    return found if isinstance(found, str) else None
