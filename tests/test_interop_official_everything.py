"""Interop with the official MCP Python SDK (``mcp`` 2.3.0) beyond tools: the everything
contracts, over stdio, through real subprocesses, both directions.

* The official client (``mcp.Client`` / ``mcp.ClientSession``) drives
  ``mcpkit run examples/everything.py`` at each handshake-era revision: every tool of the conformance contract (the official
  client's own sampling, elicitation and roots callbacks answering the server's requests),
  every resource and the template, subscribe/unsubscribe and the update notification,
  every prompt, completion, logging/setLevel and the log messages, progress, ping. The
  results are asserted exactly as they came off the pipe (and as the SDK parsed them).
* mcpkit's :class:`~mcpkit.client.Client` drives ``tests/fixtures/official_everything_server.py``
  (the SDK's ``MCPServer``): resources, the template, prompts with arguments, completion,
  a tool that calls back for roots, sampling and elicitation, logging and subscriptions.

Choosing the revision on the official client: mcp 2.3.0 has no option for it. ``Client``'s
``mode`` is ``"legacy"`` (the ``initialize`` handshake), ``"auto"`` (probe
``server/discover``, then fall back to it) or a 2026 revision, and
``ClientSession.initialize()`` always offers ``LATEST_HANDSHAKE_VERSION`` (2025-11-25). It
accepts any handshake-era answer, but mcpkit rightly never counter-offers a revision it
supports. So at 2025-11-25 the SDK's ``Client(mode="legacy")`` connects with its own
handshake; for the older revisions :func:`initialize_at` takes ``initialize()``'s three
steps through ``ClientSession``'s public API with the older revision in the request
(``send_request(InitializeRequest)``, ``adopt``, ``send_notification(InitializedNotification)``). From then on the session is the SDK's,
and it parses and validates every result, request and notification for the negotiated
revision (``mcp_types.methods``), e.g. refusing ``elicitation/create`` before 2025-06-18.

The SDK's ``logging/setLevel``, ``resources/subscribe`` and roots APIs are deprecated as of
2026-07-28 (SEP-2577) and warn; they are current in the handshake era, so this module
ignores ``MCPDeprecationWarning``.
"""

from __future__ import annotations

import base64
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, Generic, TextIO, TypeVar

import anyio
import mcp_types
import msgspec
import pytest
from mcp import Client as OfficialClient
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import RPCError
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    LoggingMessageNotificationParams,
    PromptArgument,
    PromptMessage,
    ResourceContents,
    ResourceTemplateReference,
    Root,
    TextContent,
)

