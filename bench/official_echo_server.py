"""The ``echo`` tool served by the official MCP Python SDK's low-level server, over stdio.

The counterpart of ``examples/echo.py``'s ``echo`` tool for the side-by-side benchmarks:
same tool name, description, input schema and annotations, same behaviour (one text block
equal to ``text``; a tool execution error when ``text`` is not a string). It uses the SDK
the way its own documentation does: ``mcp.server.lowlevel.Server`` with ``on_list_tools``
and ``on_call_tool`` handlers, served with ``mcp.server.stdio.stdio_server`` under
``anyio.run`` (asyncio backend, as mcpkit's default).

Run: ``python bench/official_echo_server.py`` (never imported by mcpkit itself).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO_TOOL = types.Tool(
    name="echo",
    description="Return the given text unchanged.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo back."}},
        "required": ["text"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO_TOOL])


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name != "echo":
        return types.CallToolResult(
            content=[types.TextContent(text=f"Unknown tool: {params.name!r}")], is_error=True
        )
    text = (params.arguments or {}).get("text")
    if not isinstance(text, str):
        return types.CallToolResult(
            content=[types.TextContent(text="`text` must be a string")], is_error=True
        )
    return types.CallToolResult(content=[types.TextContent(text=text)])


server: Server[Any] = Server(
    "echo",
    version="1.0.0",
    instructions="Echo text back.",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
