"""The everything server: every tool, resource, template and prompt the official MCP
conformance harness (npm ``@modelcontextprotocol/conformance``, up to 0.2.0-alpha.12) calls
in the handshake era (protocol 2024-11-05 ... 2025-11-25), plus the tools of ``echo.py``.

Run it with ``mcpkit run examples/everything.py`` (stdio). The harness itself speaks
Streamable HTTP; once mcpkit has that transport, the same ``server`` object is served over it
unchanged (only ``mcpkit run``'s transport option changes): nothing below depends on the
transport, except where ``test_reconnection`` says so.

Tools (server scenarios ``tools-*``, ``json-schema-2020-12``, ``elicitation-sep1034-defaults``,
``elicitation-sep1330-enums``, ``server-sse-polling``)::

    test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
    test_multiple_content_types, test_tool_with_logging, test_tool_with_progress,
    test_error_handling, test_sampling {prompt}, test_elicitation {message},
    test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,
    json_schema_2020_12_tool, test_reconnection

Tools the harness's *client* scenarios call on their mock servers (``tools_call``,
``elicitation-sep1034-client-defaults``, ``json-schema-2020-12-preservation``), so that
``examples/conformance_client.py`` can be tested against this server::

    add_numbers {a, b}, test_client_elicitation_defaults, json_schema_echo {schema}

mcpkit extras, not called by the harness: ``test_list_roots`` (the client's roots) and
``test_watched_resource_update`` (changes test://watched-resource and notifies subscribers),
and the tools of ``echo.py``: ``echo {text}``, ``blob {size}``, ``sleep {seconds}``.

2026-07-28 multi round-trip tools (scenarios ``input-required-result-*``), which ask with the
same ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` / ``ctx.ask`` in both eras::

    test_input_required_result_{elicitation,sampling,list_roots,request_state,
    multiple_inputs,multi_round,tampered_state,capabilities}; prompt
    test_input_required_result_prompt

2026-07-28 scenario ``server-stateless`` (response streams and ``subscriptions/listen``)::

    test_streaming_elicitation, test_logging_tool, test_trigger_tool_change,
    test_trigger_prompt_change

Resources: test://static-text, test://static-binary, the template test://template/{id}/data
and test://watched-resource (subscribable). Prompts: test_simple_prompt,
test_prompt_with_arguments {arg1, arg2}, test_prompt_with_embedded_resource {resourceUri},
test_prompt_with_image. Completion: prompt arguments and template variables.

Payloads follow the harness's scenario texts (``src/scenarios/server/*.ts``) and its
reference server (``examples/servers/typescript/everything-server.ts``) exactly.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Final, Literal

import anyio
import msgspec
from msgspec import Meta

from mcpkit import CapabilityError, RPCError, ToolError
from mcpkit.server import RequestContext, Server
from mcpkit.types import (
    V2025_11_25,
    AudioContent,
    CompletionReference,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    PromptReference,
    ResourceContents,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)

__all__ = ["server"]

# A 1x1 PNG and a minimal WAV file, exactly as the harness's reference server sends them.
TEST_IMAGE_BASE64: Final = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "=="
)
TEST_AUDIO_BASE64: Final = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

#: The ``inputSchema`` of ``json_schema_2020_12_tool``, kept exactly as the harness's fixture
#: (``JSON_SCHEMA_2020_12_FIXTURE``: SEP-1613 ``$schema``/``$defs``/``additionalProperties``
#: and the SEP-2106 vocabulary ``$anchor``, ``allOf``/``anyOf``, ``if``/``then``/``else``).
JSON_SCHEMA_2020_12_INPUT_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

#: SEP-1034: a default for every primitive type (the client scenario's form, verbatim).
DEFAULTS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

#: SEP-1330: the five enum shapes (``client/elicitation.mdx`` 2025-11-25).
ENUMS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}

#: ``tools_call``: the mock server's ``add_numbers`` definition, verbatim.
ADD_NUMBERS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "a": {"type": "number", "description": "First number"},
        "b": {"type": "number", "description": "Second number"},
    },
    "required": ["a", "b"],
}

MAX_BLOB: Final = 16 * 1024 * 1024
MAX_SLEEP: Final = 3600.0
WATCHED_URI: Final = "test://watched-resource"
PROMPT_ARGUMENT_VALUES: Final = ("paris", "park", "party", "testValue1", "testValue2")
TEMPLATE_IDS: Final = ("1", "2", "3", "42", "123")


class DefaultsForm(msgspec.Struct):
    """SEP-1034's form as a type: each field's default becomes the property's ``default``
    (mcpkit's typed elicitation; the schema equals :data:`DEFAULTS_SCHEMA`'s properties)."""

    name: Annotated[str, Meta(description="User name")] = "John Doe"
    age: Annotated[int, Meta(description="User age")] = 30
    score: Annotated[float, Meta(description="User score")] = 95.5
    status: Annotated[Literal["active", "inactive", "pending"], Meta(description="User status")] = (
        "active"
    )
    verified: Annotated[bool, Meta(description="Verification status")] = True


class WatchedResource:
    """The mutable state behind test://watched-resource."""

    def __init__(self) -> None:
        self.updates = 0

    @property
    def text(self) -> str:
        if self.updates == 0:
            return "Watched resource content"
        return f"Watched resource content (update {self.updates})"