from . import test_interop_official_sdk as official_sdk
from .test_everything_server import (
    CLIENT_DEFAULTS_MESSAGE,
    CLIENT_SCENARIO_TOOLS,
    EXTRA_TOOLS,
    HARNESS_ANSWERS,
    HARNESS_TOOLS,
    JSON_SCHEMA_2020_12,
    PNG,
    SEP1034_PROPERTIES,
    SEP1330_PROPERTIES,
    WAV,
)
from .test_everything_server import wire as as_json
from .test_interop_official_sdk import (
    HANDSHAKE_ERA,
    ROOT,
    TIMEOUT,
    TRICKY_TEXT,
    ProgressRecorder,
    Wire,
    assert_no_tracebacks,
    only_text,
    read_log,
    tapped_stdio,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

#: The spawned server's stderr (a fixture of the tools-only interop module).
server_errlog = official_sdk.server_errlog

EVERYTHING: Final = ROOT / "examples" / "everything.py"
OFFICIAL_EVERYTHING: Final = (
    Path(__file__).resolve().parent / "fixtures" / "official_everything_server.py"
)
WATCHED: Final = "test://watched-resource"
SAMPLED_TEXT: Final = "This is a test response from the client"
ROOTS_JSON: Final = '[{"uri":"file:///workspace","name":"workspace"}]'
T = TypeVar("T")


# -- helpers -------------------------------------------------------------------------------


class Inbox(Generic[T]):
    """What a callback received, awaitable for a count. The official session runs each
    notification's callback in a task of its own, so arrival is awaited, never assumed."""

    def __init__(self) -> None:
        self.items: list[T] = []
        self._changed = anyio.Condition()

    async def put(self, item: T) -> None:
        async with self._changed:
            self.items.append(item)
            self._changed.notify_all()

    async def wait_for(self, count: int) -> list[T]:
        async with self._changed:
            while len(self.items) < count:
                await self._changed.wait()
        return self.items


class OfficialPeer:
    """The official client's callbacks: the conformance harness's answers, and a record of
    what the server asked and sent."""

    def __init__(self) -> None:
        self.samplings: list[mcp_types.CreateMessageRequestParams] = []
        self.elicitations: list[mcp_types.ElicitRequestFormParams] = []
        self.roots_requests = 0
        self.logs = Inbox[mcp_types.LoggingMessageNotificationParams]()
        self.updated = Inbox[str]()

    async def sampling(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        self.samplings.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(text=SAMPLED_TEXT),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        assert isinstance(params, mcp_types.ElicitRequestFormParams), params
        self.elicitations.append(params)
        if params.message == CLIENT_DEFAULTS_MESSAGE:  # SEP-1034: a client fills in defaults
            properties = params.requested_schema["properties"]
            defaults = {name: schema["default"] for name, schema in properties.items()}
            return mcp_types.ElicitResult(action="accept", content=defaults)
        return mcp_types.ElicitResult(action="accept", content=HARNESS_ANSWERS[params.message])

    async def list_roots(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        self.roots_requests += 1
        root = mcp_types.Root.model_validate({"uri": "file:///workspace", "name": "workspace"})
        return mcp_types.ListRootsResult(roots=[root])

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        await self.logs.put(params)

    async def message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            await self.updated.put(str(message.params.uri))


def client_capabilities(version: str) -> mcp_types.ClientCapabilities:
    """What the official client declares for these callbacks at 2025-11-25 (sampling,
    elicitation form and url, roots with listChanged), as an older ``version`` defines it:
    no elicitation before 2025-06-18, and no form/url modes (an empty object) before
    2025-11-25."""
    elicitation = mcp_types.ElicitationCapability() if version >= "2025-06-18" else None
    return mcp_types.ClientCapabilities(
        sampling=mcp_types.SamplingCapability(),
        elicitation=elicitation,
        roots=mcp_types.RootsCapability(list_changed=True),
    )


async def initialize_at(session: ClientSession, version: str) -> mcp_types.InitializeResult:
    """``ClientSession.initialize()``'s three steps, asking for ``version`` (see the module
    docstring)."""
    result = await session.send_request(
        mcp_types.InitializeRequest(
            params=mcp_types.InitializeRequestParams(
                protocol_version=version,
                capabilities=client_capabilities(version),
                client_info=mcp_types.Implementation(name="mcp", version="0.1.0"),
            )
        ),
        mcp_types.InitializeResult,
    )
    session.adopt(result)  # the negotiated revision, as ClientSession.initialize() does
    await session.send_notification(mcp_types.InitializedNotification())
    return result


@asynccontextmanager
async def official_session(
    params: StdioServerParameters, version: str, peer: OfficialPeer, wire: Wire, errlog: TextIO
) -> AsyncIterator[ClientSession]:
    """A connected official client session that negotiated ``version``: at 2025-11-25 the
    SDK's ``Client`` (mode="legacy": its own handshake, unchanged), before that a
    ``ClientSession`` and :func:`initialize_at`."""
    transport = tapped_stdio(params, wire, errlog)
    if version == LATEST_HANDSHAKE_VERSION:
        async with OfficialClient(
            transport,
            mode="legacy",
            sampling_callback=peer.sampling,
            elicitation_callback=peer.elicitation,
            list_roots_callback=peer.list_roots,
            logging_callback=peer.log,
            message_handler=peer.message,
        ) as client:
            yield client.session
        return
    async with (
        transport as (read, write),
        ClientSession(
            read,
            write,
            sampling_callback=peer.sampling,
            elicitation_callback=peer.elicitation,
            list_roots_callback=peer.list_roots,
            logging_callback=peer.log,
            message_handler=peer.message,
        ) as session,
    ):
        await initialize_at(session, version)
        yield session


def last_request(wire: Wire, method: str) -> mcp_types.JSONRPCRequest:
    return wire.outbound_requests(method)[-1]


def answer(wire: Wire, request: mcp_types.JSONRPCRequest) -> dict[str, Any]:
    """The result of ``request`` as it came off the pipe."""
    message = wire.inbound()[wire.answer_index(request.id)]
    assert isinstance(message, mcp_types.JSONRPCResponse), wire.dump()
    return message.result


def notifications(wire: Wire, method: str, before: mcp_types.JSONRPCRequest) -> list[Any]:
    """The params of the ``method`` notifications that arrived between sending ``before``
    and its answer."""
    start = wire.messages.index(("out", before))
    inbound = wire.inbound()
    end = wire.messages.index(("in", inbound[wire.answer_index(before.id)]))
    return [
        message.params
        for direction, message in wire.messages[start:end]
        if direction == "in"
        and isinstance(message, mcp_types.JSONRPCNotification)
        and message.method == method
    ]


def text_result(text: str, *, error: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result of one text block, as mcpkit writes it."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if error:
        result["isError"] = True
    return result


async def call(
    session: ClientSession, wire: Wire, name: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Call a tool through the official client; return the result as it came off the pipe."""
    result = await session.call_tool(name, arguments)
    request = last_request(wire, "tools/call")
    assert request.params is not None
    assert request.params["name"] == name
    raw = answer(wire, request)
    assert result.is_error is (raw.get("isError") is True)
    return raw


@pytest.fixture
def everything_params(anyio_backend: str) -> StdioServerParameters:
    """``mcpkit run examples/everything.py``, serving on the test's backend."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpkit", "run", str(EVERYTHING), "--backend", anyio_backend],
        cwd=str(ROOT),
    )


# -- 1. the official client drives mcpkit's everything server ------------------------------


async def check_handshake(session: ClientSession, wire: Wire, version: str) -> None:
    """initialize (the revision asked for is the one chosen), initialized, ping."""
    [initialize] = wire.outbound_requests("initialize")
    assert initialize.params is not None
    assert initialize.params["protocolVersion"] == version
    declared = initialize.params["capabilities"]
    assert declared["sampling"] == {}
    assert declared["roots"] == {"listChanged": True}
    if version >= "2025-11-25":  # the SDK's own declaration
        assert declared["elicitation"] == {"form": {}, "url": {}}
    elif version >= "2025-06-18":
        assert declared["elicitation"] == {}
    else:
        assert "elicitation" not in declared
    capabilities: dict[str, Any] = {
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
    }
    if version >= "2025-03-26":
        capabilities["completions"] = {}
    assert answer(wire, initialize) == {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": {"name": "mcp-conformance-test-server", "version": "1.0.0"},
        "instructions": "The MCP conformance everything-server, built on mcpkit.",
    }
    assert session.protocol_version == version
    assert session.server_info == mcp_types.Implementation(
        name="mcp-conformance-test-server", version="1.0.0"
    )
    assert await session.send_ping() == mcp_types.EmptyResult()
    ping = last_request(wire, "ping")
    assert answer(wire, ping) == {}
    # Sent (and so recorded) before the ping: `initialized` right after `initialize`.
    sent = [message for direction, message in wire.messages if direction == "out"]
    initialized = sent[1]
    assert isinstance(initialized, mcp_types.JSONRPCNotification)
    assert initialized.method == "notifications/initialized"
    assert sent[:3] == [initialize, initialized, ping]


async def check_tool_list(session: ClientSession, version: str) -> None:
    listed = await session.list_tools()
    assert listed.next_cursor is None
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == HARNESS_TOOLS | CLIENT_SCENARIO_TOOLS | EXTRA_TOOLS
    assert len(listed.tools) == len(tools)
    for tool in listed.tools:
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object", tool.name
    assert tools["json_schema_2020_12_tool"].input_schema == JSON_SCHEMA_2020_12
    assert tools["test_sampling"].input_schema["required"] == ["prompt"]
    assert tools["test_elicitation"].input_schema["required"] == ["message"]
    assert tools["add_numbers"].description == "Add two numbers together"
    annotations = tools["echo"].annotations
    if version >= "2025-03-26":
        assert annotations == mcp_types.ToolAnnotations(read_only_hint=True, idempotent_hint=True)
    else:  # no annotations in 2024-11-05
        assert annotations is None


async def check_content_tools(session: ClientSession, wire: Wire, version: str) -> None:
    """tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -error,
    the schema tools, echo.py's tools and test_reconnection."""
    simple = await call(session, wire, "test_simple_text")
    assert simple == text_result("This is a simple text response for testing.")
    image = await call(session, wire, "test_image_content")
    assert image == {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}
    audio = await call(session, wire, "test_audio_content")
    if version >= "2025-03-26":
        assert audio == {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
    else:  # no audio content in 2024-11-05: a note instead
        assert audio == text_result(
            "[audio content (audio/wav) not shown: the client speaks protocol 2024-11-05]"
        )
    embedded = await call(session, wire, "test_embedded_resource")
    assert embedded == {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                },
            }
        ]
    }
    mixed = await call(session, wire, "test_multiple_content_types")
    assert mixed == {
        "content": [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": '{"test":"data","value":123}',
                },
            },
        ]
    }
    failed = await call(session, wire, "test_error_handling")
    assert failed == text_result("This tool intentionally returns an error for testing", error=True)

    ada = {"name": "Ada", "email": "ada@example.com"}
    assert await call(session, wire, "json_schema_2020_12_tool", ada) == text_result(
        'JSON Schema 2020-12 tool called with: {"name":"Ada","email":"ada@example.com"}'
    )
    no_contact = await call(session, wire, "json_schema_2020_12_tool", {"name": "Ada"})
    assert no_contact["isError"] is True
    assert "email" in no_contact["content"][0]["text"]
    assert await call(session, wire, "add_numbers", {"a": 5, "b": 3}) == text_result(
        "The sum of 5 and 3 is 8"
    )
    assert await call(session, wire, "add_numbers", {"a": 2.5, "b": 1}) == text_result(
        "The sum of 2.5 and 1 is 3.5"
    )
    echoed = await call(session, wire, "json_schema_echo", {"schema": JSON_SCHEMA_2020_12})
    assert json.loads(echoed["content"][0]["text"]) == JSON_SCHEMA_2020_12
    assert await call(session, wire, "echo", {"text": TRICKY_TEXT}) == text_result(TRICKY_TEXT)
    assert await call(session, wire, "blob", {"size": 5}) == text_result("xxxxx")
    assert await call(session, wire, "sleep", {"seconds": 0.05}) == text_result("slept 0.05 s")
    assert await call(session, wire, "test_reconnection") == text_result(
        "Reconnection test completed successfully. If you received this, the client "
        "properly reconnected after stream closure."
    )


