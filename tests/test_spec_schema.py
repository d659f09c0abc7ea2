"""Conformance to the official schema data (copied into tests/fixtures/spec, see NOTICE).

1. Every official 2026-07-28 example of a type mcpkit implements decodes into our struct
   and re-encodes to an equal document.
2. Every message mcpkit emits in a session validates against schema.json of the revision
   negotiated for that session, for each of the four handshake-era revisions.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import msgspec
import pytest
from jsonschema.validators import validator_for

from mcpkit.aio import MemoryChannel, memory_channel_pair
from mcpkit.client import Client
from mcpkit.exceptions import RPCError
from mcpkit.protocol import DecodedResponse, NotificationReceived, RequestReceived, decode_message
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.types import (
    CallToolRequestParams,
    CallToolResult,
    CancelledNotificationParams,
    ClientCapabilities,
    ContentBlock,
    ErrorObject,
    ImageContent,
    ListToolsRequestParams,
    ListToolsResult,
    LoggingMessageNotificationParams,
    PaginatedRequestParams,
    ProgressNotificationParams,
    ResourceContents,
    ServerCapabilities,
    TextContent,
    Tool,
    ToolAnnotations,
)

SPEC = Path(__file__).parent / "fixtures" / "spec"
EXAMPLES = SPEC / "2026-07-28" / "examples"

# Example folder (schema definition) -> our type for the whole document.
FRAGMENT_TYPES: dict[str, Any] = {
    "CallToolRequestParams": CallToolRequestParams,
    "CallToolResult": CallToolResult,
    "ListToolsResult": ListToolsResult,
    "Tool": Tool,
    "TextContent": ContentBlock,
    "ImageContent": ContentBlock,
    "AudioContent": ContentBlock,
    "EmbeddedResource": ContentBlock,
    "ResourceLink": ContentBlock,
    "TextResourceContents": ResourceContents,
    "BlobResourceContents": ResourceContents,
    "CancelledNotificationParams": CancelledNotificationParams,
    "ProgressNotificationParams": ProgressNotificationParams,
    "LoggingMessageNotificationParams": LoggingMessageNotificationParams,
    "ClientCapabilities": ClientCapabilities,
    "ServerCapabilities": ServerCapabilities,
    "PaginatedRequestParams": PaginatedRequestParams,
    "ParseError": ErrorObject,
    "InvalidParamsError": ErrorObject,
    "MethodNotFoundError": ErrorObject,
    "InternalError": ErrorObject,
}
# Complete wire messages -> (method, params type) or result type.
MESSAGE_TYPES: dict[str, Any] = {
    "CallToolRequest": CallToolRequestParams,
    "ListToolsRequest": ListToolsRequestParams,
    "CancelledNotification": CancelledNotificationParams,
    "ProgressNotification": ProgressNotificationParams,
    "LoggingMessageNotification": LoggingMessageNotificationParams,
    "CallToolResultResponse": CallToolResult,
    "ListToolsResultResponse": ListToolsResult,
}


def example_files(folders: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(folder, path, id=f"{folder}/{path.stem}")
        for folder in sorted(folders)
        for path in sorted((EXAMPLES / folder).glob("*.json"))
    ]


def test_every_implemented_example_folder_exists() -> None:
    for folder in [*FRAGMENT_TYPES, *MESSAGE_TYPES]:
        assert list((EXAMPLES / folder).glob("*.json")), folder


@pytest.mark.parametrize(("folder", "path"), example_files(FRAGMENT_TYPES))
def test_example_fragments_round_trip(folder: str, path: Path) -> None:
    original = json.loads(path.read_bytes())
    decoded = msgspec.json.decode(path.read_bytes(), type=FRAGMENT_TYPES[folder])
    assert json.loads(msgspec.json.encode(decoded)) == original


@pytest.mark.parametrize(("folder", "path"), example_files(MESSAGE_TYPES))
def test_example_messages_decode(folder: str, path: Path) -> None:
    data = path.read_bytes()
    message = decode_message(data)
    original = json.loads(data)
    if isinstance(message, (RequestReceived, NotificationReceived)):
        assert message.method == original["method"]
        assert message.params is not None
        typed = msgspec.json.decode(message.params, type=MESSAGE_TYPES[folder])
        assert json.loads(msgspec.json.encode(typed)) == original["params"]
    else:
        assert isinstance(message, DecodedResponse)
        assert message.id == original["id"]
        assert message.result is not None
        typed = msgspec.json.decode(message.result, type=MESSAGE_TYPES[folder])
        assert json.loads(msgspec.json.encode(typed)) == original["result"]


# -- emitted messages validate against the negotiated revision --------------------------


@cache
def definitions(revision: str) -> tuple[dict[str, Any], str]:
    schema = json.loads((SPEC / revision / "schema.json").read_bytes())
    key = "$defs" if "$defs" in schema else "definitions"
    return schema, key


def validate(revision: str, definition: str, instance: Any) -> None:
    schema, key = definitions(revision)
    wrapper = {**schema, "$ref": f"#/{key}/{definition}"}
    wrapper.pop("anyOf", None)
    wrapper.pop("oneOf", None)
    cls = validator_for(wrapper)
    cls(wrapper).validate(instance)


def error_definition(revision: str) -> str:
    return "JSONRPCErrorResponse" if revision >= "2025-11-25" else "JSONRPCError"


def result_definition(revision: str) -> str:
    return "JSONRPCResultResponse" if revision >= "2025-11-25" else "JSONRPCResponse"


REQUEST_DEFS = {
    "initialize": "InitializeRequest",
    "ping": "PingRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "logging/setLevel": "SetLevelRequest",
}
RESULT_DEFS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "logging/setLevel": "EmptyResult",
}
NOTIFICATION_DEFS = {
    "notifications/initialized": "InitializedNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
}


class Recorder:
    """A channel wrapper that records every message sent through it."""

    def __init__(self, channel: MemoryChannel) -> None:
        self.channel = channel
        self.sent: list[bytes] = []

    async def send(self, message: bytes) -> None:
        self.sent.append(message)
        await self.channel.send(message)

    async def receive(self) -> bytes:
        return await self.channel.receive()

    async def aclose(self) -> None:
        await self.channel.aclose()


def session_server() -> LowLevelServer:
    server = LowLevelServer("schema", "1.0", title="Schema Server", instructions="Validate me.")

    async def work(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        await ctx.report_progress(1, 2, "half")
        await ctx.log("warning", {"detail": [1, 2]}, logger="work")
        await ctx.report_progress(2, 2)
        return CallToolResult(
            content=[TextContent(text="t"), ImageContent(data="aGk=", mime_type="image/png")],
            is_error=False,
        )

    async def broken(ctx: RequestContext, args: dict[str, Any]) -> str:
        raise ValueError("no")

    async def slow(ctx: RequestContext, args: dict[str, Any]) -> str:
        await anyio.sleep_forever()
        return ""

    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    annotations = ToolAnnotations(read_only_hint=True)
    server.add_tool(
        Tool(name="work", input_schema=schema, annotations=annotations, description="d"), work
    )
    server.add_tool(Tool(name="broken", input_schema={"type": "object"}), broken)
    server.add_tool(Tool(name="slow", input_schema={"type": "object"}), slow)
    return server


@pytest.mark.anyio
@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_every_emitted_message_validates(revision: str) -> None:
    client_end, server_end = memory_channel_pair()
    client_rec, server_rec = Recorder(client_end), Recorder(server_end)
    server = session_server()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_rec)
        async with Client(client_rec, protocol_version=revision, on_log=lambda r: None) as client:
            await client.ping()
            await client.set_logging_level("debug")
            await client.list_tools()
            await client.call_tool("work", {"x": "y"}, on_progress=lambda p: None)
            await client.call_tool("broken")
            with pytest.raises(RPCError):
                await client.call_tool("missing")
            # Invalid params, sent around the recorder (the request itself is invalid).
            await client_end.send(
                b'{"jsonrpc":"2.0","id":"bad","method":"tools/list","params":{"cursor":5}}'
            )
            with anyio.move_on_after(0.05):
                await client.call_tool("slow")
            # A message whose id cannot be read: answered with "id": null (JSON-RPC 2.0).
            await client_end.send(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}')
            await client.ping()
        tg.cancel_scope.cancel()

    methods: dict[Any, str] = {}
    checked = {"request": 0, "result": 0, "error": 0, "notification": 0, "null-id error": 0}
    for data in client_rec.sent + server_rec.sent:
        message = json.loads(data)
        if "method" in message and "id" in message:
            methods[message["id"]] = message["method"]
            validate(revision, "JSONRPCRequest", message)
            validate(revision, REQUEST_DEFS[message["method"]], message)
            checked["request"] += 1
        elif "method" in message:
            validate(revision, "JSONRPCNotification", message)
            validate(revision, NOTIFICATION_DEFS[message["method"]], message)
            checked["notification"] += 1
        elif "result" in message and message["id"] in methods:
            validate(revision, result_definition(revision), message)
            validate(revision, RESULT_DEFS[methods[message["id"]]], message["result"])
            checked["result"] += 1
        elif message["id"] is None:
            # The one message the MCP schema cannot express: JSON-RPC 2.0 section 5 requires
            # "id": null when the id could not be read; the schema's id is string|integer.
            assert message == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": message["error"]["message"]},
            }
            if revision >= "2025-11-25":  # where the id may be omitted, the rest must fit
                validate(
                    revision,
                    error_definition(revision),
                    {k: v for k, v in message.items() if k != "id"},
                )
            checked["null-id error"] += 1
        else:
            validate(revision, error_definition(revision), message)
            checked["error"] += 1
    assert checked == {"request": 9, "result": 7, "error": 2, "notification": 5, "null-id error": 1}


def test_validator_rejects_a_broken_message() -> None:
    """The harness above can fail: a result missing a required member does not validate."""
    with pytest.raises(jsonschema.ValidationError):
        validate("2025-11-25", "CallToolResult", {"isError": True})
