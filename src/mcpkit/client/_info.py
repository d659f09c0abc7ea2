"""What a connected client knows of its server: version, identity, capabilities and
instructions, from ``initialize`` or (2026-07-28) ``server/discover``. A part of
:class:`~mcpkit.client.Client`."""

from __future__ import annotations

from msgspec import UNSET

from ..exceptions import LocalProtocolError
from ..types import Implementation, InitializeResult, ServerCapabilities
from ._modern import ModernServer

__all__ = ["ServerInfo"]


class ServerInfo:
    """The server's facts, once connected (a mixin of :class:`~mcpkit.client.Client`)."""

    _init: InitializeResult | None
    _modern: ModernServer | None

    def _require_init(self) -> InitializeResult | ModernServer:
        if self._modern is not None:
            return self._modern
        if self._init is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        return self._init

    @property
    def protocol_version(self) -> str:
        """The protocol version in use (chosen by ``initialize``, or the stateless one)."""
        state = self._require_init()
        return state.version if isinstance(state, ModernServer) else state.protocol_version

    @property
    def server_info(self) -> Implementation:
        """The server's self-reported name and version (on 2026-07-28, from
        ``server/discover``; empty when the server did not say)."""
        return self._require_init().server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server offers."""
        state = self._require_init()
        return (
            state.discovered.capabilities
            if isinstance(state, ModernServer)
            else (state.capabilities)
        )

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if any."""
        state = self._require_init()
        found = state.discovered if isinstance(state, ModernServer) else state
        return None if found.instructions is UNSET else found.instructions
