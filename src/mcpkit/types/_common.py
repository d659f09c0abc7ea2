"""Shapes shared across features: implementation info, icons, annotations, capabilities,
and the base params/result members every request, notification and result carries.
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field

__all__ = [
    "Annotations",
    "ClientCapabilities",
    "EmptyResult",
    "Icon",
    "Implementation",
    "LoggingLevel",
    "NotificationParams",
    "PaginatedRequestParams",
    "PromptsCapability",
    "RequestParams",
    "ResourcesCapability",
    "Result",
    "Role",
    "RootsCapability",
    "ServerCapabilities",
    "ToolsCapability",
]

Role = Literal["user", "assistant"]

#: Log severities in RFC 5424 order (``server/utilities/logging.mdx``).
LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]


class RequestParams(WireModel, kw_only=True):
    """Base of every request's params: only the optional ``_meta`` object."""

    meta: Meta | UnsetType = meta_field()


class PaginatedRequestParams(RequestParams, kw_only=True):
    """Params of every list request (``server/utilities/pagination.mdx``)."""

    cursor: str | UnsetType = UNSET


class NotificationParams(WireModel, kw_only=True):
    """Base of every notification's params."""

    meta: Meta | UnsetType = meta_field()


class Result(WireModel, kw_only=True):
    """Base of every result: ``_meta`` and, from 2026-07-28, ``resultType``."""

    meta: Meta | UnsetType = meta_field()
    result_type: str | UnsetType = UNSET


class EmptyResult(Result, kw_only=True):
    """The result of ``ping`` and other acknowledgement-only requests: ``{}``."""


class Icon(WireModel, kw_only=True):
    """An icon for display (2025-11-25, SEP-973)."""

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class Implementation(WireModel, kw_only=True):
    """Name and version of an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    website_url: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET


class Annotations(WireModel, kw_only=True):
    """Display hints for content: audience, priority (0..1) and last modification time."""

    audience: list[Role] | UnsetType = UNSET
    priority: float | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class RootsCapability(WireModel, kw_only=True):
    list_changed: bool | UnsetType = UNSET


class ClientCapabilities(WireModel, kw_only=True):
    """What a client supports. Capabilities not yet modelled in detail stay open objects."""

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    roots: RootsCapability | UnsetType = UNSET
    sampling: dict[str, Any] | UnsetType = UNSET
    elicitation: dict[str, Any] | UnsetType = UNSET
    tasks: dict[str, Any] | UnsetType = UNSET
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET


class PromptsCapability(WireModel, kw_only=True):
    list_changed: bool | UnsetType = UNSET


class ResourcesCapability(WireModel, kw_only=True):
    subscribe: bool | UnsetType = UNSET
    list_changed: bool | UnsetType = UNSET


class ToolsCapability(WireModel, kw_only=True):
    list_changed: bool | UnsetType = UNSET


class ServerCapabilities(WireModel, kw_only=True):
    """What a server offers; computed from what is registered."""

    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    logging: dict[str, Any] | UnsetType = UNSET
    completions: dict[str, Any] | UnsetType = UNSET
    prompts: PromptsCapability | UnsetType = UNSET
    resources: ResourcesCapability | UnsetType = UNSET
    tools: ToolsCapability | UnsetType = UNSET
    tasks: dict[str, Any] | UnsetType = UNSET
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET
