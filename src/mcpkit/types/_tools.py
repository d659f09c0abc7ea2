"""Tools: ``tools/list`` and ``tools/call`` (``server/tools.mdx``)."""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field
from ._common import Icon, PaginatedRequestParams, Result
from ._content import ContentBlock
from ._discovery import CacheScope, InputResponseRequestParams

__all__ = [
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequestParams",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


class ToolAnnotations(WireModel, kw_only=True):
    """Untrusted hints about a tool's behaviour (2025-03-26+)."""

    title: str | UnsetType = UNSET
    read_only_hint: bool | UnsetType = UNSET
    destructive_hint: bool | UnsetType = UNSET
    idempotent_hint: bool | UnsetType = UNSET
    open_world_hint: bool | UnsetType = UNSET


class ToolExecution(WireModel, kw_only=True):
    """Execution properties of a tool (2025-11-25): whether it may run as a task."""

    task_support: Literal["forbidden", "optional", "required"] | UnsetType = UNSET


class Tool(WireModel, kw_only=True):
    """A tool definition as listed by ``tools/list``.

    ``input_schema`` (and ``output_schema``) are JSON Schema objects kept exactly as given.
    """

    name: str
    input_schema: dict[str, Any]
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    output_schema: dict[str, Any] | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    execution: ToolExecution | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ListToolsRequestParams(PaginatedRequestParams, kw_only=True):
    """``tools/list`` params."""


class ListToolsResult(Result, kw_only=True):
    """``tools/list`` result: one page of tools."""

    tools: list[Tool]
    next_cursor: str | UnsetType = UNSET
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class CallToolRequestParams(InputResponseRequestParams, kw_only=True):
    """``tools/call`` params: the tool's name and its arguments object (plus, on a
    2026-07-28 retry, the answers to an input-required result)."""

    name: str
    arguments: dict[str, Any] | UnsetType = UNSET
    task: dict[str, Any] | UnsetType = UNSET


class CallToolResult(Result, kw_only=True):
    """``tools/call`` result.

    ``is_error`` marks a tool execution error (reported to the model), as opposed to a
    JSON-RPC error (a protocol problem). ``structured_content`` is any JSON value (2026-07-28
    widened it from an object).
    """

    content: list[ContentBlock]
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
