"""Server-to-client requests (sampling, elicitation, roots, ping) and the client's
callbacks and capabilities, in memory on asyncio and trio."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from mcpkit.exceptions import CapabilityError, RPCError
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.server._peer import create_message, elicit, list_roots, ping
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
)

pytestmark = pytest.mark.anyio


def peer_server() -> LowLevelServer:
    server = LowLevelServer("peer")

    async def sample(ctx: RequestContext, args: dict[str, Any]) -> str:
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=args["prompt"]))],
            max_tokens=50,
            tool_choice=ToolChoice(mode="auto") if args.get("tools") else UNSET,
        )
        result = await create_message(ctx.session, params, timeout=5)
        content = result.content
        assert isinstance(content, TextContent)
        return f"{result.model}: {content.text}"

    async def ask(ctx: RequestContext, args: dict[str, Any]) -> str:
        params = ElicitRequestParams(
            message="Who are you?",
            requested_schema={"type": "object", "properties": {"name": {"type": "string"}}},
        )
        if args.get("url"):
            params = ElicitRequestParams(
                mode="url", message="Log in", url="https://example.com/login", elicitation_id="e1"
            )
        result = await elicit(ctx.session, params, timeout=5)
        return f"{result.action}:{result.content if result.content is not UNSET else ''}"

    async def roots(ctx: RequestContext, args: dict[str, Any]) -> str:
        return ",".join(root.uri for root in (await list_roots(ctx.session, timeout=5)).roots)

    async def pinger(ctx: RequestContext, args: dict[str, Any]) -> str:
        await ping(ctx.session)
        return "pong"

    for name, fn in [("sample", sample), ("ask", ask), ("roots", roots), ("ping", pinger)]:
        server.add_tool(Tool(name=name, input_schema={"type": "object"}), fn)
    return server


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    message = params.messages[0].content
    assert isinstance(message, TextContent)
    return CreateMessageResult(
        role="assistant", content=TextContent(text=message.text.upper()), model="m1"
    )


async def answer(params: ElicitRequestParams) -> ElicitResult:
    if params.mode == "url":
        return ElicitResult(action="accept")
    return ElicitResult(action="accept", content={"name": "Ada"})


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_capabilities_follow_the_callbacks() -> None:
    async with connect_memory(
        peer_server(),
        sampling=model,
        sampling_tools=True,
        elicitation=answer,
        elicitation_url=True,
        roots=[Root(uri="file:///a")],
    ) as client:
        caps = client.capabilities
        assert caps.sampling == {"tools": {}}
        assert caps.elicitation == {"form": {}, "url": {}}
        assert caps.roots is not UNSET


async def test_sampling_elicitation_roots_and_ping_round_trip() -> None:
    async with connect_memory(
        peer_server(),
        era="handshake",
        sampling=model,
        sampling_tools=True,
        elicitation=answer,
        elicitation_url=True,
        roots=lambda: [Root(uri="file:///a"), Root(uri="file:///b")],
    ) as client:
        assert text(await client.call_tool("sample", {"prompt": "hi"})) == "m1: HI"
        assert text(await client.call_tool("sample", {"prompt": "t", "tools": True})) == "m1: T"
        assert text(await client.call_tool("ask")) == "accept:{'name': 'Ada'}"
        assert text(await client.call_tool("ask", {"url": True})) == "accept:"
        assert text(await client.call_tool("roots")) == "file:///a,file:///b"
        assert text(await client.call_tool("ping")) == "pong"


@pytest.mark.parametrize(
    ("tool", "arguments", "client_options", "problem"),
    [
        ("sample", {"prompt": "x"}, {}, "sampling"),
        ("sample", {"prompt": "x", "tools": True}, {"sampling": model}, "sampling.tools"),
        ("ask", {}, {}, "elicitation"),
        ("ask", {"url": True}, {"elicitation": answer}, "elicitation.url"),
        ("roots", {}, {}, "roots"),
    ],
)
async def test_undeclared_capabilities_are_refused_before_sending(
    tool: str, arguments: dict[str, Any], client_options: dict[str, Any], problem: str
) -> None:
    async with connect_memory(peer_server(), era="handshake", **client_options) as client:
        result = await client.call_tool(tool, arguments)
        # The CapabilityError raised in the tool is reported as a tool error.
        assert result.is_error is True
        assert problem in text(result)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_elicitation_needs_2025_06_18(version: str) -> None:
    async with connect_memory(
        peer_server(), elicitation=answer, protocol_version=version
    ) as client:
        result = await client.call_tool("ask")
        assert result.is_error is True
        assert "2025-06-18" in text(result)


async def test_sampling_tools_need_2025_11_25() -> None:
    async with connect_memory(
        peer_server(), sampling=model, sampling_tools=True, protocol_version="2025-06-18"
    ) as client:
        result = await client.call_tool("sample", {"prompt": "x", "tools": True})
        assert "2025-11-25" in text(result)


async def test_callback_errors_reach_the_server_as_rpc_errors() -> None:
    async def refuse(params: CreateMessageRequestParams) -> CreateMessageResult:
        raise RPCError(-1, "User rejected sampling request")

    async with connect_memory(peer_server(), era="handshake", sampling=refuse) as client:
        result = await client.call_tool("sample", {"prompt": "x"})
        assert result.is_error is True
        assert "User rejected" in text(result)


async def test_set_roots_notifies_and_requires_the_capability() -> None:
    async with connect_memory(
        peer_server(), era="handshake", roots=[Root(uri="file:///a")]
    ) as client:
        await client.set_roots([Root(uri="file:///z")])
        assert text(await client.call_tool("roots")) == "file:///z"
    async with connect_memory(peer_server(), era="handshake") as client:
        with pytest.raises(Exception, match="roots"):
            await client.set_roots([])


def test_capability_error_is_an_mcp_error() -> None:
    assert issubclass(CapabilityError, Exception)
