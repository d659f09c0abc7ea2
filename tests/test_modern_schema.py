"""Every message the server emits on the 2026-07-28 era validates against that revision's
schema.json (tests/fixtures/spec, see NOTICE): results of every implemented method, the
three 2026 errors, and notifications. The server is examples/everything.py, spoken to raw
over an in-memory connection."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

import pytest

from ._wire import meta, wire_to
from .conftest import EXAMPLES, load_module
from .test_spec_schema import validate

pytestmark = pytest.mark.anyio

REVISION: Final = "2026-07-28"

#: (method, params without _meta, the response's schema definition)
CALLS: Final[list[tuple[str, dict[str, Any], str]]] = [
    ("server/discover", {}, "DiscoverResultResponse"),
    ("tools/list", {}, "ListToolsResultResponse"),
    ("tools/call", {"name": "test_simple_text", "arguments": {}}, "CallToolResultResponse"),
    ("tools/call", {"name": "test_image_content", "arguments": {}}, "CallToolResultResponse"),
    ("tools/call", {"name": "test_audio_content", "arguments": {}}, "CallToolResultResponse"),
    ("tools/call", {"name": "test_embedded_resource", "arguments": {}}, "CallToolResultResponse"),
    (
        "tools/call",
        {"name": "test_multiple_content_types", "arguments": {}},
        "CallToolResultResponse",
    ),
    ("tools/call", {"name": "test_error_handling", "arguments": {}}, "CallToolResultResponse"),
    ("resources/list", {}, "ListResourcesResultResponse"),
    ("resources/templates/list", {}, "ListResourceTemplatesResultResponse"),
    ("resources/read", {"uri": "test://static-text"}, "ReadResourceResultResponse"),
    ("resources/read", {"uri": "test://static-binary"}, "ReadResourceResultResponse"),
    ("prompts/list", {}, "ListPromptsResultResponse"),
    ("prompts/get", {"name": "test_simple_prompt"}, "GetPromptResultResponse"),
    (
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
        "GetPromptResultResponse",
    ),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "a"},
        },
        "CompleteResultResponse",
    ),
]


@pytest.fixture
def everything() -> Iterator[ModuleType]:
    yield from load_module(EXAMPLES / "everything.py", "_everything_modern_schema")


async def test_results_validate(everything: ModuleType) -> None:
    async with wire_to(everything.server) as wire:
        for n, (method, params, definition) in enumerate(CALLS):
            reply = await wire.call(n, method, {**params, "_meta": meta()})
            assert "result" in reply, (method, params, reply)
            validate(REVISION, definition, reply)


@pytest.mark.parametrize(
    ("params", "definition"),
    [
        ({"_meta": meta(version="2099-01-01")}, "UnsupportedProtocolVersionError"),
        ({}, "InvalidParamsError"),
    ],
)
async def test_errors_validate(
    everything: ModuleType, params: dict[str, Any], definition: str
) -> None:
    async with wire_to(everything.server) as wire:
        reply = await wire.call(1, "server/discover", params)
    validate(REVISION, "JSONRPCErrorResponse", reply)
    # The three 2026 errors are whole responses in the schema; the classic ones are
    # error objects.
    whole = definition.endswith("ProtocolVersionError")
    validate(REVISION, definition, reply if whole else reply["error"])


async def test_unknown_and_removed_methods_validate(everything: ModuleType) -> None:
    async with wire_to(everything.server) as wire:
        for n, method in enumerate(["ping", "nope/nothing", "initialize"]):
            reply = await wire.call(n, method, {"_meta": meta()})
            validate(REVISION, "JSONRPCErrorResponse", reply)
            validate(REVISION, "MethodNotFoundError", reply["error"])


async def test_notifications_validate(everything: ModuleType) -> None:
    async with wire_to(everything.server) as wire:
        params = {
            "name": "test_tool_with_logging",
            "arguments": {},
            "_meta": {**meta(log_level="debug"), "progressToken": "p"},
        }
        reply = await wire.call(1, "tools/call", params)
        validate(REVISION, "CallToolResultResponse", reply)
        params = {
            "name": "test_tool_with_progress",
            "arguments": {},
            "_meta": {**meta(), "progressToken": "p2"},
        }
        reply = await wire.call(2, "tools/call", params)
        validate(REVISION, "CallToolResultResponse", reply)
    notes = [m for m in wire.seen if "method" in m]
    kinds = {m["method"] for m in notes}
    assert kinds == {"notifications/message", "notifications/progress"}
    for note in notes:
        definition = (
            "LoggingMessageNotification"
            if note["method"] == "notifications/message"
            else "ProgressNotification"
        )
        validate(REVISION, definition, note)


async def test_input_required_results_validate(everything: ModuleType) -> None:
    capabilities: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    asks = [
        ("tools/call", "test_input_required_result_multiple_inputs", "CallToolResultResponse"),
        ("tools/call", "test_input_required_result_multi_round", "CallToolResultResponse"),
        ("prompts/get", "test_input_required_result_prompt", "GetPromptResultResponse"),
    ]
    async with wire_to(everything.server) as wire:
        for n, (method, name, definition) in enumerate(asks):
            params = {"name": name, "_meta": meta(capabilities=capabilities)}
            reply = await wire.call(n, method, params)
            assert reply["result"]["resultType"] == "input_required", reply
            validate(REVISION, definition, reply)
            validate(REVISION, "InputRequiredResult", reply["result"])
            for request in reply["result"]["inputRequests"].values():
                validate(REVISION, "InputRequest", request)


async def test_listen_messages_validate(everything: ModuleType) -> None:
    listen = {
        "notifications": {"toolsListChanged": True, "promptsListChanged": True},
        "_meta": meta(),
    }
    async with wire_to(everything.server) as wire:
        await wire.send(
            {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": listen}
        )
        ack = await wire.read()
        validate(REVISION, "SubscriptionsAcknowledgedNotification", ack)
        for n, tool in enumerate(["test_trigger_tool_change", "test_trigger_prompt_change"]):
            reply = await wire.call(n, "tools/call", {"name": tool, "_meta": meta()})
            validate(REVISION, "CallToolResultResponse", reply)
        everything.server.end_subscriptions()
        final = await wire.read()
        while "method" in final:
            final = await wire.read()
    kinds = {
        "notifications/tools/list_changed": "ToolListChangedNotification",
        "notifications/prompts/list_changed": "PromptListChangedNotification",
    }
    delivered = [m for m in wire.seen if m.get("method") in kinds]
    assert sorted(m["method"] for m in delivered) == sorted(kinds)
    for message in delivered:
        validate(REVISION, kinds[message["method"]], message)
    validate(REVISION, "SubscriptionsListenResultResponse", final)
