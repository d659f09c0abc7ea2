"""The method table: every MCP method and notification, with its params and result types,
who sends it, and the revisions it exists in.

This is the "one superset of structs plus a per-method version table" design (see
``docs/design.md``): one set of structs covers every revision, and this table says which
revision a method belongs to. Methods without members of their own (``ping``,
``roots/list``, the ``list_changed`` notifications, ...) use ``RequestParams`` /
``NotificationParams``; the tasks rows are not modelled yet and use them too.

A 2026-07-28 ``prompts/get``, ``resources/read`` or ``tools/call`` may instead be answered
with an :class:`InputRequiredResult` (``resultType: "input_required"``); the row names the
complete result, the session layer picks the type from ``resultType``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from ._common import (
    EmptyResult,
    NotificationParams,
    PaginatedRequestParams,
    RequestParams,
    Result,
)
from ._completion import CompleteRequestParams, CompleteResult
from ._discovery import (
    DiscoverResult,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from ._elicitation import ElicitationCompleteNotificationParams, ElicitRequestParams, ElicitResult
from ._lifecycle import InitializeRequestParams, InitializeResult, SetLevelRequestParams
from ._notifications import (
    CancelledNotificationParams,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
)
from ._prompts import GetPromptRequestParams, GetPromptResult, ListPromptsResult
from ._resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from ._roots import ListRootsResult
from ._sampling import CreateMessageRequestParams, CreateMessageResult
from ._tools import CallToolRequestParams, CallToolResult, ListToolsRequestParams, ListToolsResult
from ._versions import ALL_VERSIONS, V2024_11_05, V2025_06_18, V2025_11_25, V2026_07_28

__all__ = [
    "METHODS",
    "MethodSpec",
    "is_custom_method_name",
    "is_reserved_method_name",
    "method_spec",
]

Sender = Literal["client", "server", "both"]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One row of the method table."""

    name: str
    kind: Literal["request", "notification"]
    sender: Sender
    params: type[RequestParams] | type[NotificationParams]
    result: type[Result] | None
    #: First and last revision (inclusive) the method exists in.
    since: str = V2024_11_05
    until: str | None = None

    def in_version(self, version: str) -> bool:
        """Whether the method exists in ``version``."""
        return self.since <= version and (self.until is None or version <= self.until)


_LAST_HANDSHAKE = V2025_11_25


def _req(
    name: str,
    sender: Sender,
    params: type[RequestParams] = RequestParams,
    result: type[Result] = Result,
    since: str = V2024_11_05,
    until: str | None = None,
) -> MethodSpec:
    return MethodSpec(name, "request", sender, params, result, since, until)


def _note(
    name: str,
    sender: Sender,
    params: type[NotificationParams] = NotificationParams,
    since: str = V2024_11_05,
    until: str | None = None,
) -> MethodSpec:
    return MethodSpec(name, "notification", sender, params, None, since, until)


