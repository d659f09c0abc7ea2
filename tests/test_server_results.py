"""What a tool's or a completion handler's return value becomes on the wire.

A declared ``outputSchema`` is a promise (server/tools.mdx 2025-06-18, "Output Schema":
"Servers MUST provide structured results that conform to this schema"): a hand-given
schema is checked like a derived one, and a result without structured content under a
declared schema is the tool's failure, not a result mcpkit's own client then rejects.
An empty list of content blocks is no content (not the JSON text ``[]``). A completion
handler's single string is one value (not one per character), and completion for a
prompt or template the server does not have is -32602 (completion.mdx, "Error
Handling")."""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

import anyio
import pytest
from msgspec import UNSET
from pydantic import BaseModel

from mcpkit.exceptions import RPCError
from mcpkit.server import Server
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CallToolResult,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
)

pytestmark = pytest.mark.anyio

LIMIT = 10.0
HAND = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def build() -> Server:
    server = Server("results", "1.0")

    @server.tool(output_schema=HAND)
    def hand(n: Any) -> Any:
        """Returns {"n": n}, whatever n is."""
        return {"n": n}

    @server.tool(output_schema=HAND)
    def hand_content() -> Any:
        """Declares a schema, returns a text block."""
        return TextContent(text="no data")

    @server.tool(output_schema=HAND)
    def hand_result(structured: bool) -> CallToolResult:
        """Declares a schema, returns a CallToolResult with or without structured content."""
        return CallToolResult(
            content=[TextContent(text="x")],
            structured_content={"n": 1} if structured else UNSET,
        )

    @server.tool(output_schema=HAND)
    def hand_failure() -> CallToolResult:
        """A tool error needs no structured content."""
        return CallToolResult(content=[TextContent(text="failed")], is_error=True)

    @server.tool()
    def blocks_as_data() -> list[Any]:
        """Content blocks under a data annotation: both content and structured content."""
        return [TextContent(text="t")]

    @server.tool()
    def images(count: int) -> list[ImageContent]:
        """Some images, maybe none."""
        return [ImageContent(data="AAAA", mime_type="image/png")] * count

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return id

    @server.completion()
    def complete(ref: Any, argument: str, value: str, context: dict[str, str]) -> Any:
        return "paris" if argument == "name" else ["1", "2"]

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize(
    ("tool", "arguments", "ok"),
    [
        ("hand", {"n": 7}, True),
        ("hand", {"n": "seven"}, False),
        ("hand_content", {}, False),
        ("hand_result", {"structured": True}, True),
        ("hand_result", {"structured": False}, False),
    ],
)
async def test_a_declared_output_schema_is_kept(
    tool: str, arguments: dict[str, Any], ok: bool
) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            result = await client.call_tool(tool, arguments)
    if ok:
        assert not result.is_error
        assert result.structured_content == {"n": 1 if tool == "hand_result" else 7}
    else:
        assert result.is_error
        assert text_of(result) == f"Tool {tool!r} returned an invalid result"
        assert result.structured_content is UNSET


async def test_a_tool_error_needs_no_structured_content() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            result = await client.call_tool("hand_failure", {})
    assert result.is_error
    assert text_of(result) == "failed"


async def test_blocks_under_a_data_annotation_are_content_and_data() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            result = await client.call_tool("blocks_as_data", {})
    assert not result.is_error
    assert text_of(result) == "t"
    assert result.structured_content == {"result": [{"type": "text", "text": "t"}]}


@pytest.mark.parametrize("count", [0, 2])
async def test_a_list_of_content_blocks_may_be_empty(count: int) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            result = await client.call_tool("images", {"count": count})
    assert not result.is_error
    assert len(result.content) == count
    assert all(isinstance(block, ImageContent) for block in result.content)


async def test_completion_values_and_unknown_references() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            one = await client.complete(PromptReference(name="greet"), "name", "pa")
            assert one.completion.values == ["paris"]
            many = await client.complete(ResourceTemplateReference(uri="notes://{id}"), "id", "")
            assert many.completion.values == ["1", "2"]
            refs: list[tuple[PromptReference | ResourceTemplateReference, str]] = [
                (PromptReference(name="nope"), "name"),
                (PromptReference(name="greet"), "nope"),
                (ResourceTemplateReference(uri="notes://{other}"), "other"),
                (ResourceTemplateReference(uri="notes://{id}"), "nope"),
            ]
            for ref, argument in refs:
                with pytest.raises(RPCError) as refused:
                    await client.complete(ref, argument, "")
                assert refused.value.code == -32602, (ref, argument)


@dataclasses.dataclass
class Point:
    x: int


