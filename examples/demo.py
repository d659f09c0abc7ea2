"""`make demo`: a client using a server's tools, resources and prompts, over stdio.

Starts examples/everything.py as a subprocess (`mcpkit run`), connects the mcpkit client
with callbacks for sampling, elicitation and log messages, and prints what happens:
the handshake, what the server offers, tool calls (with progress as it arrives and a
timeout that cancels a call), resources (text, binary, a template, updates: a
subscriptions/listen stream on 2026-07-28, resources/subscribe on older revisions),
prompts with arguments, completion, and the server asking the client's "model" and
"user" for input.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import RequestTimeoutError
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    TextContent,
)

EVERYTHING = Path(__file__).resolve().parent / "everything.py"


def show(label: str, text: str) -> None:
    print(f"  {label:<12} {text}")


def first_text(content: list[Any]) -> str:
    block = content[0] if content else None
    return block.text if isinstance(block, TextContent) else type(block).__name__


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    """The client's stand-in for an LLM: answers sampling requests from the server."""
    asked = params.messages[-1].content
    question = asked.text if isinstance(asked, TextContent) else "?"
    show("  (sampling)", f"the server asks the model: {question!r}")
    return CreateMessageResult(
        role="assistant", content=TextContent(text="Paris, of course."), model="demo-model"
    )


async def user(params: ElicitRequestParams) -> ElicitResult:
    """The client's stand-in for a person: answers elicitation (form) requests."""
    show("  (elicit)", f"the server asks the user: {params.message!r}")
    return ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def log(record: LoggingMessageNotificationParams) -> None:
    show("  (log)", f"{record.level}: {record.data}")


async def main() -> None:
    print("$ mcpkit run examples/everything.py   (over stdio, as a subprocess)")
    started = time.perf_counter()
    updates: list[str] = []
    async with Client(
        StdioTransport([sys.executable, "-m", "mcpkit", "run", str(EVERYTHING)]),
        sampling=model,
        elicitation=user,
        on_log=log,
        on_resource_updated=updates.append,
    ) as client:
        info = client.server_info
        elapsed = (time.perf_counter() - started) * 1000
        print(f"\nConnected to {info.name} {info.version} in {elapsed:.0f} ms")
        show("protocol", client.protocol_version)
        tools = [tool async for tool in client.iter_tools()]
        resources = [r async for r in client.iter_resources()]
        templates = [t async for t in client.iter_resource_templates()]
        prompts = [p async for p in client.iter_prompts()]
        show(
            "offers",
            f"{len(tools)} tools, {len(resources)} resources, "
            f"{len(templates)} template, {len(prompts)} prompts",
        )

        print("\nTools:")
        result = await client.call_tool("echo", {"text": "Hello, MCP! ✓"})
        show("echo", repr(first_text(result.content)))
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
        show("add_numbers", first_text(result.content))

        def on_progress(p: ProgressNotificationParams) -> None:
            total = p.total if isinstance(p.total, (int, float)) else 0
            bar = "#" * round(20 * p.progress / total) if total else ""
            print(f"  {'progress':<12} [{bar:<20}] {p.progress:g}/{total:g}", flush=True)

        result = await client.call_tool("sleep", {"seconds": 0.6}, on_progress=on_progress)
        show("sleep", first_text(result.content))
        try:
            await client.call_tool("sleep", {"seconds": 10}, timeout=0.3)
        except RequestTimeoutError as exc:
            show("timeout", f"{exc} (cancelled on the wire)")
        result = await client.call_tool("test_error_handling")
        show("tool error", f"isError={result.is_error}: {first_text(result.content)}")
        result = await client.call_tool("test_tool_with_logging")
        show("logging", first_text(result.content))
        result = await client.call_tool("test_sampling", {"prompt": "The capital of France?"})
        show("sampling", first_text(result.content))
        result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        show("elicitation", first_text(result.content))
        bad = await client.call_tool("add_numbers", {"a": "five", "b": 3})
        show("bad args", f"isError={bad.is_error}: {first_text(bad.content)}")

        print("\nResources:")
        text = await client.read_resource("test://static-text")
        show("text", repr(text.contents[0].text))
        blob = await client.read_resource("test://static-binary")
        part = blob.contents[0]
        show(
            "binary",
            f"{part.mime_type}, {len(part.blob) if isinstance(part.blob, str) else 0} base64 chars",
        )
        templated = await client.read_resource("test://template/123/data")
        show("template", f"test://template/123/data -> {templated.contents[0].text}")
        watched = "test://watched-resource"
        if client.protocol_version == "2026-07-28":
            # Stateless MCP has no resources/subscribe: a subscriptions/listen stream
            # carries the updates of the resources it names.
            async with client.listen(resource_uris=[watched]) as stream:
                await client.call_tool("test_watched_resource_update")
                with anyio.fail_after(10):
                    note = await stream.__anext__()
            show("listening", f"{note.method} for {note.params.get('uri')}")
        else:
            await client.subscribe_resource(watched)
            await client.call_tool("test_watched_resource_update")
            await client.ping()
            show("subscribed", f"update notifications received: {updates}")

        print("\nPrompts:")
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "sun", "arg2": "moon"}
        )
        show("with args", first_text([m.content for m in prompt.messages]))
        values = await client.complete_prompt_argument("test_prompt_with_arguments", "arg1", "")
        show("completion", f"values for arg1: {values[:5]}")

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(200):
                tg.start_soon(client.call_tool, "echo", {"text": "x"})
        per_call = (time.perf_counter() - started) / 200 * 1e6
        print(f"\n200 concurrent echo calls: {per_call:.0f} µs each on average")
        print("(the client keeps at most 64 in flight; the rest wait their turn)")
    print("Closed: the server was shut down and reaped.")


if __name__ == "__main__":
    anyio.run(main)