watched = WatchedResource()

server = Server(
    "mcp-conformance-test-server",
    "1.0.0",
    instructions="The MCP conformance everything-server, built on mcpkit.",
)


def _json(value: Any) -> str:
    """JSON the way the harness's reference server prints it (``JSON.stringify``)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _js_number(value: float) -> str:
    """A number as JavaScript prints it: ``5`` rather than ``5.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


_DEFAULT_KINDS: Final = {
    "name": "string",
    "age": "number",
    "score": "number",
    "status": "string",
    "verified": "boolean",
}


def _is_kind(value: Any, kind: str) -> bool:
    """Whether an elicited value has the JSON type ``kind`` (``typeof`` as the harness
    checks it: an integer is a number)."""
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _require_2025_11_25(ctx: RequestContext, feature: str) -> None:
    """SEP-1034 defaults and SEP-1330 enum shapes exist from 2025-11-25 (the harness's
    scenarios start there); an older client would get a form its schema does not allow."""
    version = ctx.protocol_version or ""
    if version < V2025_11_25:
        raise ToolError(f"{feature} needs protocol version 2025-11-25, not {version}")


# -- tools: content ---------------------------------------------------------------------


@server.tool()
async def test_simple_text() -> str:
    """Tests simple text content response"""
    return "This is a simple text response for testing."


@server.tool()
async def test_image_content() -> ImageContent:
    """Tests image content response"""
    return ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png")


@server.tool()
async def test_audio_content() -> AudioContent:
    """Tests audio content response (shown as a text note to 2024-11-05 clients, which have
    no audio content)"""
    return AudioContent(data=TEST_AUDIO_BASE64, mime_type="audio/wav")


@server.tool()
async def test_embedded_resource() -> EmbeddedResource:
    """Tests embedded resource content response"""
    return EmbeddedResource(
        resource=ResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@server.tool()
async def test_multiple_content_types() -> list[ContentBlock]:
    """Tests response with multiple content types (text, image, resource)"""
    return [
        TextContent(text="Multiple content types test:"),
        ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png"),
        EmbeddedResource(
            resource=ResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text=_json({"test": "data", "value": 123}),
            )
        ),
    ]


@server.tool()
async def test_error_handling() -> str:
    """Tests error response handling"""
    raise ToolError("This tool intentionally returns an error for testing")


# -- tools: notifications during a call ---------------------------------------------------


@server.tool()
async def test_tool_with_logging(ctx: RequestContext) -> str:
    """Tests tool that emits log messages during execution"""
    # Three info messages about 50 ms apart, while the call is in flight.
    await ctx.log("info", "Tool execution started")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await anyio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool()
