"""Conformance to the official schema data (copied into tests/fixtures/spec, see NOTICE).

1. Every official 2026-07-28 example of a type mcpkit implements decodes into our struct
   and re-encodes to an equal document, and the method table names the types the examples
   use. Left out on purpose: tasks examples (not modelled yet; the 2026-07-28 folder has
   none, tasks being an extension there) and the elicitation JSON Schema fragments (``StringSchema``, ``NumberSchema``, ``BooleanSchema``, the four
   ``*EnumSchema``), which stay open objects inside ``requestedSchema``.
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
    METHODS,
    CallToolRequestParams,
    CallToolResult,
    CancelledNotificationParams,
    ClientCapabilities,
    CompleteRequestParams,
    CompleteResult,
    ContentBlock,
    CreateMessageRequestParams,
    CreateMessageResult,
    DiscoverResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorObject,
    GetPromptRequestParams,
    GetPromptResult,
    ImageContent,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListToolsRequestParams,
    ListToolsResult,
    LoggingMessageNotificationParams,
    ModelPreferences,
    NotificationParams,
    PaginatedRequestParams,
    ProgressNotificationParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    RequestParams,
    Resource,
    ResourceContents,
    ResourceUpdatedNotificationParams,
    Root,
    SamplingContent,
    SamplingMessage,
    ServerCapabilities,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
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
    # resources
    "Resource": Resource,
    "ListResourcesResult": ListResourcesResult,
    "ListResourceTemplatesResult": ListResourceTemplatesResult,
    "ReadResourceResult": ReadResourceResult,
    "ResourceUpdatedNotificationParams": ResourceUpdatedNotificationParams,
    # prompts
    "ListPromptsResult": ListPromptsResult,
    "GetPromptRequestParams": GetPromptRequestParams,
    "GetPromptResult": GetPromptResult,
    # completion
    "CompleteRequestParams": CompleteRequestParams,
    "CompleteResult": CompleteResult,
    # sampling
    "ModelPreferences": ModelPreferences,
    "SamplingMessage": SamplingMessage,
    "ToolUseContent": SamplingContent,
    "ToolResultContent": SamplingContent,
    "CreateMessageRequestParams": CreateMessageRequestParams,
    "CreateMessageResult": CreateMessageResult,
    # elicitation: both spec shapes are one struct
    "ElicitRequestFormParams": ElicitRequestParams,
    "ElicitRequestURLParams": ElicitRequestParams,
    "ElicitResult": ElicitResult,
    # roots
    "Root": Root,
    "ListRootsResult": ListRootsResult,
    # 2026-07-28: discovery, subscriptions, multi round-trip requests
    "DiscoverResult": DiscoverResult,
    "SubscriptionsListenResult": SubscriptionsListenResult,
    "InputRequiredResult": InputRequiredResult,
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
    "ListResourcesRequest": PaginatedRequestParams,
    "ListResourcesResultResponse": ListResourcesResult,
    "ListResourceTemplatesRequest": PaginatedRequestParams,
    "ListResourceTemplatesResultResponse": ListResourceTemplatesResult,
    "ReadResourceRequest": ReadResourceRequestParams,
    "ReadResourceResultResponse": ReadResourceResult,
    "ResourceListChangedNotification": NotificationParams,
    "ResourceUpdatedNotification": ResourceUpdatedNotificationParams,
    "ListPromptsRequest": PaginatedRequestParams,
    "ListPromptsResultResponse": ListPromptsResult,
    "GetPromptRequest": GetPromptRequestParams,
    "GetPromptResultResponse": GetPromptResult,
    "PromptListChangedNotification": NotificationParams,
    "ToolListChangedNotification": NotificationParams,
    "CompleteRequest": CompleteRequestParams,
    "CompleteResultResponse": CompleteResult,
    "DiscoverRequest": RequestParams,
    "DiscoverResultResponse": DiscoverResult,
    "SubscriptionsListenRequest": SubscriptionsListenRequestParams,
    "SubscriptionsListenResultResponse": SubscriptionsListenResult,
    "SubscriptionsAcknowledgedNotification": SubscriptionsAcknowledgedNotificationParams,
    # 2026-07-28 error responses
    "HeaderMismatchError": ErrorObject,
    "MissingRequiredClientCapabilityError": ErrorObject,
    "UnsupportedProtocolVersionError": ErrorObject,
}
# 2026-07-28 input requests: ``{method, params}`` objects embedded in an
# InputRequiredResult, not JSON-RPC messages -> params type.
INPUT_REQUEST_TYPES: dict[str, Any] = {
    "CreateMessageRequest": CreateMessageRequestParams,
    "ElicitRequest": ElicitRequestParams,
    "ListRootsRequest": RequestParams,
}
# Their answers, keyed like the requests inside ``inputResponses``.
INPUT_RESPONSE_TYPES = (CreateMessageResult, ElicitResult, ListRootsResult)
# Folders whose values are maps of input requests / input responses.
INPUT_MAP_FOLDERS = ("InputRequests", "InputResponses")


def example_files(folders: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(folder, path, id=f"{folder}/{path.stem}")
        for folder in sorted(folders)
        for path in sorted((EXAMPLES / folder).glob("*.json"))
    ]


def test_every_implemented_example_folder_exists() -> None:
    for folder in [*FRAGMENT_TYPES, *MESSAGE_TYPES, *INPUT_REQUEST_TYPES, *INPUT_MAP_FOLDERS]:
        assert list((EXAMPLES / folder).glob("*.json")), folder


# Example folders deliberately not covered above, with the reason.
UNCOVERED_FOLDERS = {
    # JSON Schema fragments of an elicitation's requestedSchema, kept as open dicts.
    "BooleanSchema",
    "NumberSchema",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
}


def test_every_example_folder_is_covered_or_listed() -> None:
    covered = {*FRAGMENT_TYPES, *MESSAGE_TYPES, *INPUT_REQUEST_TYPES, *INPUT_MAP_FOLDERS}
    folders = {path.name for path in EXAMPLES.iterdir() if path.is_dir()}
    tasks = {folder for folder in folders if "Task" in folder}  # tasks: not modelled yet
    assert folders - covered - tasks == UNCOVERED_FOLDERS


def round_trip(data: Any, type_: Any) -> None:
    """``data`` (a JSON value) decodes into ``type_`` and re-encodes to an equal value."""
    decoded = msgspec.json.decode(msgspec.json.encode(data), type=type_)
    assert json.loads(msgspec.json.encode(decoded)) == data


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
        if "error" in original:
            assert message.error is not None
            assert json.loads(msgspec.json.encode(message.error)) == original["error"]
            return
        assert message.result is not None
        typed = msgspec.json.decode(message.result, type=MESSAGE_TYPES[folder])
        assert json.loads(msgspec.json.encode(typed)) == original["result"]


def example_method(folder: str) -> str:
    [path, *_] = sorted((EXAMPLES / folder).glob("*.json"))
    method: str = json.loads(path.read_bytes())["method"]
    return method


@pytest.mark.parametrize("folder", sorted(MESSAGE_TYPES))
def test_method_table_matches_examples(folder: str) -> None:
    """The method table names the types the official messages decode into."""
    if folder.endswith("ResultResponse"):
        spec = METHODS[example_method(folder.removesuffix("ResultResponse") + "Request")]
        assert spec.result is MESSAGE_TYPES[folder]
    elif folder.endswith(("Request", "Notification")):
        spec = METHODS[example_method(folder)]
        assert spec.kind == ("request" if folder.endswith("Request") else "notification")
        assert spec.params is MESSAGE_TYPES[folder]
    else:
        assert MESSAGE_TYPES[folder] is ErrorObject


def check_input_request(entry: dict[str, Any]) -> None:
    """An embedded input request: a known method whose params round-trip."""
    spec = METHODS[entry["method"]]
    assert spec.kind == "request"
    assert spec.sender == "server"  # server-to-client requests in the handshake era
    if "params" in entry:
        round_trip(entry["params"], spec.params)


def check_input_response(entry: dict[str, Any]) -> None:
    """An input response: exactly one of the input results decodes it, losslessly."""
    fits = []
    for type_ in INPUT_RESPONSE_TYPES:
        try:
            round_trip(entry, type_)
        except msgspec.ValidationError:
            continue
        fits.append(type_)
    assert len(fits) == 1, fits


@pytest.mark.parametrize(("folder", "path"), example_files(INPUT_REQUEST_TYPES))
def test_example_input_requests_decode(folder: str, path: Path) -> None:
    original = json.loads(path.read_bytes())
    assert METHODS[original["method"]].params is INPUT_REQUEST_TYPES[folder]
    check_input_request(original)


@pytest.mark.parametrize(("folder", "path"), example_files(dict.fromkeys(INPUT_MAP_FOLDERS)))
def test_example_input_maps_decode(folder: str, path: Path) -> None:
    entries = json.loads(path.read_bytes())
    assert entries
    check = check_input_request if folder == "InputRequests" else check_input_response
    for entry in entries.values():
        check(entry)


@pytest.mark.parametrize(("folder", "path"), example_files(dict.fromkeys(["InputRequiredResult"])))
def test_example_input_required_requests_decode(folder: str, path: Path) -> None:
    result = msgspec.json.decode(path.read_bytes(), type=InputRequiredResult)
    assert result.result_type == "input_required"
    if isinstance(result.input_requests, dict):
        for entry in result.input_requests.values():
            check_input_request(entry)


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
