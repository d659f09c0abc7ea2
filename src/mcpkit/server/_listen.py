"""Change notifications on the server: ``subscriptions/listen`` (2026-07-28) and the
handshake era's ``resources/subscribe``, both fed by the server's notification bus.

2026-07-28 ``basic/patterns/subscriptions.mdx``: a listen request opens a long-lived
stream carrying only the notification types its filter asked for and the server honours
(``toolsListChanged``, ``promptsListChanged``, ``resourcesListChanged``,
``resourceSubscriptions``); the first message is ``notifications/subscriptions/acknowledged``
with the honoured subset; every message on it carries
``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen request's id). The client
ends it by cancelling (``notifications/cancelled`` on stdio, closing the response stream on
HTTP); the server ends it gracefully with a ``complete`` result carrying the id.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc
from msgspec import UNSET

from ..aio import BusMessage, Subscription, on_loop_thread, runs_event_loop, soon_on_loop
from ..exceptions import ConnectionClosedError, RPCError, SubscriptionOverflowError
from ..types import (
    ErrorCode,
    ServerCapabilities,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from ..types._echo import peer_text
from ._logbridge import current_request
from ._modern import SUBSCRIPTION_ID

if TYPE_CHECKING:
    from ._context import RequestContext
    from ._lowlevel import LowLevelServer
    from ._session import ServerSession

__all__ = [
    "LIST_CHANGED",
    "ResourceUpdates",
    "announce_changed",
    "honoured_filter",
    "list_changed_message",
    "resource_updated_message",
    "serve_listen",
    "tell_changed",
    "too_many_subscriptions",
    "topics_of",
]

logger = logging.getLogger("mcpkit.server")

#: The bus topic (and notification method) of each kind of list change.
LIST_CHANGED: Final = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}
_UPDATED: Final = "notifications/resources/updated"


def _resource_topic(uri: str) -> str:
    return f"{_UPDATED} {uri}"


def list_changed_message(kind: str) -> BusMessage:
    """The bus message telling that the ``kind`` list (tools, prompts, resources) changed."""
    method = LIST_CHANGED[kind]
    return BusMessage(method, method)


def resource_updated_message(uri: str) -> BusMessage:
    """The bus message telling that the resource ``uri`` changed."""
    return BusMessage(_resource_topic(uri), _UPDATED, {"uri": uri})


def honoured_filter(
    capabilities: ServerCapabilities, requested: SubscriptionFilter
) -> SubscriptionFilter:
    """The part of ``requested`` this server honours: only what its capabilities offer
    (``listChanged`` of tools, prompts and resources; ``resources.subscribe`` for
    ``resourceSubscriptions``). Types not honoured are omitted (subscriptions.mdx
    "Acknowledgment")."""
    tools, prompts, resources = (
        capabilities.tools,
        capabilities.prompts,
        capabilities.resources,
    )

    def honour(asked: object, offered: bool) -> bool | None:
        return True if asked is True and offered else None

    wants_tools = honour(requested.tools_list_changed, bool(tools and tools.list_changed))
    wants_prompts = honour(requested.prompts_list_changed, bool(prompts and prompts.list_changed))
    wants_resources = honour(
        requested.resources_list_changed, bool(resources and resources.list_changed)
    )
    uris = requested.resource_subscriptions
    subscribable = bool(resources and resources.subscribe)
    return SubscriptionFilter(
        tools_list_changed=UNSET if wants_tools is None else True,
        prompts_list_changed=UNSET if wants_prompts is None else True,
        resources_list_changed=UNSET if wants_resources is None else True,
        resource_subscriptions=(
            list(dict.fromkeys(uris)) if subscribable and uris is not UNSET else UNSET
        ),
    )


def topics_of(honoured: SubscriptionFilter) -> frozenset[str]:
    """The bus topics a (honoured) filter subscribes to."""
    topics = set()
    if honoured.tools_list_changed is True:
        topics.add(LIST_CHANGED["tools"])
    if honoured.prompts_list_changed is True:
        topics.add(LIST_CHANGED["prompts"])
    if honoured.resources_list_changed is True:
        topics.add(LIST_CHANGED["resources"])
    if honoured.resource_subscriptions is not UNSET:
        topics.update(_resource_topic(uri) for uri in honoured.resource_subscriptions)
    return frozenset(topics)


def too_many_subscriptions(count: int, size: int, limit: int) -> RPCError | None:
    """-32602 when ``count`` subscribed URIs of ``size`` bytes in all pass the server's
    ``max_subscriptions`` (each costs memory and every publication a lookup: bounded per
    client, like everything else a peer can make the server hold)."""
    if count <= limit and size <= 1024 * limit:
        return None
    return RPCError.invalid_params(
        f"Too many subscriptions: {count} resource URIs ({size} bytes), the limit is "
        f"{limit}; unsubscribe from some first",
        {"limit": limit},
    )


async def serve_listen(
    ctx: RequestContext, params: SubscriptionsListenRequestParams
) -> SubscriptionsListenResult:
    """The ``subscriptions/listen`` handler: acknowledge, then deliver what the bus
    publishes on the honoured topics until the client cancels or the server ends the
    subscription (then the final result).

    Raises:
        RPCError: -32603 when the listener fell too far behind and was cut off (the
            client listens again and refetches what it tracks).
    """
    server = ctx.server
    honoured = honoured_filter(server.capabilities(), params.notifications)
    uris = honoured.resource_subscriptions
    if uris is not UNSET:
        refused = too_many_subscriptions(len(uris), sum(map(len, uris)), server.max_subscriptions)
        if refused is not None:
            raise refused
    subscription = server.bus.subscribe(topics_of(honoured))
    tag = {SUBSCRIPTION_ID: ctx.request_id}
    # Log records are never forwarded on a listen stream: progress and log messages flow
    # only on the stream of the request they relate to (transports/streamable-http.mdx).
    current_request.set(None)
    ctx.session.listens.add(subscription)
    try:
        # Subscribed before acknowledging: nothing published after the acknowledgment is
        # missed, and nothing is delivered before it (subscriptions.mdx "Acknowledgment").
        await ctx.notify(
            "notifications/subscriptions/acknowledged",
            SubscriptionsAcknowledgedNotificationParams(notifications=honoured, meta=tag),
        )
        while True:
            try:
                message = await subscription.receive()
            except anyio.EndOfStream:
                break
            except SubscriptionOverflowError as exc:
                logger.warning("listen %s ended: %s", peer_text(ctx.request_id), exc)
                # -32603: the 2026 error-code policy (basic/index.mdx, "Error Codes")
                # retires -32000...-32019 for new uses.
                raise RPCError(
                    ErrorCode.INTERNAL_ERROR,
                    f"Subscription ended: {exc}; listen again and refetch",
                    {"maxQueued": getattr(subscription, "max_queued", None)},
                ) from None
            await ctx.notify(message.method, {**message.params, "_meta": tag})
    finally:
        subscription.close()
        ctx.session.listens.discard(subscription)
    # Graceful closure (subscriptions.mdx): the response carries the subscription id.
    return SubscriptionsListenResult(meta=dict(tag))


class ResourceUpdates:
    """A handshake-era session's ``resources/subscribe`` subscriptions, as one bus
    subscription whose messages are forwarded to the client as plain
    ``notifications/resources/updated`` (the wire stays as it was: no ``_meta``).

    A forwarding task delivers what any publisher (local or, with a shared bus, another
    process) sends; :meth:`flush` delivers what is queued at once, so a local publisher
    can await its notifications going out. Both hold one lock and drain the queue in
    order. A client so slow that its queue overflows loses the queued updates (logged):
    the handshake era has no stream to end.
    """

    __slots__ = ("_lock", "_session", "_subscription", "uri_bytes", "uris")

    def __init__(self, session: ServerSession) -> None:
        self._session = session
        self.uris: set[str] = set()
        self.uri_bytes = 0  # the length of the URIs held (the server bounds it)
        self._subscription: Subscription | None = None
        self._lock: anyio.Lock | None = None  # made on first subscription: most have none

    def add(self, uri: str) -> None:
        if uri not in self.uris:
            self.uris.add(uri)
            self.uri_bytes += len(uri)
            self._retopic()

    def discard(self, uri: str) -> None:
        if uri in self.uris:
            self.uris.discard(uri)
            self.uri_bytes -= len(uri)
            self._retopic()

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def _retopic(self) -> None:
        topics = [_resource_topic(uri) for uri in self.uris]
        if self._subscription is not None:
            self._subscription.update(topics)
            return
        if not topics:
            return
        self._subscription = self._session.server.bus.subscribe(topics)
        if self._lock is None:
            self._lock = anyio.Lock()
        if not self._session.start_soon(self._forward, self._subscription):
            logger.debug("resource updates are delivered on flush only (session not running)")

    async def _forward(self, subscription: Subscription) -> None:
        try:
            while self._subscription is subscription:
                await self.flush()
                await subscription.wait()
        except (anyio.ClosedResourceError, ConnectionClosedError):
            pass
        except Exception:
            # Over HTTP this task runs in the app's shared task group: never break it.
            logger.exception("forwarding resource updates failed; the subscription ends")
        finally:
            subscription.close()

    async def flush(self, *, related: bool = False) -> None:
        """Send what is queued for this session, in order (``related``: with the request
        being handled in this task, when it is this session's own).

        Raises:
            ConnectionClosedError: the client is gone.
        """
        if self._lock is None:
            return  # never subscribed
        async with self._lock:
            subscription = self._subscription
            while subscription is not None:
                try:
                    message = subscription.receive_nowait()
                except SubscriptionOverflowError as exc:
                    # Not forwarded to whichever client's request is running this flush.
                    token = current_request.set(None)
                    try:
                        logger.warning("resource updates for a client were dropped: %s", exc)
                    finally:
                        current_request.reset(token)
                    self._subscription = None
                    self._retopic()
                    return
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                if message is None:
                    return
                # Unless the publishing request is this session's own, related to no
                # request: over HTTP another client's request stream is not this one's.
                await self._session.notify(message.method, message.params, related=related)


def announce_changed(server: LowLevelServer, kind: str, own: ServerSession | None) -> None:
    """Tell every initialized client of ``server`` that the ``kind`` list changed (best
    effort, in the background; nothing to do before the server runs), each session on its
    own event loop's thread: a tool registered from another thread (a sync tool's worker)
    is told from there, and a server serving sessions on several loops (threads) has each
    loop tell its own. This thread's loop (or, from a thread running no loop, the first)
    is waited for; the others are handed the work without waiting (see ``aio._hop``), as
    every one is when this thread runs a loop serving none of them."""
    loops: dict[int, ServerSession] = {}  # a session of each loop, by its thread
    for session in list(server.sessions):
        loops.setdefault(session.loop_thread, session)
    first = loops.pop(threading.get_ident(), None)
    if first is None and loops and not runs_event_loop():
        # From a thread running no loop (a sync tool's worker), one loop is waited for, so
        # the notifications are queued when the call returns. (A loop's thread serving
        # none of these sessions waits for none: that would stall it, and the other loop
        # may be waiting for it.)
        first = loops.pop(next(iter(loops)))
    publish = True  # (the bus's listeners are told once, by the first loop reached)
    if first is not None:
        thread = first.loop_thread
        if on_loop_thread(thread, first.loop_token, tell_changed, server, kind, own, thread, True):
            publish = False
    for thread, session in loops.items():
        args = (server, kind, own, thread, publish)
        if soon_on_loop(thread, session.loop_token, tell_changed, *args):
            publish = False
    if publish:  # (no session yet, or every loop has ended)
        server.bus.publish(list_changed_message(kind))


def tell_changed(
    server: LowLevelServer, kind: str, own: ServerSession | None, loop_thread: int, publish: bool
) -> None:
    """Tell the initialized clients of ``server`` whose sessions run on ``loop_thread``
    (and, with ``publish``, the bus's listeners) that the ``kind`` list changed; ``own``:
    the session of the request being handled, if any. On that loop's thread."""
    if publish:
        server.bus.publish(list_changed_message(kind))
    method = LIST_CHANGED[kind]
    for session in list(server.sessions):
        if session.loop_thread != loop_thread:
            continue  # (another loop's: told by that loop)
        # Once initialize is answered (notifications are not requests, so they need not
        # wait for notifications/initialized; basic/lifecycle.mdx).
        # Only to a client that was told this list can change: parties "MUST only use
        # capabilities that were successfully negotiated" (basic/lifecycle.mdx); a
        # server that had no prompts at initialize never declared prompts.
        if session.protocol_version is not None and _declares_list_changed(session, kind):
            # With the request being handled only on its own client's connection
            # (over HTTP another client's request stream is not this client's).
            session.notify_soon(method, related=session is own)


def _declares_list_changed(session: ServerSession, kind: str) -> bool:
    """Whether ``session``'s initialize result declared ``kind`` with ``listChanged``."""
    declared = getattr(session.server_capabilities, kind, UNSET)
    return declared is not UNSET and getattr(declared, "list_changed", UNSET) is True