async def check_logging_and_progress(
    session: ClientSession, wire: Wire, peer: OfficialPeer
) -> None:
    """logging-set-level (filtering, then the three messages in order) and
    tools-call-with-progress."""
    await session.set_logging_level("warning")
    assert answer(wire, last_request(wire, "logging/setLevel")) == {}
    done = text_result("Tool with logging executed successfully")
    assert await call(session, wire, "test_tool_with_logging") == done
    quiet = last_request(wire, "tools/call")
    assert notifications(wire, "notifications/message", quiet) == []

    await session.set_logging_level("info")
    assert await call(session, wire, "test_tool_with_logging") == done
    logged = notifications(wire, "notifications/message", last_request(wire, "tools/call"))
    sent = [
        {"level": "info", "data": "Tool execution started"},
        {"level": "info", "data": "Tool processing data"},
        {"level": "info", "data": "Tool execution completed"},
    ]
    assert logged == sent, wire.dump()  # in this order, before the tool's answer
    received = await peer.logs.wait_for(len(sent))
    assert sorted((log.level, log.data, log.logger) for log in received) == sorted(
        (log["level"], log["data"], None) for log in sent
    )

    recorder = ProgressRecorder()
    result = await session.call_tool("test_tool_with_progress", {}, progress_callback=recorder)
    request = last_request(wire, "tools/call")
    assert request.params is not None
    token = request.params["_meta"]["progressToken"]
    assert only_text(result) == f"Progress reported with token {token!r}"
    progress = notifications(wire, "notifications/progress", request)
    assert progress == [
        {"progressToken": token, "progress": value, "total": 100} for value in (0, 50, 100)
    ], wire.dump()
    await recorder.wait_for(3)
    assert sorted(recorder.updates) == [(0, 100, None), (50, 100, None), (100, 100, None)]


