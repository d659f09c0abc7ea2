"""What a client does when the server speaks first: requests (sampling, elicitation,
roots) and notifications, within what the client declared and the era in use."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET, Raw

from ..aio import InboundRequest
from ..exceptions import LocalProtocolError, RPCError
from ..types import (
    ClientCapabilities,
    ErrorCode,
    RequestId,
    ResourceUpdatedNotificationParams,
    Root,
    method_spec,
)
from ..types._echo import peer_text
from ._cache import ResultCache
from ._callbacks import ClientHandlers, RootsProvider, declares
from ._listen import ACKNOWLEDGED, ListenStream, subscription_of
from ._mrtr import Deprecations
from ._notes import CallbackRunner

if TYPE_CHECKING:
    from ._modern import ModernServer

__all__ = ["ServerFacing"]

logger = logging.getLogger("mcpkit.client")

_UPDATED: Final = msgspec.json.Decoder(ResourceUpdatedNotificationParams)


class ServerFacing:
    """The server-to-client half of :class:`~mcpkit.client.Client`."""

    handlers: ClientHandlers
    cache: ResultCache | None
    deprecations: Deprecations
    _declared: ClientCapabilities
    _modern: ModernServer | None
    _requested_version: str
    _listens: dict[RequestId, ListenStream]
    #: Runs the notification callbacks while connected (None: they run inline).
    _callbacks: CallbackRunner | None = None

    if TYPE_CHECKING:  # provided by Client (a stub here would shadow it in the MRO)

        @property
        def protocol_version(self) -> str: ...

        async def notify(self, method: str, params: Any = UNSET) -> None: ...

    async def set_roots(self, roots: RootsProvider) -> None:
        """Replace the client's roots and tell the server (``roots/list_changed``; on
        2026-07-28 roots travel only as answers to input requests, so nothing is sent).

        Raises:
            LocalProtocolError: the client was created without roots (it did not declare
                the capability, and capabilities cannot change after connecting).
        """
        if self.handlers.roots is None:
            raise LocalProtocolError("create the client with roots=... to declare the capability")
        self.handlers.roots = roots
        if self._modern is not None:
            self.deprecations.use("roots", "Roots")
            return
        await self.notify("notifications/roots/list_changed")

    async def list_roots(self) -> list[Root]:
        """The roots this client reports."""
        return list(await self.handlers.list_roots())

    async def _on_request(self, request: InboundRequest) -> Any:
        # Serve only what this client declared, in a method the negotiated revision has
        # (a server may not use an undeclared capability; basic/lifecycle.mdx "Operation").
        # On 2026-07-28 servers send no requests at all (basic/patterns/index.mdx).
        method = request.method
        spec = method_spec(method)
        try:
            version = self.protocol_version
        except LocalProtocolError:
            version = self._requested_version  # still connecting
        declared = {
            "sampling/createMessage": self._declared.sampling,
            "elicitation/create": self._declared.elicitation,
            "roots/list": self._declared.roots,
        }.get(method, True)
        if declared is UNSET or (spec is not None and not spec.in_version(version)):
            raise RPCError(
                ErrorCode.METHOD_NOT_FOUND,
                f"Method not found: {peer_text(method)} (not declared by this client for protocol "
                f"{version})",
            )
        return await self.handlers.handle_request(request, self._declared, version)

    async def _on_notification(self, method: str, params: Raw | None) -> None:
        # A listen stream's notifications name it in _meta (subscriptions.mdx).
        if self._listens:
            found = subscription_of(params)
            stream = None if found is None else self._listens.get(found[0])
            if found is not None and stream is not None:
                stream.deliver(method, found[1], len(params or b""))
                if method == ACKNOWLEDGED:
                    return
        # A relevant notification makes cached results stale at once
        # (server/utilities/caching.mdx "Interaction with Notifications").
        if self.cache is not None:
            uri = None
            if method == "notifications/resources/updated":
                try:
                    uri = _UPDATED.decode(params if params is not None else b"{}").uri
                except msgspec.ValidationError:
                    pass  # the handler reports it
            self.cache.invalidate(method, uri)
        if method == "notifications/elicitation/complete" and not declares(
            self._declared.elicitation, "url"
        ):
            # Only a client that declared URL-mode elicitation hears of one completing
            # (a revision without URL mode has no such notification either).
            logger.debug("notifications/elicitation/complete ignored: no URL mode declared")
            return
        runner = self._callbacks
        if runner is None:
            await self.handlers.handle_notification(method, params)
        else:
            runner.submit(method, params)  # run in order, off the receive loop
