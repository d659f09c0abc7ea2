"""2026-07-28 stateless features: ``server/discover``, ``subscriptions/listen`` and the
multi round-trip request (MRTR) members.

Spec files: ``server/discover.mdx``, ``basic/patterns/subscriptions.mdx``,
``basic/patterns/mrtr.mdx`` and ``server/utilities/caching.mdx`` (``CacheableResult``) of
2026-07-28. Input requests and input responses are kept as open objects here: each one is
a ``{method, params}`` object (``sampling/createMessage``, ``elicitation/create``,
``roots/list``) or the matching result, decoded by the layer that knows which it is.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._base import UNSET, Meta, UnsetType, WireModel
from ._common import NotificationParams, RequestParams, Result, ServerCapabilities

__all__ = [
    "CacheScope",
    "DiscoverResult",
    "InputRequiredResult",
    "InputResponseRequestParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
]

#: Who may reuse a cached result (``server/utilities/caching.mdx``): any client or shared
#: intermediary (``public``) or only the same authorization context (``private``).
CacheScope = Literal["public", "private"]


class InputResponseRequestParams(RequestParams, kw_only=True):
    """Params of a request that may be retried with input (``prompts/get``,
    ``resources/read``, ``tools/call``; 2026-07-28 ``basic/patterns/mrtr.mdx``).

    ``input_responses`` answers the ``inputRequests`` of an :class:`InputRequiredResult` by
    key; ``request_state`` echoes that result's ``requestState`` verbatim.
    """

    input_responses: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET


class InputRequiredResult(Result, kw_only=True):
    """``resultType: "input_required"``: the server needs input before it can answer.

    The client fulfils ``input_requests`` (key -> ``{method, params}``) and retries the
    original request with a new id, ``inputResponses`` and the echoed ``requestState``.

    Raises:
        ValueError: neither ``input_requests`` nor ``request_state`` is set (the spec
            requires at least one).
    """

    input_requests: dict[str, Any] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.input_requests is UNSET and self.request_state is UNSET:
            raise ValueError("an input-required result needs `inputRequests` or `requestState`")


class DiscoverResult(Result, kw_only=True):
    """``server/discover`` result: supported versions, capabilities and instructions.

    Servers should also put ``io.modelcontextprotocol/serverInfo`` in ``_meta``. The result
    is cacheable: ``ttl_ms`` and ``cache_scope`` are required.
    """

    supported_versions: list[str]
    capabilities: ServerCapabilities
    ttl_ms: int
    cache_scope: CacheScope
    instructions: str | UnsetType = UNSET


class SubscriptionFilter(WireModel, kw_only=True):
    """The notifications a ``subscriptions/listen`` stream opts in to (all opt-in)."""

    tools_list_changed: bool | UnsetType = UNSET
    prompts_list_changed: bool | UnsetType = UNSET
    resources_list_changed: bool | UnsetType = UNSET
    resource_subscriptions: list[str] | UnsetType = UNSET


class SubscriptionsListenRequestParams(RequestParams, kw_only=True):
    """``subscriptions/listen`` params: which notifications to deliver on the stream."""

    notifications: SubscriptionFilter


class SubscriptionsListenResult(Result, kw_only=True):
    """``subscriptions/listen`` result, sent only when the server ends the stream gracefully.

    ``_meta`` is required and carries ``io.modelcontextprotocol/subscriptionId`` (the id of
    the listen request).
    """

    meta: Meta = msgspec.field(name="_meta")


class SubscriptionsAcknowledgedNotificationParams(NotificationParams, kw_only=True):
    """``notifications/subscriptions/acknowledged``: the subset of the filter honoured."""

    notifications: SubscriptionFilter