def build_typed() -> Server:
    server = Server("typed", "1.0")

    @server.tool()
    def repeat(text: str, times: int, scale: float = 1.0) -> str:
        """Repeat a text."""
        return f"{text * times} {scale!r}"

    @server.tool()
    def tags(ids: set[int]) -> list[int]:
        """Sorted distinct ids."""
        return sorted(ids)

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"p": {"type": "object"}, "n": {"type": "integer"}},
            "required": ["p"],
        }
    )
    def hand(p: Point, n: int = 0) -> str:
        """A typed function with a hand-given schema that allows more."""
        return f"{type(p).__name__} {p.x} {n}"

    return server


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        # JSON Schema's integer: any number with a zero fraction.
        ("repeat", {"text": "ab", "times": 3.0}, "ababab 1.0"),
        ("repeat", {"text": "ab", "times": 2, "scale": 2}, "abab 2.0"),
        ("repeat", {"text": "ab", "times": 2.5}, None),
        ("repeat", {"text": 3.0, "times": 1}, None),
        # uniqueItems: repeats are refused, not merged.
        ("tags", {"ids": [3, 1]}, '{"result":[1,3]}'),
        ("tags", {"ids": [1, 1, 2]}, None),
        # A hand-given schema, a typed function: converted, extra members left out.
        ("hand", {"p": {"x": 1}, "extra": True}, "Point 1 0"),
        ("hand", {"p": {"x": 1}, "n": 4.0}, "Point 1 4"),
    ],
)
async def test_arguments_as_the_schema_describes_them(
    tool: str, arguments: dict[str, Any], expected: str | None
) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build_typed()) as client:
            result = await client.call_tool(tool, arguments)
    if expected is None:
        assert result.is_error
        assert text_of(result).startswith("Invalid arguments"), text_of(result)
    else:
        assert not result.is_error, text_of(result)
        assert text_of(result) == expected


def build_paged() -> Server:
    server = Server("paged", "1.0", page_size=2)

    def tool() -> str:
        """A tool."""
        return "x"

    def render() -> str:
        """A prompt."""
        return "p"

    for n in range(5):
        server.tool(name=f"tool{n}")(tool)
    for n in range(3):
        server.prompt(name=f"prompt{n}")(render)
    return server


def forged(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


async def test_pages_and_the_cursors_a_server_never_issued() -> None:
    """pagination.mdx: an invalid cursor SHOULD be -32602; every cursor the server did not
    hand out is one (offsets off the page boundaries skipped or repeated items)."""
    with anyio.fail_after(LIMIT):
        async with connect_memory(build_paged(), era="handshake") as client:
            names = [tool.name async for tool in client.iter_tools()]
            assert names == [f"tool{n}" for n in range(5)]
            first = await client.list_tools()
            assert isinstance(first.next_cursor, str)
            second = await client.list_tools(first.next_cursor)
            assert [t.name for t in second.tools] == ["tool2", "tool3"]
            prompts = await client.list_prompts()
            bad = [
                forged("2"),  # the form of another version
                forged("tools/list#1"),  # not a page boundary
                forged("tools/list#6"),  # past the end
                forged("tools/list#0"),  # the first page has no cursor
                forged("tools/list#02"),  # not the form issued
                forged("tools/list# 2"),
                forged("prompts/list#2"),  # another list's
                "not base64!",
                first.next_cursor + "=",
            ]
            for cursor in bad:
                with pytest.raises(RPCError) as refused:
                    await client.list_tools(cursor)
                assert refused.value.code == -32602, cursor
            with pytest.raises(RPCError) as refused:
                await client.list_prompts(first.next_cursor)
            assert refused.value.code == -32602
            assert prompts.next_cursor is not UNSET


# -- NaN and infinity: JSON has neither, and msgspec (like pydantic's JSON mode) writes them
# as null, a value the function never returned. Each is the tool's failure, naming where.

NAN = float("nan")
INF = float("inf")


class Reading(BaseModel):
    value: float
    error: float | None = None


def build_non_finite() -> Server:
    server = Server("non-finite", "1.0")

    @server.tool()
    def nullable() -> dict[str, float | None]:
        """A nullable annotation: null would pass it."""
        return {"a": 1.0, "b": NAN}

    @server.tool()
    def number() -> float:
        """A wrapped number."""
        return -INF

    @server.tool()
    def nested() -> list[Any]:
        """Deep inside a list."""
        return [1, [2, NAN]]

    @server.tool(output_schema={"type": "object"})
    def hand():  # type: ignore[no-untyped-def]
        """A hand-given schema and no annotation: the value as it is."""
        return {"v": INF}

    @server.tool()
    def unstructured():  # type: ignore[no-untyped-def]
        """No output schema: the value becomes JSON text."""
        return {"v": NAN}

    @server.tool()
    def model() -> Reading:
        """A pydantic model (its JSON mode writes NaN as null too)."""
        return Reading(value=1.0, error=NAN)

    @server.tool()
    def finite() -> dict[str, float | None]:
        """A real null and ordinary floats pass."""
        return {"a": 1.5, "b": None}

    return server


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ("nullable", "the result.b"),
        ("number", "the result"),
        ("nested", "the result[1][1]"),
        ("hand", "the result.v"),
        ("unstructured", "the result.v"),
        ("model", "the result.error"),
    ],
)
async def test_nan_and_infinity_are_the_tools_failure(
    tool: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build_non_finite()) as client:
            result = await client.call_tool(tool, {})
            finite = await client.call_tool("finite", {})
    assert result.is_error
    assert result.structured_content is UNSET
    assert text_of(result) == f"Tool {tool!r} returned an invalid result"
    assert f"{where} is not a finite number" in caplog.text
    assert not finite.is_error
    assert finite.structured_content == {"a": 1.5, "b": None}
