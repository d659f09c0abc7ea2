"""An accepted form's content is checked against the form on both sides
(client/elicitation.mdx 2025-06-18 on, "Security Considerations": "Clients SHOULD validate
all responses against the provided schema"; "Servers SHOULD validate received data
matches the requested schema"): the server, for a raw ``requestedSchema`` as for a typed
form, whatever the client sent; the client, before it sends its callback's answer, in
both eras."""

from __future__ import annotations

from typing import Any, Final

import anyio
import msgspec
import pytest

from mcpkit.exceptions import RPCError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import CallToolResult, ElicitRequestParams, ElicitResult, TextContent

from ._wire import wire_to

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
RAW: Final = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


class Person(msgspec.Struct):
    name: str
    age: int = 0


def build() -> Server:
    server = Server("forms", "1.0")

    @server.tool()
    async def raw(ctx: RequestContext) -> str:
        """A raw requestedSchema."""
        answer = await ctx.elicit("Who?", RAW)
        return f"{answer.action} {answer.data}"

    @server.tool()
    async def typed(ctx: RequestContext) -> str:
        """A typed form."""
        answer = await ctx.elicit("Who?", Person)
        return f"{answer.action} {answer.data}"

    return server


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


INIT: Final = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {"form": {}}},
    "clientInfo": {"name": "raw", "version": "1"},
}


@pytest.mark.parametrize(
    ("tool", "content", "outcome"),
    [
        ("raw", {"name": "Ada", "age": 36}, "accept {'name': 'Ada', 'age': 36}"),
        ("raw", {"name": 5}, "'name' must be a string, got an integer"),
        ("raw", {"age": 3}, "missing required property 'name'"),
        ("raw", {"name": "Ada", "age": -1}, "'age' must be >= 0, got -1"),
        ("typed", {"name": "Ada"}, "accept Person(name='Ada', age=0)"),
        ("typed", {"name": 5}, "Expected `str`, got `int`"),
    ],
)
async def test_the_server_checks_what_the_client_sent(
    tool: str, content: dict[str, Any], outcome: str
) -> None:
    # A raw peer, which checks nothing before answering.
    with anyio.fail_after(LIMIT):
        async with wire_to(build()) as wire:
            await wire.call(0, "initialize", INIT)
            await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await wire.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": {}},
                }
            )
            asked = await wire.read()
            assert asked["method"] == "elicitation/create"
            answer = {"action": "accept", "content": content}
            await wire.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
            reply = await wire.read()
    assert reply["id"] == 1
    result = reply["result"]
    [block] = result["content"]
    if outcome.startswith("accept"):
        assert "isError" not in result
        assert block["text"] == outcome
    else:
        assert result["isError"] is True
        assert "elicitation answer does not match the requested form" in block["text"]
        assert outcome in block["text"]


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
@pytest.mark.parametrize(
    ("content", "valid"),
    [
        ({"name": "Ada"}, True),
        ({"name": "Ada", "age": 36}, True),
        ({"name": ["Ada"]}, False),
        ({"age": 36}, False),
        ({"name": "Ada", "age": 1.5}, False),
    ],
)
async def test_the_client_checks_its_callbacks_answer(
    era: str, content: dict[str, Any], valid: bool, caplog: pytest.LogCaptureFixture
) -> None:
    asked: list[ElicitRequestParams] = []

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content=content)

    with anyio.fail_after(LIMIT):
        async with connect_memory(build(), elicitation=fill, era=era) as client:
            if valid:
                result = await client.call_tool("raw", {})
                assert not result.is_error
                assert text(result) == f"accept {content}"
            elif era == "handshake":
                # Answered with an error instead: the server's request fails, so the tool.
                result = await client.call_tool("raw", {})
                assert result.is_error
                assert "the client's answer does not match the requested schema" in text(result)
            else:
                # 2026-07-28: the client answers by retrying the call; it fails here instead.
                with pytest.raises(RPCError, match="answer does not match the requested schema"):
                    await client.call_tool("raw", {})
    assert asked[0].requested_schema == RAW
    logged = "the elicitation callback's answer does not match the requested schema"
    assert (logged in caplog.text) is not valid