async def test_tool_with_progress(ctx: RequestContext) -> str:
    """Tests tool that reports progress notifications"""
    # Without a progress token nothing is sent, but the delays are the same.
    await ctx.report_progress(0, 100)
    await anyio.sleep(0.05)
    await ctx.report_progress(50, 100)
    await anyio.sleep(0.05)
    await ctx.report_progress(100, 100)
    token = ctx.progress_token
    return f"Progress reported with token {token!r}" if token is not None else "No progress token"


@server.tool()
async def test_reconnection(ctx: RequestContext) -> str:
    """Tests SSE stream disconnection and client reconnection (SEP-1699). Over Streamable
    HTTP the server closes the stream mid-call and sends the result after the client
    reconnects."""
    # Over Streamable HTTP: end this request's SSE connection (after its priming event) so
    # the client reconnects with GET + Last-Event-ID, honouring the retry delay; the result
    # then arrives on the resumed stream. Elsewhere (stdio, memory) there is nothing to
    # close and the call simply completes.
    if ctx.close_sse_stream():
        await anyio.sleep(0.1)  # as the reference server: finish while the client is away
    return (
        "Reconnection test completed successfully. If you received this, the client "
        "properly reconnected after stream closure."
    )


# -- tools: requests to the client ----------------------------------------------------------


@server.tool()
async def test_missing_capability(ctx: RequestContext) -> str:
    """Needs the client's sampling capability: a 2026-07-28 request that does not declare
    it gets -32021 MissingRequiredClientCapability (the error is not caught here)."""
    result = await ctx.sample("Say hello.", max_tokens=10)
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return next((b.text for b in blocks if isinstance(b, TextContent)), "")


@server.tool()
async def test_sampling(ctx: RequestContext, prompt: str) -> str:
    """Tests server-initiated sampling (LLM completion request)

    Args:
        prompt: The prompt to send to the LLM
    """
    try:
        result = await ctx.sample(prompt, max_tokens=100)
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Sampling not supported or error: {exc}") from None
    blocks = result.content if isinstance(result.content, list) else [result.content]
    text = next((b.text for b in blocks if isinstance(b, TextContent)), "No response")
    return f"LLM response: {text}"


@server.tool()
async def test_elicitation(ctx: RequestContext, message: str) -> str:
    """Tests server-initiated elicitation (user input request)

    Args:
        message: The message to show the user
    """
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    try:
        answer = await ctx.elicit(message, schema)
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Elicitation not supported or error: {exc}") from None
    return f"User response: action={answer.action}, content={_json(answer.data or {})}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: RequestContext) -> str:
    """Tests elicitation with default values per SEP-1034"""
    _require_2025_11_25(ctx, "SEP-1034 elicitation defaults")
    try:
        answer = await ctx.elicit(
            "Please review and update the form fields with defaults", DefaultsForm
        )
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Elicitation not supported or error: {exc}") from None
    content = msgspec.to_builtins(answer.data) if answer.data is not None else {}
    return f"Elicitation completed: action={answer.action}, content={_json(content)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: RequestContext) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330"""
    _require_2025_11_25(ctx, "SEP-1330 enum schemas")
    try:
        answer = await ctx.elicit("Please select options from the enum fields", ENUMS_SCHEMA)
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Elicitation not supported or error: {exc}") from None
    return f"Elicitation completed: action={answer.action}, content={_json(answer.data or {})}"


@server.tool()
async def test_client_elicitation_defaults(ctx: RequestContext) -> str:
    """Tests that client applies defaults for omitted elicitation fields"""
    # The tool of the harness's ``elicitation-sep1034-client-defaults`` mock server: a
    # client that accepts must send every field, its default filled in (SEP-1034).
    _require_2025_11_25(ctx, "SEP-1034 elicitation defaults")
    try:
        answer = await ctx.elicit(
            "Test client default value handling - please accept with defaults", DEFAULTS_SCHEMA
        )
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Elicitation error: {exc}") from None
    if not answer.accepted:
        raise ToolError(f"Expected action 'accept', got {answer.action!r}")
    content = answer.data or {}
    problems = [
        f"field {field!r} is {content.get(field)!r}, not a {kind}"
        if field in content
        else f"field {field!r} is missing: its default was not applied"
        for field, kind in _DEFAULT_KINDS.items()
        if not _is_kind(content.get(field), kind)
    ]
    if content.get("status") not in (None, "active", "inactive", "pending"):
        problems.append(f"status {content['status']!r} is not a member of the enum")
    if problems:
        raise ToolError("Client did not apply the defaults: " + "; ".join(problems))
    return f"Elicitation completed: {_json(content)}"