async def check_client_requests(
    session: ClientSession, wire: Wire, peer: OfficialPeer, version: str
) -> None:
    """tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
    elicitation-sep1330-enums, the client-defaults tool and roots, answered by the
    official client's callbacks where the revision has them."""
    llm = await call(session, wire, "test_sampling", {"prompt": "Test prompt for sampling"})
    assert llm == text_result(f"LLM response: {SAMPLED_TEXT}")
    [sampling] = peer.samplings
    assert sampling.model_dump(by_alias=True, mode="json", exclude_none=True) == {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}
        ],
        "maxTokens": 100,
    }
    assert await call(session, wire, "test_list_roots") == text_result(ROOTS_JSON)
    assert peer.roots_requests == 1

    message = {"message": "Please provide your information"}
    sep_tools = {
        "test_elicitation_sep1034_defaults": "SEP-1034 elicitation defaults",
        "test_elicitation_sep1330_enums": "SEP-1330 enum schemas",
        "test_client_elicitation_defaults": "SEP-1034 elicitation defaults",
    }
    if version < "2025-06-18":  # no elicitation before 2025-06-18
        assert await call(session, wire, "test_elicitation", message) == text_result(
            "Elicitation not supported or error: elicitation needs protocol 2025-06-18 or "
            f"later, not {version}",
            error=True,
        )
    else:
        assert await call(session, wire, "test_elicitation", message) == text_result(
            "User response: action=accept, "
            'content={"username":"testuser","email":"test@example.com"}'
        )
        assert peer.elicitations[-1].requested_schema == {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
    if version < "2025-11-25":  # defaults and the new enum shapes are 2025-11-25
        for name, feature in sep_tools.items():
            assert await call(session, wire, name) == text_result(
                f"{feature} needs protocol version 2025-11-25, not {version}",
                error=True,
            ), name
        assert len(peer.elicitations) == (1 if version >= "2025-06-18" else 0)
        return

    defaults = await call(session, wire, "test_elicitation_sep1034_defaults")
    assert defaults == text_result(
        "Elicitation completed: action=accept, content="
        '{"name":"Jane Smith","age":25,"score":88.0,"status":"inactive","verified":false}'
    )
    schema = peer.elicitations[-1].requested_schema
    assert schema["type"] == "object"
    assert schema["properties"] == SEP1034_PROPERTIES
    enums = await call(session, wire, "test_elicitation_sep1330_enums")
    assert enums == text_result(
        'Elicitation completed: action=accept, content={"untitledSingle":"option1",'
        '"titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],'
        '"titledMulti":["value1","value2"]}'
    )
    assert peer.elicitations[-1].requested_schema["properties"] == SEP1330_PROPERTIES
    applied = await call(session, wire, "test_client_elicitation_defaults")
    assert applied == text_result(
        'Elicitation completed: {"name":"John Doe","age":30,"score":95.5,'
        '"status":"active","verified":true}'
    )
    assert len(peer.elicitations) == 4


async def check_resources(
    session: ClientSession, wire: Wire, peer: OfficialPeer, version: str
) -> None:
    """resources-list, -read-text, -read-binary, -templates-read, -subscribe, -unsubscribe,
    and the handshake era's "not found"."""
    listed = await session.list_resources()
    titled = version >= "2025-06-18"
    assert [(r.uri, r.name, r.title, r.mime_type) for r in listed.resources] == [
        (
            "test://static-text",
            "static-text",
            "Static Text Resource" if titled else None,
            "text/plain",
        ),
        (
            "test://static-binary",
            "static-binary",
            "Static Binary Resource" if titled else None,
            "image/png",
        ),
        (WATCHED, "watched-resource", "Watched Resource" if titled else None, "text/plain"),
    ]
    assert all(resource.description for resource in listed.resources)
    [template] = (await session.list_resource_templates()).resource_templates
    assert (template.uri_template, template.name, template.mime_type) == (
        "test://template/{id}/data",
        "template",
        "application/json",
    )

    def read_answer() -> dict[str, Any]:
        return answer(wire, last_request(wire, "resources/read"))

    text = await session.read_resource("test://static-text")
    assert read_answer() == {
        "contents": [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ]
    }
    assert isinstance(text.contents[0], mcp_types.TextResourceContents)
    binary = await session.read_resource("test://static-binary")
    assert read_answer() == {
        "contents": [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]
    }
    assert isinstance(binary.contents[0], mcp_types.BlobResourceContents)
    await session.read_resource("test://template/123/data")
    assert read_answer() == {
        "contents": [
            {
                "uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
            }
        ]
    }
    missing = "test://nonexistent-resource-for-conformance-testing"
    with pytest.raises(MCPError) as not_found:
        await session.read_resource(missing)
    assert not_found.value.code == -32002  # -32602 only from 2026-07-28 (SEP-2164)
    assert not_found.value.error.data == {"uri": missing}

    before = await session.read_resource(WATCHED)
    assert before.contents == [
        mcp_types.TextResourceContents(
            uri=WATCHED, mime_type="text/plain", text="Watched resource content"
        )
    ]
    await session.subscribe_resource(WATCHED)
    assert answer(wire, last_request(wire, "resources/subscribe")) == {}
    notified = await call(session, wire, "test_watched_resource_update")
    assert notified == text_result(f"Updated {WATCHED} (update 1); notified 1 subscriber(s)")
    update = last_request(wire, "tools/call")
    sent = notifications(wire, "notifications/resources/updated", update)
    assert sent == [{"uri": WATCHED}], wire.dump()
    assert await peer.updated.wait_for(1) == [WATCHED]
    after = await session.read_resource(WATCHED)
    assert read_answer()["contents"][0]["text"] == "Watched resource content (update 1)"
    assert after.contents[0].uri == WATCHED

    await session.unsubscribe_resource(WATCHED)
    assert answer(wire, last_request(wire, "resources/unsubscribe")) == {}
    quiet = await call(session, wire, "test_watched_resource_update")
    assert quiet == text_result(f"Updated {WATCHED} (update 2); notified 0 subscriber(s)")
    await session.send_ping()  # anything the server sent before this answer has arrived
    updates = [
        message
        for direction, message in wire.messages
        if direction == "in"
        and isinstance(message, mcp_types.JSONRPCNotification)
        and message.method == "notifications/resources/updated"
    ]
    assert len(updates) == 1, wire.dump()
    assert peer.updated.items == [WATCHED]


async def check_prompts(session: ClientSession, wire: Wire, version: str) -> None:
    """prompts-list, prompts-get-simple, -with-args, -embedded-resource, -with-image."""
    listed = await session.list_prompts()
    prompts = {prompt.name: prompt for prompt in listed.prompts}
    assert list(prompts) == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ]
    assert all(prompt.description for prompt in listed.prompts)
    titled = version >= "2025-06-18"
    assert prompts["test_simple_prompt"].title == ("Simple Test Prompt" if titled else None)
    arguments = prompts["test_prompt_with_arguments"].arguments or []
    assert [(a.name, a.description, a.required) for a in arguments] == [
        ("arg1", "First test argument", True),
        ("arg2", "Second test argument", True),
    ]
    assert prompts["test_simple_prompt"].arguments is None

    def messages() -> list[Any]:
        got: list[Any] = answer(wire, last_request(wire, "prompts/get"))["messages"]
        return got

    def user_text(text: str) -> dict[str, Any]:
        return {"role": "user", "content": {"type": "text", "text": text}}

    await session.get_prompt("test_simple_prompt")
    assert messages() == [user_text("This is a simple prompt for testing.")]
    with_args = await session.get_prompt(
        "test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}
    )
    assert messages() == [user_text("Prompt with arguments: arg1='testValue1', arg2='testValue2'")]
    assert with_args.messages == [
        mcp_types.PromptMessage(
            role="user",
            content=mcp_types.TextContent(
                text="Prompt with arguments: arg1='testValue1', arg2='testValue2'"
            ),
        )
    ]
    with pytest.raises(MCPError) as incomplete:
        await session.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
    assert incomplete.value.code == mcp_types.INVALID_PARAMS
    await session.get_prompt(
        "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
    )
    assert messages() == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        user_text("Please process the embedded resource above."),
    ]
    await session.get_prompt("test_prompt_with_image")
    assert messages() == [
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        user_text("Please analyze the image above."),
    ]


