"""The echo server: the first mcpkit example, grown into the everything-server later.

Tools:
    echo  {text: string}    -> one text block equal to ``text``
    blob  {size: integer}   -> one text block of exactly ``size`` characters
    sleep {seconds: number} -> waits, reporting progress every 0.1 s when asked, then text

Run it with ``mcpkit run examples/echo.py`` (stdio).
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpkit import ToolError
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.types import Tool, ToolAnnotations

server = LowLevelServer(
    "echo", "1.0.0", instructions="Echo text back, make blobs of text, or sleep a while."
)

MAX_BLOB = 16 * 1024 * 1024
MAX_SLEEP = 3600.0


async def echo(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    text = arguments.get("text")
    if not isinstance(text, str):
        raise ToolError("`text` must be a string")
    return text


async def blob(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    size = arguments.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_BLOB:
        raise ToolError(f"`size` must be an integer between 0 and {MAX_BLOB}")
    return "x" * size


async def sleep(ctx: RequestContext, arguments: dict[str, Any]) -> str:
    seconds = arguments.get("seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        raise ToolError("`seconds` must be a number")
    if not 0 <= seconds <= MAX_SLEEP:
        raise ToolError(f"`seconds` must be between 0 and {MAX_SLEEP:g}")
    deadline = anyio.current_time() + seconds
    elapsed = 0.0
    while (remaining := deadline - anyio.current_time()) > 0:
        await anyio.sleep(min(0.1, remaining))
        elapsed = min(seconds, seconds - max(0.0, deadline - anyio.current_time()))
        if ctx.progress_token is not None and remaining > 0.1:
            await ctx.report_progress(round(elapsed, 3), total=seconds, message="sleeping")
    return f"slept {seconds:g} s"


server.add_tool(
    Tool(
        name="echo",
        description="Return the given text unchanged.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo back."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    echo,
)
server.add_tool(
    Tool(
        name="blob",
        description="Return a text block of exactly `size` characters.",
        input_schema={
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 0, "maximum": MAX_BLOB},
            },
            "required": ["size"],
            "additionalProperties": False,
        },
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    ),
    blob,
)
server.add_tool(
    Tool(
        name="sleep",
        description="Wait `seconds`, reporting progress every 0.1 s, then return.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": MAX_SLEEP}},
            "required": ["seconds"],
            "additionalProperties": False,
        },
        annotations=ToolAnnotations(read_only_hint=True),
    ),
    sleep,
)