@server.tool()
async def test_list_roots(ctx: RequestContext) -> str:
    """Lists the client's roots (roots/list) as JSON (an mcpkit extra)"""
    try:
        roots = await ctx.list_roots()
    except (CapabilityError, RPCError) as exc:
        raise ToolError(f"Roots not supported or error: {exc}") from None
    return _json([msgspec.to_builtins(root) for root in roots])


# -- tools: schemas -------------------------------------------------------------------------


@server.tool(input_schema=JSON_SCHEMA_2020_12_INPUT_SCHEMA)
async def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features"""
    # Called with the arguments the schema allowed (mcpkit validates them against it,
    # $ref, allOf/anyOf and if/then/else included); echo back those that were given.
    given = {
        "name": name,
        "address": address,
        "contactMethod": contactMethod,
        "phone": phone,
        "email": email,
    }
    arguments = {key: value for key, value in given.items() if value is not None}
    return f"JSON Schema 2020-12 tool called with: {_json(arguments)}"


@server.tool(input_schema=ADD_NUMBERS_SCHEMA)
async def add_numbers(a: float, b: float) -> str:
    """Add two numbers together"""
    return f"The sum of {_js_number(a)} and {_js_number(b)} is {_js_number(a + b)}"


@server.tool()
async def json_schema_echo(
    schema: Annotated[
        dict[str, Any],
        Meta(
            description="The inputSchema the client observed for json_schema_2020_12_tool, "
            "passed back verbatim."
        ),
    ],
) -> str:
    """Echoes back an arbitrary JSON Schema object so the harness can observe what the
    client preserved."""
    return _json(schema)


# -- tools: echo.py -------------------------------------------------------------------------


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo back."}},
        "required": ["text"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)
async def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"size": {"type": "integer", "minimum": 0, "maximum": MAX_BLOB}},
        "required": ["size"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
)
async def blob(size: int) -> str:
    """Return a text block of exactly `size` characters."""
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_BLOB:
        raise ToolError(f"`size` must be an integer between 0 and {MAX_BLOB}")
    return "x" * size


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": MAX_SLEEP}},
        "required": ["seconds"],
        "additionalProperties": False,
    },
    annotations=ToolAnnotations(read_only_hint=True),
)
async def sleep(ctx: RequestContext, seconds: float) -> str:
    """Wait `seconds`, reporting progress every 0.1 s, then return."""
    deadline = anyio.current_time() + seconds
    elapsed = 0.0
    while (remaining := deadline - anyio.current_time()) > 0:
        await anyio.sleep(min(0.1, remaining))
        elapsed = min(seconds, seconds - max(0.0, deadline - anyio.current_time()))
        if ctx.progress_token is not None and remaining > 0.1:
            await ctx.report_progress(round(elapsed, 3), total=seconds, message="sleeping")
    return f"slept {seconds:g} s"


# -- tools: custom HTTP headers (2026-07-28, SEP-2243) --------------------------------------


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "Mirrored into Mcp-Param-Region",
                "x-mcp-header": "Region",
            },
            "priority": {
                "type": "integer",
                "description": "Mirrored into Mcp-Param-Priority (compared numerically)",
                "x-mcp-header": "Priority",
            },
            "verbose": {
                "type": "boolean",
                "description": "Mirrored into Mcp-Param-Verbose when given",
                "x-mcp-header": "Verbose",
            },
            "query": {"type": "string", "description": "Not mirrored"},
        },
        "required": ["region", "priority", "query"],
    },
)
async def test_custom_headers(**arguments: Any) -> str:
    """Echo the arguments; on Streamable HTTP 2026-07-28 the server has already checked
    that the Mcp-Param-Region / -Priority / -Verbose headers match them."""
    return _json(arguments)


# -- resources ------------------------------------------------------------------------------


@server.resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
async def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
async def static_binary() -> ResourceContents:
    # The payload as given (not re-encoded), so it is byte-for-byte the harness's PNG.
    return ResourceContents(
        uri="test://static-binary", mime_type="image/png", blob=TEST_IMAGE_BASE64
    )


@server.resource(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
)
async def template_data(id: str) -> str:
    return _json({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource(
    WATCHED_URI,
    name="watched-resource",
    title="Watched Resource",
    description="A resource clients can subscribe to; test_watched_resource_update changes it",
    mime_type="text/plain",
)
async def watched_resource() -> str:
    return watched.text


@server.tool()
async def test_watched_resource_update() -> str:
    """Changes test://watched-resource and sends notifications/resources/updated to the
    clients subscribed to it (an mcpkit extra)"""
    watched.updates += 1
    told = await server.notify_resource_updated(WATCHED_URI)
    return f"Updated {WATCHED_URI} (update {watched.updates}); notified {told} subscriber(s)"


# -- tools: multi round-trip requests (2026-07-28 scenarios input-required-result-*) ---------
# Each asks with the same ctx.elicit / ctx.sample / ctx.list_roots / ctx.ask as in the
# handshake era: there the questions are requests to the client; on 2026-07-28 they become
# an InputRequiredResult and the tool runs again when the client retries with the answers.

NAME_FORM: Final = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
CONFIRM_FORM: Final = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


def _sampled_text(result: Any) -> str:
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return next((b.text for b in blocks if isinstance(b, TextContent)), "no response")


@server.tool()
async def test_input_required_result_elicitation(ctx: RequestContext) -> str:
    """MRTR: asks the user's name (elicitation, input key user_name)"""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {(answer.data or {}).get('name', 'stranger')}!"