async def check_completion(session: ClientSession) -> None:
    """completion-complete: a prompt argument and the template variable."""
    prompt = mcp_types.PromptReference(name="test_prompt_with_arguments")
    completed = await session.complete(prompt, {"name": "arg1", "value": "test"})
    assert completed.completion.values == ["testValue1", "testValue2"]
    completed = await session.complete(prompt, {"name": "arg2", "value": "par"})
    assert completed.completion.values == ["paris", "park", "party"]
    template = mcp_types.ResourceTemplateReference(uri="test://template/{id}/data")
    completed = await session.complete(template, {"name": "id", "value": "12"})
    assert completed.completion.values == ["123"]
    unknown = mcp_types.PromptReference(name="no-such-prompt")
    with pytest.raises(MCPError) as refused:  # completion.mdx, "Error Handling": -32602
        await session.complete(unknown, {"name": "x", "value": ""})
    assert refused.value.code == -32602


def check_conversation(wire: Wire, version: str) -> None:
    """Every request the server sent was answered once, without error, by the official
    client; the only errors the server answered with are the three provoked ones."""
    asked = [
        message
        for direction, message in wire.messages
        if direction == "in" and isinstance(message, mcp_types.JSONRPCRequest)
    ]
    expected = {"sampling/createMessage": 1, "roots/list": 1}
    if version >= "2025-06-18":
        expected["elicitation/create"] = 4 if version >= "2025-11-25" else 1
    assert Counter(request.method for request in asked) == expected, wire.dump()
    for request in asked:
        answers = [
            message
            for direction, message in wire.messages
            if direction == "out"
            and isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError)
            and message.id == request.id
        ]
        assert len(answers) == 1, wire.dump()
        assert isinstance(answers[0], mcp_types.JSONRPCResponse), wire.dump()
        if request.method == "sampling/createMessage":
            assert answers[0].result == {
                "role": "assistant",
                "content": {"type": "text", "text": SAMPLED_TEXT},
                "model": "test-model",
                "stopReason": "endTurn",
            }
    errors = [m for m in wire.inbound() if isinstance(m, mcp_types.JSONRPCError)]
    assert [error.error.code for error in errors] == [-32002, -32602, -32602], wire.dump()
    assert wire.unparsed == []


