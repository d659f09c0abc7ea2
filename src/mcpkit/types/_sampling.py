"""Sampling: ``sampling/createMessage`` (``client/sampling.mdx``).

The server asks the client's model for a completion. In the handshake era this is a
server-to-client request; in 2026-07-28 it is an input request of a multi round-trip
request (and deprecated). A message's ``content`` is one block or, from 2025-11-25, a list
of blocks including ``tool_use`` / ``tool_result`` (sampling with tools, SEP-1577).
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field
from ._common import RequestParams, Result, Role
from ._content import AudioContent, ContentBlock, ImageContent, TextContent, _Block
from ._tools import Tool

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
]

#: Which MCP servers' context to include (``thisServer``/``allServers`` soft-deprecated in
#: 2025-11-25 unless the client declares ``sampling.context``).
IncludeContext = Literal["none", "thisServer", "allServers"]


class ModelHint(WireModel, kw_only=True):
    """A model name (or family substring) the server would prefer."""

    name: str | UnsetType = UNSET


class ModelPreferences(WireModel, kw_only=True):
    """The server's model preferences: hints in order and priorities in 0..1."""

    hints: list[ModelHint] | UnsetType = UNSET
    cost_priority: float | UnsetType = UNSET
    speed_priority: float | UnsetType = UNSET
    intelligence_priority: float | UnsetType = UNSET


class ToolUseContent(_Block, tag="tool_use", kw_only=True):
    """The model asks to call a tool (2025-11-25)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: Meta | UnsetType = meta_field()


class ToolResultContent(_Block, tag="tool_result", kw_only=True):
    """The result of a tool call, answering the ``tool_use`` block ``tool_use_id``
    (2025-11-25). ``structured_content`` is any JSON value (an object before 2026-07-28).
    """

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


#: A block of a sampling message (``SamplingMessageContentBlock``), tagged on ``type``.
SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent


class SamplingMessage(WireModel, kw_only=True):
    """One message of the conversation to sample from: a single block or a list."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    meta: Meta | UnsetType = meta_field()


class ToolChoice(WireModel, kw_only=True):
    """How the model may use the offered tools (2025-11-25)."""

    mode: Literal["auto", "required", "none"] | UnsetType = UNSET


class CreateMessageRequestParams(RequestParams, kw_only=True):
    """``sampling/createMessage`` params.

    ``metadata`` is an open, provider-specific object; ``task`` (2025-11-25) asks for the
    request to run as a task.
    """

    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | UnsetType = UNSET
    system_prompt: str | UnsetType = UNSET
    include_context: IncludeContext | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    stop_sequences: list[str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    tools: list[Tool] | UnsetType = UNSET
    tool_choice: ToolChoice | UnsetType = UNSET
    task: dict[str, Any] | UnsetType = UNSET


class CreateMessageResult(Result, kw_only=True):
    """``sampling/createMessage`` result: the model's message.

    ``stop_reason`` is open: ``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse``
    (2025-11-25) or any provider-specific string.
    """

    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    stop_reason: str | UnsetType = UNSET
