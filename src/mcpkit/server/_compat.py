"""What a server may emit to a client of an older revision.

mcpkit's wire types are one superset of every revision (docs/design.md section 1). Most
newer members are optional and harmless, but some newer *shapes* would make a message
invalid for an older client: content kinds it does not know, structured results, fields
whose meaning it lacks. Everything sent in a session passes through these functions for the
negotiated version, in one place, so tool authors write one server for every client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

import msgspec
from msgspec import UNSET

from ..exceptions import CapabilityError
from ..types import (
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
    AudioContent,
    CallToolResult,
    ContentBlock,
    ImageContent,
    Prompt,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SamplingMessage,
    ServerCapabilities,
    TextContent,
    Tool,
)
from ..types._revisions import block_for, contents_for, implementation_for

__all__ = [
    "capabilities_for",
    "content_for",
    "prompt_for",
    "prompt_message_for",
    "contents_for",
    "described_for",
    "implementation_for",
    "read_result_for",
    "sampling_messages_for",
    "tool_for",
    "tool_result_for",
]

_replace = msgspec.structs.replace


def content_for(version: str, blocks: Sequence[ContentBlock]) -> list[ContentBlock]:
    """Content blocks as a client of ``version`` can read them."""
    if version >= V2025_11_25:
        return list(blocks)
    return [block_for(version, block) for block in blocks]


def sampling_messages_for(version: str, messages: list[SamplingMessage]) -> list[SamplingMessage]:
    """Sampling messages as a client of ``version`` can read them: members it does not
    define dropped (a message's ``_meta`` arrived in 2025-11-25). Several blocks per
    message are refused by the caller.

    Raises:
        CapabilityError: audio content before 2025-03-26 (a placeholder text would change
            what the model is asked).
    """
    if version >= V2025_11_25:
        return messages
    adapted = []
    for message in messages:
        block = message.content
        if isinstance(block, AudioContent) and version < V2025_03_26:
            raise CapabilityError("audio content in sampling needs protocol 2025-03-26 or later")
        if isinstance(block, (TextContent, ImageContent, AudioContent)):
            block = block_for(version, block)  # type: ignore[assignment]
        adapted.append(_replace(message, content=block, meta=UNSET))
    return adapted


def capabilities_for(version: str, caps: ServerCapabilities) -> ServerCapabilities:
    """Server capabilities without those ``version`` does not define (``completions``
    arrived in 2025-03-26; ``tasks`` in 2025-11-25; ``extensions`` in 2026-07-28)."""
    changes: dict[str, object] = {}
    if version < V2025_03_26 and caps.completions is not UNSET:
        changes["completions"] = UNSET
    if version < V2025_11_25 and caps.tasks is not UNSET:
        changes["tasks"] = UNSET
    if version < V2026_07_28 and caps.extensions is not UNSET:
        changes["extensions"] = UNSET
    return _replace(caps, **changes) if changes else caps


def without_push(caps: ServerCapabilities) -> ServerCapabilities:
    """Server capabilities without what needs a way to reach the client outside a request
    (``listChanged``, resource ``subscribe``): for a stateless server."""
    changes: dict[str, object] = {}
    for name in ("tools", "prompts", "resources"):
        declared = getattr(caps, name)
        if declared is not UNSET:
            extra = {"subscribe": UNSET} if name == "resources" else {}
            changes[name] = _replace(declared, list_changed=UNSET, **extra)
    return _replace(caps, **changes) if changes else caps


def tool_for(version: str, tool: Tool) -> Tool:
    """A tool definition without the members ``version`` does not define, and without an
    output schema that is not an object schema before 2026-07-28 (2025-06-18 and
    2025-11-25 require ``outputSchema.type == "object"``; a strict client refuses the
    whole ``tools/list`` otherwise)."""
    fits = _fits_handshake(tool)
    if version >= V2026_07_28 or (version >= V2025_11_25 and fits):
        return tool
    changes: dict[str, object] = {}
    if version < V2025_11_25:
        changes.update(icons=UNSET, execution=UNSET)
    if version < V2025_06_18:
        changes.update(title=UNSET, output_schema=UNSET, meta=UNSET)
    elif not fits:
        changes["output_schema"] = UNSET
    if version < V2025_03_26:
        changes["annotations"] = UNSET
    return _replace(tool, **changes)


def _fits_handshake(tool: Tool) -> bool:
    schema = tool.output_schema
    return schema is UNSET or (isinstance(schema, dict) and schema.get("type") == "object")


# Structured content that is no JSON object (UNSET is none of these; a dict, a Struct or a
# dataclass encode as objects).
_NOT_OBJECTS: Final = (str, int, float, list, tuple, type(None))


def tool_result_for(version: str, result: CallToolResult) -> CallToolResult:
    """A ``tools/call`` result as a client of ``version`` can read it (structured content
    exists from 2025-06-18, and must be an object before 2026-07-28; its text rendering
    in ``content`` stays)."""
    content = result.structured_content
    # (UNSET, the common case, tested first: an isinstance that fails against six types
    # costs six __class__ lookups, and this runs for every tools/call)
    scalar = content is not UNSET and isinstance(content, _NOT_OBJECTS)
    if version >= V2026_07_28 or (version >= V2025_11_25 and not scalar):
        return result
    changes: dict[str, object] = {}
    if version < V2025_11_25:
        changes["content"] = content_for(version, result.content)
    if version < V2025_06_18 or scalar:
        changes["structured_content"] = UNSET
    return _replace(result, **changes)


_Described = TypeVar("_Described", Resource, ResourceTemplate)


def described_for(version: str, item: _Described) -> _Described:
    """A resource or resource template without members newer than ``version`` (icons
    arrived in 2025-11-25; title and ``_meta`` in 2025-06-18)."""
    if version >= V2025_11_25:
        return item
    changes: dict[str, object] = {"icons": UNSET}
    if version < V2025_06_18:
        changes.update(title=UNSET, meta=UNSET)
        annotations = item.annotations
        if annotations is not UNSET and annotations.last_modified is not UNSET:
            changes["annotations"] = _replace(annotations, last_modified=UNSET)
    return _replace(item, **changes)


def read_result_for(version: str, result: ReadResourceResult) -> ReadResourceResult:
    """A ``resources/read`` result as a client of ``version`` can read it."""
    if version >= V2025_06_18:
        return result
    return _replace(result, contents=[contents_for(version, c) for c in result.contents])


def prompt_for(version: str, prompt: Prompt) -> Prompt:
    """A prompt without members newer than ``version``."""
    if version >= V2025_11_25:
        return prompt
    changes: dict[str, object] = {"icons": UNSET}
    if version < V2025_06_18:
        changes.update(title=UNSET, meta=UNSET)
        if prompt.arguments is not UNSET:
            changes["arguments"] = [_replace(a, title=UNSET) for a in prompt.arguments]
    return _replace(prompt, **changes)


def prompt_message_for(version: str, message: PromptMessage) -> PromptMessage:
    """A prompt message whose content block ``version`` can read."""
    if version >= V2025_11_25:
        return message
    return _replace(message, content=block_for(version, message.content))
