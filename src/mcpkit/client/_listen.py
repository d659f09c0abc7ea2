"""``subscriptions/listen`` on the client (2026-07-28): a notification stream as an async
iterator.

2026-07-28 ``basic/patterns/subscriptions.mdx``: the client opens a long-lived
``subscriptions/listen`` request naming the notifications it wants; the server first sends
``notifications/subscriptions/acknowledged`` (the subset it honours), then every matching
notification with ``_meta["io.modelcontextprotocol/subscriptionId"]`` set to the listen
request's id, and answers the request only when it ends the stream gracefully. The client
ends it by cancelling the request (``notifications/cancelled`` on stdio, closing the
response stream over HTTP).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec
from msgspec import UNSET, Raw

from ..aio import single_errors
from ..exceptions import (
    CapabilityError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from ..types import (
    META_SUBSCRIPTION_ID,
    RequestId,
    SubscriptionFilter,
    SubscriptionsListenResult,
)
from ..types._echo import one_line
from ._mrtr import result_kind

if TYPE_CHECKING:
    from ..aio import Endpoint
    from ._modern import ModernServer

__all__ = [
    "ACKNOWLEDGED",
    "ListenMethods",
    "ListenNotification",
    "ListenStream",
    "subscription_of",
]

logger = logging.getLogger("mcpkit.client")

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"


def subscription_of(params: Raw | None) -> tuple[Any, dict[str, Any]] | None:
    """The subscription id a notification carries in its ``_meta``, and its params
    (decoded once, for the stream)."""
    if params is None:
        return None
    try:
        decoded = msgspec.json.decode(params)
    except msgspec.DecodeError:
        return None
    meta = decoded.get("_meta") if isinstance(decoded, dict) else None
    if not isinstance(meta, dict) or META_SUBSCRIPTION_ID not in meta:
        return None
    found = meta[META_SUBSCRIPTION_ID]
    if isinstance(found, bool) or not isinstance(found, (str, int)):
        return None  # not an id we could have given (a listen request's id): not a listen's
    return found, decoded


#: The list-change notifications a listen asks for, by the filter's member that asks.
_FLAGS: Final = {
    "notifications/tools/list_changed": "tools_list_changed",
    "notifications/prompts/list_changed": "prompts_list_changed",
    "notifications/resources/list_changed": "resources_list_changed",
}


def _asked_for(wanted: SubscriptionFilter, method: str, params: dict[str, Any]) -> bool:
    """Whether a listen asking for ``wanted`` asked for this notification (a server MUST
    NOT send any other on it: ``SubscriptionFilter`` in the 2026-07-28 schema)."""
    if method == "notifications/resources/updated":
        uris = wanted.resource_subscriptions
        return isinstance(uris, list) and params.get("uri") in uris
    flag = _FLAGS.get(method)
    return flag is not None and getattr(wanted, flag) is True


@dataclass(frozen=True)
class ListenNotification:
    """One notification delivered on a listen stream.

    Attributes:
        method: e.g. ``notifications/tools/list_changed``.
        params: its params (``_meta`` included).
    """

    method: str
    params: dict[str, Any]


class ListenStream:
    """The notifications of one ``subscriptions/listen`` request, in order; iterate with
    ``async for``. Made by :meth:`mcpkit.client.Client.listen`.

    Attributes:
        subscription_id: the listen request's id (on every delivered notification).
        honoured: the part of the requested filter the server honours (from its
            acknowledgement).
        result: the server's final result once it ended the stream gracefully.
        dropped: notifications dropped because the consumer fell ``max_queued`` (or
            ``max_queued_bytes``) behind.
    """

    def __init__(self, wanted: SubscriptionFilter, max_queued: int, max_bytes: int) -> None:
        self.subscription_id: RequestId | None = None
        self._wanted = wanted
        self.honoured: SubscriptionFilter | None = None
        self.result: SubscriptionsListenResult | None = None
        self.dropped = 0
        self._max_queued = max_queued
        self._max_bytes = max_bytes
        #: Each waiting notification with its size as received (encoded params).
        self._queue: deque[tuple[ListenNotification, int]] = deque()
        self._queued_bytes = 0
        #: Why the stream failed (the listen request's error), if it did.
        self.error: BaseException | None = None
        self._ended = False
        self._wakeup = anyio.Event()
        self.acknowledged = anyio.Event()
        self._early = False  # a notification came before the acknowledgement (said once)

    # -- fed by the client ----------------------------------------------------------------

    def deliver(self, method: str, params: dict[str, Any], size: int = 0) -> None:
        if method == ACKNOWLEDGED:
            try:
                self.honoured = msgspec.convert(
                    params.get("notifications") or {}, SubscriptionFilter
                )
            except msgspec.ValidationError as exc:
                self.fail(
                    RemoteProtocolError(
                        f"invalid subscription acknowledgement: {one_line(str(exc))}"
                    )
                )
                return
            self.acknowledged.set()
            return
        if not self.acknowledged.is_set() and not self._early:
            # subscriptions.mdx: the acknowledgement comes first; tolerate, but say so
            # (once per stream: a server flooding before it wrote 235,000 lines in 5 s).
            self._early = True
            logger.warning("a listen notification arrived before its acknowledgement")
        if not _asked_for(self._wanted, method, params):
            # Not the stream's to deliver (the client's callbacks still get it).
            logger.debug("listen stream %r: %r was not asked for", self.subscription_id, method)
            return
        # Bounded in number and in bytes (a server chooses how large each one is): the
        # oldest go, and the loss is counted; the newest is kept whatever its size (one
        # message is bounded by the connection's max_message_bytes).
        while self._queue and (
            len(self._queue) >= self._max_queued or self._queued_bytes + size > self._max_bytes
        ):
            self._queued_bytes -= self._queue.popleft()[1]
            self.dropped += 1
            if self.dropped == 1:
                logger.warning(
                    "listen stream %r: consumer too slow, dropping", self.subscription_id
                )
        self._queue.append((ListenNotification(method, params), size))
        self._queued_bytes += size
        self._wake()

    def finish(self, result: SubscriptionsListenResult) -> None:
        self.result = result
        self._ended = True
        # The final answer ends the wait for an acknowledgement too (a server that
        # answers without acknowledging first has nothing more to send).
        self.acknowledged.set()
        self._wake()

    def fail(self, error: BaseException) -> None:
        if not self._ended:
            self.error = error
            self._ended = True
        self.acknowledged.set()  # nobody waits for an acknowledgement that cannot come
        self._wake()

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = anyio.Event()

    # -- read by the user -----------------------------------------------------------------

    def __aiter__(self) -> ListenStream:
        return self

    async def __anext__(self) -> ListenNotification:
        """The next notification; the iteration ends when the server ends the stream.

        Raises:
            RPCError: the server refused or failed the listen request.
            ConnectionClosedError: the connection ended.
        """
        while not self._queue:
            if self._ended:
                if self.error is not None:
                    raise self.error
                raise StopAsyncIteration
            await self._wakeup.wait()
        note, size = self._queue.popleft()
        self._queued_bytes -= size
        return note


class ListenMethods:
    """``Client.listen``; mixed into :class:`mcpkit.client.Client`."""

    if TYPE_CHECKING:
        _endpoint: Endpoint | None
        _modern: ModernServer | None
        _listens: dict[RequestId, ListenStream]
        timeout: float | None

        def _meta(self, version: str) -> dict[str, Any]: ...

    @contextlib.asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        max_queued: int = 1024,
        max_queued_bytes: int = 32 * 1024 * 1024,
    ) -> AsyncIterator[ListenStream]:
        """Open a ``subscriptions/listen`` stream (2026-07-28) for the chosen
        notifications: list changes of tools, prompts, resources, and updates of the
        resources named in ``resource_uris``. Entering waits (within the client's timeout)
        for the server's acknowledgement; leaving cancels the request::

            async with client.listen(tools=True) as stream:
                async for note in stream:
                    print(note.method)

        At most ``max_queued`` notifications, of at most ``max_queued_bytes`` (as
        received) together, wait for the consumer; beyond that the oldest are dropped (and
        counted in ``stream.dropped``).

        Raises:
            CapabilityError: the server speaks the handshake era (use
                ``subscribe_resource`` and ``on_list_changed`` there).
            RPCError: the server refused the listen request.
            RequestTimeoutError: no acknowledgement in time.
            LocalProtocolError: the client is not connected, or ``max_queued`` or
                ``max_queued_bytes`` < 1.
        """
        if self._endpoint is None:
            raise LocalProtocolError("the client is not connected; use `async with Client(...)`")
        if self._modern is None:
            raise CapabilityError(
                "subscriptions/listen exists only in MCP 2026-07-28; this server speaks the "
                "handshake era (use subscribe_resource and on_list_changed)"
            )
        if max_queued < 1 or max_queued_bytes < 1:
            raise LocalProtocolError("max_queued and max_queued_bytes must be at least 1")
        wanted = SubscriptionFilter(
            tools_list_changed=True if tools else UNSET,
            prompts_list_changed=True if prompts else UNSET,
            resources_list_changed=True if resources else UNSET,
            resource_subscriptions=list(resource_uris) if resource_uris else UNSET,
        )
        params = {
            "notifications": msgspec.to_builtins(wanted),
            "_meta": self._meta(self._modern.version),
        }
        stream = ListenStream(wanted, max_queued, max_queued_bytes)
        endpoint = self._endpoint
        listens = self._listens

        def register(rid: RequestId) -> None:
            stream.subscription_id = rid
            listens[rid] = stream

        async def run() -> None:
            try:
                # Long-lived by design: it ends when the server closes the stream or the
                # caller leaves the block (which cancels it).
                raw = await endpoint.request(
                    "subscriptions/listen", params, timeout=None, on_sent=register
                )
                # Its resultType is checked like any 2026-07-28 result's (basic/index.mdx
                # "Responses"): an unknown one, or input_required, is no graceful end.
                result_kind(raw, "subscriptions/listen")
                stream.finish(msgspec.json.decode(raw, type=SubscriptionsListenResult))
            except msgspec.ValidationError as exc:
                stream.fail(
                    RemoteProtocolError(
                        f"invalid subscriptions/listen result: {one_line(str(exc))}"
                    )
                )
            except Exception as exc:
                stream.fail(exc)
            finally:
                if stream.subscription_id is not None:
                    listens.pop(stream.subscription_id, None)

        # The documented errors, and the caller's own from the block, as themselves.
        with single_errors():
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                try:
                    wait = math.inf if self.timeout is None else self.timeout
                    try:
                        with anyio.fail_after(wait):
                            await stream.acknowledged.wait()
                    except TimeoutError:
                        raise RequestTimeoutError(
                            "subscriptions/listen was not acknowledged in time"
                        ) from None
                    if stream.error is not None:
                        raise stream.error
                    yield stream
                finally:
                    tg.cancel_scope.cancel()
