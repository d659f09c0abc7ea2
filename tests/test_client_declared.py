"""The client serves the server only what it declared for the session, sub-capabilities
included: a sampling request with ``tools`` or ``toolChoice`` needs ``sampling.tools``
("The client MUST return an error if this field is provided but
ClientCapabilities.sampling.tools is not declared", CreateMessageRequestParams), URL-mode
elicitation needs ``elicitation.url`` (2025-06-18 has no URL mode, whatever the callback
can do), and ``notifications/elicitation/complete`` reaches the callback only where URL
mode was declared. A scripted handshake-era server asks, the callbacks record."""

from __future__ import annotations

import json
from typing import Any, Final

import anyio
import pytest

from mcpkit.aio import memory_channel_pair
from mcpkit.client import Client
from mcpkit.types import CreateMessageResult, ElicitResult, TextContent

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
SAMPLE: Final = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 10,
}


async def ask(
    version: str,
    request: dict[str, Any],
    notification: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[dict[str, Any], list[str]]:
    """Connect a client (``options``) to a scripted server of ``version`` that sends
    ``notification`` and then ``request``; returns the client's answer and the callbacks
    called."""
    called: list[str] = []

    async def sampling(params: Any) -> CreateMessageResult:
        called.append("sampling")
        return CreateMessageResult(role="assistant", content=TextContent(text="ok"), model="m")

    async def elicitation(params: Any) -> ElicitResult:
        called.append("elicitation")
        return ElicitResult(action="cancel")

    def completed(elicitation_id: str) -> None:
        called.append(f"complete {elicitation_id}")

    client_end, server_end = memory_channel_pair()
    answer: dict[str, Any] = {}
    answered = anyio.Event()

    async def serve() -> None:
        init = json.loads(await server_end.receive())
        result = {
            "protocolVersion": version,
            "capabilities": {},
            "serverInfo": {"name": "asker", "version": "1"},
        }
        await server_end.send(
            json.dumps({"jsonrpc": "2.0", "id": init["id"], "result": result}).encode()
        )
        json.loads(await server_end.receive())  # notifications/initialized
        if notification is not None:
            await server_end.send(json.dumps({"jsonrpc": "2.0", **notification}).encode())
        await server_end.send(json.dumps({"jsonrpc": "2.0", "id": "s1", **request}).encode())
        answer.update(json.loads(await server_end.receive()))
        answered.set()

    with anyio.fail_after(LIMIT):
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                callbacks: dict[str, Any] = {
                    "sampling": sampling,
                    "elicitation": elicitation,
                    "on_elicitation_complete": completed,
                }
                async with Client(
                    client_end,
                    era="handshake",
                    protocol_version=version,
                    **{**callbacks, **options},
                ):
                    await answered.wait()
        finally:
            await server_end.aclose()
            await client_end.aclose()
    return answer, called


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("extra", "sampling_tools", "refused"),
    [
        ({}, False, False),
        ({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}, False, True),
        ({"toolChoice": {"mode": "auto"}}, False, True),
        ({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}, True, False),
    ],
)
async def test_sampling_with_tools_needs_sampling_tools(
    extra: dict[str, Any], sampling_tools: bool, refused: bool
) -> None:
    request = {"method": "sampling/createMessage", "params": {**SAMPLE, **extra}}
    answer, called = await ask("2025-11-25", request, sampling_tools=sampling_tools)
    if refused:
        assert answer["error"]["code"] == -32602, answer
        assert called == []
    else:
        assert answer["result"]["model"] == "m", answer
        assert called == ["sampling"]


@pytest.mark.parametrize(("version", "served"), [("2025-06-18", False), ("2025-11-25", True)])
async def test_url_elicitation_needs_a_revision_that_has_it(version: str, served: bool) -> None:
    """The callback can do URL mode (elicitation_url=True), but 2025-06-18 has none: the
    client declared only form mode there, so it refuses both the request and the
    completion notification."""
    request = {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e1"},
    }
    notification = {
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "e0"},
    }
    answer, called = await ask(version, request, notification, elicitation_url=True)
    if served:
        assert answer["result"] == {"action": "cancel"}, answer
        assert called == ["complete e0", "elicitation"]
    else:
        assert answer["error"]["code"] == -32602, answer
        assert called == []


# -- notification callbacks run off the receive loop, in order ---------------------------


async def test_a_notification_callback_may_call_the_client() -> None:
    """on_list_changed refreshing the list (the natural use): the answer is read while
    the callback waits for it (the connection locked up: with timeout=None for ever),
    and the logs a tool sent reach on_log before its call returns, in order."""
    from mcpkit.server import RequestContext, Server
    from mcpkit.testing import connect_memory

    server = Server("changing", "1.0")

    @server.tool()
    async def change(ctx: RequestContext) -> str:
        """Logs, announces a change, logs again."""
        await ctx.log("info", "one")
        server.notify_list_changed("tools")
        await ctx.log("info", "two")
        return "changed"

    seen: list[str] = []
    holder: list[Client] = []
    done = anyio.Event()

    async def refreshed(kind: str) -> None:
        tools = await holder[0].list_tools()
        seen.append(f"{kind}: {len(tools.tools)}")
        done.set()

    def logged(record: Any) -> None:
        seen.append(str(record.data))

    with anyio.fail_after(LIMIT):
        async with connect_memory(
            server, era="handshake", timeout=None, on_list_changed=refreshed, on_log=logged
        ) as client:
            holder.append(client)
            await client.set_logging_level("info")
            result = await client.call_tool("change", {})
            assert [s for s in seen if s in ("one", "two")] == ["one", "two"]
            assert result.content[0].text == "changed"  # type: ignore[union-attr]
            await done.wait()  # the change is announced in the background
            assert "tools: 1" in seen


async def returns(value: Any) -> Any:
    return value


@pytest.mark.parametrize(
    ("request_", "options", "ok"),
    [
        # A dict with the result's members is a result (converted, then checked).
        (
            {"method": "sampling/createMessage", "params": SAMPLE},
            {
                "sampling": lambda p: returns(
                    {"role": "assistant", "model": "m", "content": {"type": "text", "text": "x"}}
                )
            },
            True,
        ),
        (
            {"method": "sampling/createMessage", "params": SAMPLE},
            {"sampling": lambda p: returns({"nope": 1})},
            False,
        ),
        (
            {
                "method": "elicitation/create",
                "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}},
            },
            {"elicitation": lambda p: returns({"action": "maybe"})},
            False,
        ),
        ({"method": "roots/list"}, {"roots": lambda: "file:///a"}, False),
        ({"method": "roots/list"}, {"roots": lambda: None}, False),
    ],
    ids=["sampling-dict", "sampling-bad-dict", "elicit-bad-action", "roots-str", "roots-none"],
)
async def test_what_a_callback_returns_is_checked(
    request_: dict[str, Any], options: dict[str, Any], ok: bool
) -> None:
    """Sent as they were, these broke the schema the server reads: now -32603, and the
    server is told which callback failed."""
    answer, _ = await ask("2025-11-25", request_, **options)
    if ok:
        assert answer["result"]["model"] == "m", answer
    else:
        assert answer["error"]["code"] == -32603, answer
        assert "callback returned an invalid result" in answer["error"]["message"]
