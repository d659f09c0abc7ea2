"""Helpers for tests that register tools on a fresh server and look at them through an
in-memory client: the tools as listed, one call's result, a result's text."""

from __future__ import annotations

from typing import Any

from mcpkit.server import Server
from mcpkit.testing import connect_memory
from mcpkit.types import CallToolResult, TextContent, Tool


async def listed_tools(server: Server) -> dict[str, Tool]:
    """The server's tools by name, as a client lists them."""
    async with connect_memory(server) as c:
        return {t.name: t async for t in c.iter_tools()}


async def call_once(server: Server, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """One ``tools/call`` from a client of its own."""
    async with connect_memory(server) as c:
        return await c.call_tool(name, arguments)


def text(result: CallToolResult) -> str:
    """The text of the result's first content block (which must be text)."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text
