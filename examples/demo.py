"""`make demo`: start examples/echo.py over stdio and use it with the mcpkit client.

Prints what happens in a readable form: the handshake, the tool list, each call and its
result, progress as it arrives, a timeout that cancels a call, and a tool error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import RequestTimeoutError
from mcpkit.types import ProgressNotificationParams, TextContent

ECHO = Path(__file__).resolve().parent / "echo.py"


def show(label: str, text: str) -> None:
    print(f"  {label:<10} {text}")


def first_text(content: list[object]) -> str:
    block = content[0] if content else None
    return block.text if isinstance(block, TextContent) else repr(block)


async def main() -> None:
    command = [sys.executable, "-m", "mcpkit", "run", str(ECHO)]
    print("$ mcpkit run examples/echo.py   (over stdio, as a subprocess)")
    started = time.perf_counter()
    async with Client(StdioTransport(command)) as client:
        elapsed = (time.perf_counter() - started) * 1000
        info = client.server_info
        print(f"\nConnected to {info.name} {info.version} in {elapsed:.0f} ms")
        show("protocol", client.protocol_version)
        show("says", client.instructions or "")

        print("\nTools:")
        async for tool in client.iter_tools():
            show(tool.name, tool.description if isinstance(tool.description, str) else "")

        print("\nCalls:")
        result = await client.call_tool("echo", {"text": "Hello, MCP! ✓"})
        show("echo", repr(first_text(list(result.content))))

        result = await client.call_tool("blob", {"size": 100_000})
        show("blob", f"{len(first_text(list(result.content))):,} characters")

        def on_progress(p: ProgressNotificationParams) -> None:
            total = p.total if isinstance(p.total, float | int) else 0
            bar = "#" * round(20 * p.progress / total) if total else ""
            print(f"  {'progress':<10} [{bar:<20}] {p.progress:.1f}/{total:g} s", flush=True)

        result = await client.call_tool("sleep", {"seconds": 1}, on_progress=on_progress)
        show("sleep", first_text(list(result.content)))

        try:
            await client.call_tool("sleep", {"seconds": 10}, timeout=0.3)
        except RequestTimeoutError as exc:
            show("timeout", f"{exc} (the call was cancelled on the wire)")

        result = await client.call_tool("blob", {"size": -1})
        show("tool error", f"isError={result.is_error}: {first_text(list(result.content))}")

        started = time.perf_counter()
        for _ in range(200):
            await client.call_tool("echo", {"text": "x"})
        per_call = (time.perf_counter() - started) / 200 * 1e6
        show("200 calls", f"{per_call:.0f} µs per round trip")
    print("\nClosed: the server was shut down and reaped.")


if __name__ == "__main__":
    anyio.run(main)