@server.tool()
async def test_input_required_result_sampling(ctx: RequestContext) -> str:
    """MRTR: asks the client's model a question (sampling)"""
    result = await ctx.sample("What is the capital of France?", max_tokens=100)
    return f"Sampling result: {_sampled_text(result)}"


@server.tool()
async def test_input_required_result_list_roots(ctx: RequestContext) -> str:
    """MRTR: asks for the client's roots"""
    roots = await ctx.list_roots()
    return f"Found {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_request_state(ctx: RequestContext) -> str:
    """MRTR: asks for a confirmation; the answer comes back with the sealed requestState"""
    answer = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    ok = (answer.data or {}).get("ok") is True
    return "state-ok: requestState validated" if ok else "state-not-confirmed"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: RequestContext) -> str:
    """MRTR: asks for a name, a sampled greeting and the roots at once"""
    name, greeting, roots = await ctx.ask(
        ctx.elicitation("What is your name?", NAME_FORM, key="user_name"),
        ctx.sampling("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.roots(key="client_roots"),
    )
    who = (name.data or {}).get("name", "stranger")
    return f"Name: {who}; Greeting: {_sampled_text(greeting)}; Roots: {len(roots)}"


@server.tool()
async def test_input_required_result_multi_round(ctx: RequestContext) -> str:
    """MRTR: asks twice, one question per round (name, then favourite colour)"""
    name = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    color = await ctx.elicit(
        "Step 2: What is your favorite color?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    who = (name.data or {}).get("name", "friend")
    return f"Multi-round complete for {who} who likes {(color.data or {}).get('color')}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: RequestContext) -> str:
    """MRTR: a tampered requestState is refused (-32602) before the tool runs again"""
    await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    return "integrity-ok: state verified"


@server.tool()
async def test_input_required_result_capabilities(ctx: RequestContext) -> str:
    """MRTR: asks only for what the client declared (elicitation and/or sampling)"""
    wanted = []
    if ctx.client_capabilities.elicitation is not msgspec.UNSET:
        form = {"type": "object", "properties": {"value": {"type": "string"}}}
        wanted.append(ctx.elicitation("Elicitation input", form, key="elicit_input"))
    if ctx.client_capabilities.sampling is not msgspec.UNSET:
        wanted.append(ctx.sampling("Sample request", max_tokens=50, key="sample_input"))
    if not wanted:
        return "No supported capabilities declared"
    await ctx.ask(*wanted)
    return f"capabilities-ok: received {','.join(str(r.key) for r in wanted)}"


# -- tools: 2026-07-28 scenario server-stateless (response and listen streams) --------------


@server.tool()
async def test_streaming_elicitation(ctx: RequestContext) -> str:
    """Diagnostic tool validating response progress streams: reports progress, then asks
    for a confirmation (on 2026-07-28 an input-required result, never a request of its own
    on the stream)"""
    await ctx.report_progress(50, 100)
    answer = await ctx.elicit("Continue streaming?", CONFIRM_FORM, key="confirm")
    return "Streaming complete" if (answer.data or {}).get("ok") is True else "Streaming stopped"


@server.tool()
async def test_logging_tool(ctx: RequestContext) -> str:
    """Diagnostic logging validator tool: logs only when the request opts in (2026-07-28
    _meta logLevel; in the handshake era, logging/setLevel)"""
    await ctx.log("info", "Diagnostic trace logging activated")
    return "Logging evaluated"


@server.tool()
async def test_trigger_tool_change() -> str:
    """Sends notifications/tools/list_changed to the listeners that asked for it"""
    server.notify_list_changed("tools")
    return "Mutation triggered"


@server.tool()
async def test_trigger_prompt_change() -> str:
    """Sends notifications/prompts/list_changed to the listeners that asked for it"""
    server.notify_list_changed("prompts")
    return "Mutation triggered"


# -- prompts --------------------------------------------------------------------------------


@server.prompt(title="Simple Test Prompt")
async def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@server.prompt(title="Prompt With Arguments")
async def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(title="Prompt With Embedded Resource")
async def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
    """A prompt that includes an embedded resource

    Args:
        resourceUri: URI of the resource to embed
    """
    return [
        PromptMessage(
            role="user",
            content=EmbeddedResource(
                resource=ResourceContents(
                    uri=resourceUri,
                    mime_type="text/plain",
                    text="Embedded resource content for testing.",
                )
            ),
        ),
        PromptMessage(
            role="user", content=TextContent(text="Please process the embedded resource above.")
        ),
    ]


@server.prompt(title="Prompt With Image")
async def test_prompt_with_image() -> list[PromptMessage]:
    """A prompt that includes image content"""
    return [
        PromptMessage(
            role="user", content=ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png")
        ),
        PromptMessage(role="user", content=TextContent(text="Please analyze the image above.")),
    ]


@server.prompt(title="Prompt Needing Input")
async def test_input_required_result_prompt(ctx: RequestContext) -> str:
    """MRTR: a prompt that asks the user for context first"""
    form = {
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"],
    }
    answer = await ctx.elicit("What context should the prompt use?", form, key="user_context")
    return f"Prompt with context: {(answer.data or {}).get('context')}"


# -- completion -----------------------------------------------------------------------------


@server.completion()
async def complete(
    ref: CompletionReference, argument: str, value: str, context: dict[str, str]
) -> list[str]:
    """Suggest values for test_prompt_with_arguments' arguments and for the template's
    ``id``, those starting with what was typed (the harness accepts any list)."""
    if isinstance(ref, PromptReference) and ref.name == "test_prompt_with_arguments":
        candidates: tuple[str, ...] = PROMPT_ARGUMENT_VALUES
    elif isinstance(ref, ResourceTemplateReference) and ref.uri == "test://template/{id}/data":
        candidates = TEMPLATE_IDS if argument == "id" else ()
    else:
        candidates = ()
    return [candidate for candidate in candidates if candidate.startswith(value)]