@pytest.mark.anyio
@pytest.mark.parametrize("version", HANDSHAKE_ERA)
async def test_official_client_drives_everything_server(
    version: str, everything_params: StdioServerParameters, server_errlog: TextIO
) -> None:
    wire = Wire()
    peer = OfficialPeer()
    with anyio.fail_after(TIMEOUT):
        async with official_session(everything_params, version, peer, wire, server_errlog) as s:
            await check_handshake(s, wire, version)
            await check_tool_list(s, version)
            await check_content_tools(s, wire, version)
            await check_logging_and_progress(s, wire, peer)
            await check_client_requests(s, wire, peer, version)
            await check_resources(s, wire, peer, version)
            await check_prompts(s, wire, version)
            await check_completion(s)
            await s.send_ping()
    check_conversation(wire, version)
    assert read_log(server_errlog) == "", "mcpkit logged warnings or errors"


# -- 2. mcpkit's client drives the official SDK's everything server -------------------------

ADVICE: Final = "Write the test first."
#: ``Approval``'s form, as the official SDK renders a pydantic model for elicitation.
APPROVAL_SCHEMA: Final = {
    "type": "object",
    "title": "Approval",
    "description": "The form of ``consult``'s elicitation.",
    "properties": {
        "approved": {"type": "boolean", "title": "Approved", "description": "Apply the advice?"},
        "comment": {
            "type": "string",
            "title": "Comment",
            "description": "Anything to add",
            "default": "",
        },
        "stars": {
            "type": "integer",
            "title": "Stars",
            "description": "How good is the advice (1-5)?",
            "default": 3,
            "minimum": 1,
            "maximum": 5,
        },
    },
    "required": ["approved"],
}
#: ``notes://logo``'s bytes (a PNG signature, then a NUL and 0xFF).
LOGO: Final = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF])
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class OurPeer:
    """mcpkit's client callbacks, and a record of what the official server asked and sent."""

    def __init__(self) -> None:
        self.samplings: list[CreateMessageRequestParams] = []
        self.elicitations: list[ElicitRequestParams] = []
        self.logs: list[LoggingMessageNotificationParams] = []
        self.updated: list[str] = []
        self.answer = ElicitResult(
            action="accept", content={"approved": True, "comment": "ship it", "stars": 5}
        )

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult:
        self.samplings.append(params)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(text=ADVICE),
            model="mock-model",
            stop_reason="endTurn",
        )

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult:
        self.elicitations.append(params)
        return self.answer

    def options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`Client`."""
        return {
            "sampling": self.sample,
            "elicitation": self.elicit,
            "roots": [Root(uri="file:///work", name="work")],
            "on_log": self.logs.append,
            "on_resource_updated": self.updated.append,
        }


def log_lines(peer: OurPeer) -> list[tuple[str, Any, Any]]:
    lines: list[tuple[str, Any, Any]] = [(log.level, log.data, log.logger) for log in peer.logs]
    peer.logs.clear()
    return lines


async def check_callbacks_tool(client: Client, peer: OurPeer) -> None:
    """``consult``: roots, sampling and elicitation from inside a tool call, with its log
    messages, and a structured result checked against the tool's outputSchema."""
    tools = {tool.name: tool async for tool in client.iter_tools()}
    assert set(tools) == {"echo", "consult", "emit_logs", "bump_note"}
    assert tools["consult"].input_schema["required"] == ["topic"]
    assert isinstance(tools["consult"].output_schema, dict)
    assert tools["consult"].output_schema["title"] == "Report"

    result = await client.call_tool("consult", {"topic": "testing"})
    assert result.is_error is not True, result
    report = {
        "topic": "testing",
        "roots": ["work=file:///work"],
        "advice": ADVICE,
        "model": "mock-model",
        "stop_reason": "endTurn",
        "action": "accept",
        "approval": {"approved": True, "comment": "ship it", "stars": 5},
    }
    assert result.structured_content == report
    [block] = result.content
    assert isinstance(block, TextContent)
    assert json.loads(block.text) == report
    [sampling] = peer.samplings
    assert as_json(sampling) == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Advise on testing"}}],
        "maxTokens": 64,
        "systemPrompt": "Be brief.",
        "temperature": 0.5,
    }
    [elicitation] = peer.elicitations
    assert elicitation.message == f"Apply this advice on testing? {ADVICE}"
    assert elicitation.mode in ("form", msgspec.UNSET)
    assert elicitation.requested_schema == APPROVAL_SCHEMA
    # mcpkit hands notifications to on_log in the order read, before the call's answer.
    assert log_lines(peer) == [
        ("info", "consulting on testing", "official"),
        ("debug", f"the model said {ADVICE!r}", "official"),
        ("notice", "the user chose accept", "official"),
    ]

    # New roots (set_roots sends roots/list_changed; the tool asks again) and a declined form.
    await client.set_roots([Root(uri="file:///a", name="a"), Root(uri="file:///b")])
    peer.answer = ElicitResult(action="decline")
    result = await client.call_tool("consult", {"topic": "roots"})
    assert result.structured_content == {
        **report,
        "topic": "roots",
        "roots": ["a=file:///a", "file:///b"],
        "action": "decline",
        "approval": None,
    }
    assert log_lines(peer) == [
        ("info", "consulting on roots", "official"),
        ("debug", f"the model said {ADVICE!r}", "official"),
        ("notice", "the user chose decline", "official"),
    ]