_TABLE: Final[tuple[MethodSpec, ...]] = (
    # Lifecycle and utilities
    _req("initialize", "client", InitializeRequestParams, InitializeResult, until=_LAST_HANDSHAKE),
    _req("ping", "both", RequestParams, EmptyResult, until=_LAST_HANDSHAKE),
    _req("logging/setLevel", "client", SetLevelRequestParams, EmptyResult, until=_LAST_HANDSHAKE),
    _req("completion/complete", "client", CompleteRequestParams, CompleteResult),
    _req("server/discover", "client", RequestParams, DiscoverResult, since=V2026_07_28),
    _req(
        "subscriptions/listen",
        "client",
        SubscriptionsListenRequestParams,
        SubscriptionsListenResult,
        since=V2026_07_28,
    ),
    # Tools
    _req("tools/list", "client", ListToolsRequestParams, ListToolsResult),
    _req("tools/call", "client", CallToolRequestParams, CallToolResult),
    # Resources
    _req("resources/list", "client", PaginatedRequestParams, ListResourcesResult),
    _req("resources/templates/list", "client", PaginatedRequestParams, ListResourceTemplatesResult),
    _req("resources/read", "client", ReadResourceRequestParams, ReadResourceResult),
    _req(
        "resources/subscribe", "client", SubscribeRequestParams, EmptyResult, until=_LAST_HANDSHAKE
    ),
    _req(
        "resources/unsubscribe",
        "client",
        UnsubscribeRequestParams,
        EmptyResult,
        until=_LAST_HANDSHAKE,
    ),
    # Prompts
    _req("prompts/list", "client", PaginatedRequestParams, ListPromptsResult),
    _req("prompts/get", "client", GetPromptRequestParams, GetPromptResult),
    # Client features (server-to-client requests in the handshake era; 2026-07-28 embeds
    # them in InputRequiredResult, so they stay in the table for their params and results)
    _req(
        "sampling/createMessage",
        "server",
        CreateMessageRequestParams,
        CreateMessageResult,
        until=_LAST_HANDSHAKE,
    ),
    _req("roots/list", "server", RequestParams, ListRootsResult, until=_LAST_HANDSHAKE),
    _req(
        "elicitation/create",
        "server",
        ElicitRequestParams,
        ElicitResult,
        since=V2025_06_18,
        until=_LAST_HANDSHAKE,
    ),
    # Tasks (2025-11-25 core; the 2026-07-28 extension reuses get/cancel and adds update)
    _req("tasks/get", "both", since=V2025_11_25),
    _req("tasks/result", "both", since=V2025_11_25, until=_LAST_HANDSHAKE),
    _req("tasks/list", "both", since=V2025_11_25, until=_LAST_HANDSHAKE),
    _req("tasks/cancel", "both", since=V2025_11_25),
    _req("tasks/update", "client", since=V2026_07_28),
    # Notifications
    _note("notifications/initialized", "client", until=_LAST_HANDSHAKE),
    _note("notifications/cancelled", "both", CancelledNotificationParams),
    _note("notifications/progress", "both", ProgressNotificationParams),
    _note("notifications/message", "server", LoggingMessageNotificationParams),
    _note("notifications/resources/list_changed", "server"),
    _note("notifications/resources/updated", "server", ResourceUpdatedNotificationParams),
    _note("notifications/prompts/list_changed", "server"),
    _note("notifications/tools/list_changed", "server"),
    _note("notifications/roots/list_changed", "client", until=_LAST_HANDSHAKE),
    _note(
        "notifications/elicitation/complete",
        "server",
        ElicitationCompleteNotificationParams,
        since=V2025_11_25,
        until=_LAST_HANDSHAKE,
    ),
    _note("notifications/tasks/status", "both", since=V2025_11_25, until=_LAST_HANDSHAKE),
    _note(
        "notifications/subscriptions/acknowledged",
        "server",
        SubscriptionsAcknowledgedNotificationParams,
        since=V2026_07_28,
    ),
    _note("notifications/tasks", "server", since=V2026_07_28),
)

#: Every MCP method and notification by name.
METHODS: Final[dict[str, MethodSpec]] = {spec.name: spec for spec in _TABLE}

assert all(spec.since in ALL_VERSIONS for spec in _TABLE)

# The first path segments MCP itself uses. A name starting with one of them, or without a
# "/" at all, belongs to the spec's namespace, not to a vendor.
_MCP_SEGMENTS: Final = frozenset(
    name.split("/", 1)[0] for name in METHODS if "/" in name
) | frozenset({"mcp", "modelcontextprotocol"})

# A vendor prefix: dot-separated labels (``basic/index.mdx`` "_meta" key grammar).
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX_RE: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def method_spec(name: str) -> MethodSpec | None:
    """Return the table row of an MCP method or notification, or ``None`` if unknown."""
    return METHODS.get(name)


def is_reserved_method_name(name: str) -> bool:
    """Whether ``name`` lies in a namespace the spec or JSON-RPC reserves.

    Reserved: ``rpc.``-prefixed names (JSON-RPC 2.0 section 4), names without a vendor
    prefix, names under an MCP segment (``tools/``, ``notifications/``, ...), and prefixes
    whose first or second label is ``mcp`` or ``modelcontextprotocol`` (2025-11-25
    ``basic/index.mdx``, reserved ``_meta`` prefixes, applied to method names too).
    """
    if name.startswith("rpc.") or "/" not in name:
        return True
    prefix = name.split("/", 1)[0]
    if prefix in _MCP_SEGMENTS:
        return True
    labels = prefix.split(".")
    return any(label in ("mcp", "modelcontextprotocol") for label in labels[:2])


def is_custom_method_name(name: str) -> bool:
    """Whether ``name`` is a well-formed vendor method (``acme/op``, ``com.acme/op``)."""
    if is_reserved_method_name(name):
        return False
    prefix, _, rest = name.partition("/")
    return bool(rest) and _PREFIX_RE.fullmatch(prefix) is not None
