"""What a server sends is adapted to the negotiated revision on every path, not only the
high-level ones: the low-level server's ``tools/list`` / ``tools/call``, the server's
``sampling/createMessage`` requests (a message's ``_meta``, content members and audio),
``includeContext`` before ``sampling.context`` existed, and ``resource_link`` icons
(``server/_compat.py``; the members per revision are those of each ``schema.json``)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from mcpkit.server import LowLevelServer, RequestContext, Server
from mcpkit.server._peer import create_message
from mcpkit.testing import connect_memory
from mcpkit.types import (
    Annotations,
    AudioContent,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    Icon,
    ImageContent,
    ResourceLink,
    SamplingMessage,
    TextContent,
    Tool,
    ToolAnnotations,
)

pytestmark = pytest.mark.anyio

ICONS = [Icon(src="https://example.com/i.png")]


def low_level() -> LowLevelServer:
    server = LowLevelServer("low")
    tool = Tool(
        name="media",
        title="Media",
        input_schema={"type": "object"},
        output_schema={"type": "object"},
        annotations=ToolAnnotations(read_only_hint=True),
        icons=ICONS,
    )

    async def media(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        return CallToolResult(
            content=[AudioContent(data="AAAA", mime_type="audio/wav")],
            structured_content={"n": 1},
        )

    server.add_tool(tool, media)
    return server


async def test_low_level_tools_are_adapted_for_2024_11_05() -> None:
    async with connect_memory(low_level(), protocol_version="2024-11-05") as client:
        (tool,) = [t async for t in client.iter_tools()]
        assert (tool.title, tool.output_schema, tool.annotations, tool.icons) == (UNSET,) * 4
        result = await client.call_tool("media")
        assert result.structured_content is UNSET
        (block,) = result.content
        assert isinstance(block, TextContent)
        assert "audio" in block.text


async def test_low_level_tools_are_whole_for_2025_11_25() -> None:
    async with connect_memory(low_level(), protocol_version="2025-11-25") as client:
        (tool,) = [t async for t in client.iter_tools()]
        assert tool.icons == ICONS
        result = await client.call_tool("media")
        assert result.structured_content == {"n": 1}
        assert isinstance(result.content[0], AudioContent)


def scalar_output(kind: str) -> LowLevelServer:
    """A tool whose hand-written output schema is not an object schema (as 2026-07-28
    allows), on the low-level server or the decorator API."""
    if kind == "server":
        app = Server("scalar")

        @app.tool(output_schema={"type": "string"})
        def word() -> Any:
            return "hi"

        return app
    server = LowLevelServer("scalar")

    async def handler(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[TextContent(text='"hi"')], structured_content="hi")

    tool = Tool(name="word", input_schema={"type": "object"}, output_schema={"type": "string"})
    server.add_tool(tool, handler)
    return server


@pytest.mark.parametrize("kind", ["low-level", "server"])
@pytest.mark.parametrize(
    ("version", "kept"), [("2025-06-18", False), ("2025-11-25", False), ("2026-07-28", True)]
)
async def test_a_non_object_output_schema_is_sent_only_to_2026_07_28(
    kind: str, version: str, kept: bool
) -> None:
    """Before 2026-07-28, ``outputSchema.type`` must be "object" and structuredContent an
    object (schema.json): a strict client refused the whole tools/list otherwise. The text
    rendering in ``content`` still reaches every revision."""
    async with connect_memory(scalar_output(kind), protocol_version=version) as client:
        (tool,) = [t async for t in client.iter_tools()]
        result = await client.call_tool("word")
    assert tool.output_schema == ({"type": "string"} if kept else UNSET)
    assert result.structured_content == ("hi" if kept else UNSET)
    assert result.content == [TextContent(text='"hi"')]


def sampler(content: Any, **extra: Any) -> LowLevelServer:
    server = LowLevelServer("sampler")

    async def sample(ctx: RequestContext, args: dict[str, Any]) -> str:
        message = SamplingMessage(role="user", content=content, meta={"k": 1})
        params = CreateMessageRequestParams(messages=[message], max_tokens=5, **extra)
        result = await create_message(ctx.session, params, timeout=5)
        assert isinstance(result.content, TextContent)
        return result.content.text

    server.add_tool(Tool(name="sample", input_schema={"type": "object"}), sample)
    return server


async def test_sampling_requests_are_adapted_to_the_revision() -> None:
    seen: list[CreateMessageRequestParams] = []

    async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    stamped = Annotations(last_modified="2025-01-01T00:00:00Z", priority=0.5)
    image = ImageContent(data="AAAA", mime_type="image/png", annotations=stamped, meta={"x": 1})
    for version in ("2025-03-26", "2025-06-18", "2025-11-25"):
        server = sampler(image, include_context="thisServer")
        async with connect_memory(
            server, sampling=model, sampling_context=True, protocol_version=version
        ) as client:
            result = await client.call_tool("sample")
            assert result.is_error is not True, result
    old, middle, new = (params.messages[0] for params in seen)
    # A message's _meta arrived in 2025-11-25; a block's _meta and lastModified in
    # 2025-06-18. includeContext is sent to every revision (sampling.context, which
    # guards it from 2025-11-25, did not exist before).
    assert (old.meta, middle.meta, new.meta) == (UNSET, UNSET, {"k": 1})
    assert isinstance(old.content, ImageContent)
    assert isinstance(middle.content, ImageContent)
    assert old.content.meta is UNSET
    assert old.content.annotations is not UNSET
    assert old.content.annotations.last_modified is UNSET
    assert old.content.annotations.priority == 0.5
    assert middle.content.meta == {"x": 1}
    assert [params.include_context for params in seen[:2]] == ["thisServer"] * 2


async def test_sampling_audio_before_2025_03_26_is_refused_before_sending() -> None:
    seen: list[Any] = []

    async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    audio = AudioContent(data="AAAA", mime_type="audio/wav")
    async with connect_memory(
        sampler(audio), sampling=model, protocol_version="2024-11-05"
    ) as client:
        result = await client.call_tool("sample")
    assert result.is_error is True
    assert "2025-03-26" in result.content[0].text  # type: ignore[union-attr]
    assert seen == []


@pytest.mark.parametrize(("version", "icons"), [("2025-06-18", UNSET), ("2025-11-25", ICONS)])
async def test_resource_link_icons_only_from_2025_11_25(version: str, icons: Any) -> None:
    server = Server("links")

    @server.tool()
    def link() -> list[ResourceLink]:
        return [ResourceLink(uri="app://x", name="x", icons=ICONS)]

    async with connect_memory(server, protocol_version=version) as client:
        (block,) = (await client.call_tool("link")).content
    assert isinstance(block, ResourceLink)
    assert block.icons == icons