async def check_logging(client: Client, peer: OurPeer) -> None:
    """logging/setLevel and notifications/message (the fixture filters by level)."""
    result = await client.call_tool("emit_logs", {})
    assert result.content == [TextContent(text="logged at debug and above")]
    assert log_lines(peer) == [(level, f"{level} message", "official") for level in LEVELS]
    await client.set_logging_level("warning")
    result = await client.call_tool("emit_logs", {})
    assert result.content == [TextContent(text="logged at warning and above")]
    assert log_lines(peer) == [(level, f"{level} message", "official") for level in LEVELS[3:]]


async def check_official_resources(client: Client, peer: OurPeer) -> None:
    resources = [resource async for resource in client.iter_resources()]
    assert [(r.uri, r.name, r.title, r.description, r.mime_type) for r in resources] == [
        ("notes://readme", "readme", "Read me", "A text resource", "text/plain"),
        ("notes://logo", "logo", msgspec.UNSET, "A binary resource", "image/png"),
        ("notes://counter", "counter", msgspec.UNSET, "Changes with bump_note", "text/plain"),
    ]
    [template] = [template async for template in client.iter_resource_templates()]
    assert (template.uri_template, template.name, template.mime_type) == (
        "notes://items/{item_id}",
        "item",
        "application/json",
    )

    readme = await client.read_resource("notes://readme")
    assert readme.contents == [
        ResourceContents(
            uri="notes://readme", mime_type="text/plain", text="Read me first: ünïcödé ✓"
        )
    ]
    logo = await client.read_resource("notes://logo")
    [contents] = logo.contents
    assert contents.mime_type == "image/png"
    assert isinstance(contents.blob, str)
    assert base64.b64decode(contents.blob) == LOGO
    item = await client.read_resource("notes://items/2")
    assert item.contents == [
        ResourceContents(
            uri="notes://items/2",
            mime_type="application/json",
            text='{"id": "2", "label": "second item"}',
        )
    ]
    with pytest.raises(RPCError) as missing:
        await client.read_resource("notes://nope")
    # mcp 2.3.0 answers with 2026-07-28's code (SEP-2164) at every revision.
    assert missing.value.code == -32602
    assert missing.value.data == {"uri": "notes://nope"}

    counter = "notes://counter"
    await client.subscribe_resource(counter)
    result = await client.call_tool("bump_note", {})
    assert result.content == [TextContent(text="bumped to 1 (notified)")]
    # The server sent the update before its answer; mcpkit handled it before returning.
    assert peer.updated == [counter]
    assert (await client.read_resource(counter)).contents[0].text == "bumps: 1"
    await client.unsubscribe_resource(counter)
    result = await client.call_tool("bump_note", {})
    assert result.content == [TextContent(text="bumped to 2")]
    await client.ping()
    assert peer.updated == [counter]


