"""Resources: ``resources/list``, ``resources/templates/list``, ``resources/read``,
``resources/subscribe`` / ``unsubscribe`` and ``notifications/resources/updated``
(``server/resources.mdx``).

The resource contents themselves (``TextResourceContents`` / ``BlobResourceContents``) are
:class:`~mcpkit.types.ResourceContents`, shared with embedded resources.
"""

from __future__ import annotations

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field
from ._common import Annotations, Icon, NotificationParams, RequestParams, Result
from ._content import ResourceContents
from ._discovery import CacheScope, InputResponseRequestParams

__all__ = [
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequestParams",
    "UnsubscribeRequestParams",
]


class Resource(WireModel, kw_only=True):
    """A resource the server can read, as listed by ``resources/list``."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ResourceTemplate(WireModel, kw_only=True):
    """A family of resources described by an RFC 6570 URI template."""

    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ListResourcesResult(Result, kw_only=True):
    """``resources/list`` result: one page of resources (cacheable in 2026-07-28)."""

    resources: list[Resource]
    next_cursor: str | UnsetType = UNSET
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ListResourceTemplatesResult(Result, kw_only=True):
    """``resources/templates/list`` result: one page of templates."""

    resource_templates: list[ResourceTemplate]
    next_cursor: str | UnsetType = UNSET
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class ReadResourceRequestParams(InputResponseRequestParams, kw_only=True):
    """``resources/read`` params: the URI (plus the 2026-07-28 retry members)."""

    uri: str


class ReadResourceResult(Result, kw_only=True):
    """``resources/read`` result: the resource's contents (one or more parts)."""

    contents: list[ResourceContents]
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class SubscribeRequestParams(RequestParams, kw_only=True):
    """``resources/subscribe`` params (handshake era; 2026-07-28 uses
    ``subscriptions/listen``)."""

    uri: str


class UnsubscribeRequestParams(RequestParams, kw_only=True):
    """``resources/unsubscribe`` params (handshake era)."""

    uri: str


class ResourceUpdatedNotificationParams(NotificationParams, kw_only=True):
    """``notifications/resources/updated``: a subscribed resource changed."""

    uri: str