async def check_official_prompts(client: Client) -> None:
    prompts = {prompt.name: prompt async for prompt in client.iter_prompts()}
    assert list(prompts) == ["greet", "review_code"]
    assert prompts["greet"].title == "Greeting"
    assert prompts["greet"].arguments == [
        PromptArgument(name="name", description="Who to greet", required=True),
        PromptArgument(name="style", description="plain, formal or pirate", required=False),
    ]
    assert prompts["review_code"].arguments == [
        PromptArgument(name="code", description="The code", required=True),
        PromptArgument(name="language", description="Its language", required=True),
    ]
    greeting = await client.get_prompt("greet", {"name": "Ada"})
    assert greeting.description == "Greet someone"
    assert greeting.messages == [
        PromptMessage(role="user", content=TextContent(text="Greet Ada in a plain style."))
    ]
    pirate = await client.get_prompt("greet", {"name": TRICKY_TEXT, "style": "pirate"})
    assert pirate.messages == [
        PromptMessage(
            role="user", content=TextContent(text=f"Greet {TRICKY_TEXT} in a pirate style.")
        )
    ]
    review = await client.get_prompt("review_code", {"code": "x = 1", "language": "python"})
    assert review.messages == [
        PromptMessage(role="user", content=TextContent(text="Review this python code:\nx = 1")),
        PromptMessage(role="assistant", content=TextContent(text="I will look for bugs first.")),
    ]


async def check_official_completion(client: Client) -> None:
    assert await client.complete_prompt_argument("greet", "style", "p") == ["plain", "pirate"]
    languages = await client.complete_prompt_argument("review_code", "language", "")
    assert languages == ["python", "rust", "typescript"]
    snippets = await client.complete_prompt_argument(
        "review_code", "code", "", context={"language": "rust"}
    )
    assert snippets == ["fn main() {}", 'println!("hi");']
    template = ResourceTemplateReference(uri="notes://items/{item_id}")
    completed = await client.complete(template, "item_id", "1")
    assert as_json(completed) == {
        "completion": {"values": ["1", "10"], "total": 2, "hasMore": False}
    }


def official_everything_transport(stderr_lines: list[str]) -> StdioTransport:
    return StdioTransport(
        sys.executable,
        [str(OFFICIAL_EVERYTHING)],
        cwd=ROOT,
        stderr="capture",
        on_stderr=stderr_lines.append,
    )


@pytest.mark.anyio
async def test_mcpkit_client_drives_official_everything_server() -> None:
    stderr_lines: list[str] = []
    peer = OurPeer()
    with anyio.fail_after(TIMEOUT):
        async with Client(
            official_everything_transport(stderr_lines), era="handshake", **peer.options()
        ) as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info.name == "official-everything"
            assert client.server_info.version == "2.3.0-interop"
            assert (
                client.instructions == "The official SDK's everything server, for mcpkit's client."
            )
            assert as_json(client.server_capabilities) == {
                "logging": {},
                "completions": {},
                "prompts": {"listChanged": False},
                "resources": {"subscribe": True, "listChanged": False},
                "tools": {"listChanged": False},
            }
            await client.ping()
            echoed = await client.call_tool("echo", {"text": TRICKY_TEXT})
            assert echoed.content == [TextContent(text=TRICKY_TEXT)]
            assert echoed.structured_content == {"result": TRICKY_TEXT}
            await check_callbacks_tool(client, peer)
            await check_logging(client, peer)
            await check_official_resources(client, peer)
            await check_official_prompts(client)
            await check_official_completion(client)
            await client.ping()
    assert peer.logs == []
    assert_no_tracebacks(stderr_lines)


@pytest.mark.anyio
async def test_mcpkit_client_refuses_elicitation_before_2025_06_18() -> None:
    # mcp 2.3.0's server sends elicitation/create whatever the client declared. At
    # 2025-03-26 the method does not exist and mcpkit's client (rightly) declares no
    # elicitation capability even with a callback, so it must answer -32601 without calling
    # the callback (ClientHandlers.handle_request: "-32601 for a method this client does
    # not serve (capability not declared)"). The official server then fails the tool call
    # with that error.
    stderr_lines: list[str] = []
    peer = OurPeer()
    transport = official_everything_transport(stderr_lines)
    with anyio.fail_after(TIMEOUT):
        async with Client(transport, protocol_version="2025-03-26", **peer.options()) as client:
            with pytest.raises(RPCError) as refused:
                await client.call_tool("consult", {"topic": "old"})
            assert refused.value.code == -32601
            assert "elicitation/create" in refused.value.message
            assert len(peer.samplings) == 1  # what came before the elicitation was served
            assert peer.elicitations == []
            # The connection is fine afterwards.
            echoed = await client.call_tool("echo", {"text": "still here"})
            assert echoed.content == [TextContent(text="still here")]
    assert_no_tracebacks(stderr_lines)
