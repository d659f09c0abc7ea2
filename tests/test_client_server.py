"""Client and low-level server together: in memory and over stdio, on asyncio and trio."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import (
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
    ToolError,
)
from mcpkit.server import LowLevelServer, RequestContext, ToolHandler
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CallToolResult,
    ImageContent,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    TextContent,
    Tool,
)

pytestmark = pytest.mark.anyio


def build_server(**options: Any) -> LowLevelServer:
    server = LowLevelServer("test", "1.2.3", instructions="Be nice.", **options)
    schema = {"type": "object"}

    async def add(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        total = args["a"] + args["b"]
        return CallToolResult(
            content=[TextContent(text=str(total))], structured_content={"sum": total}
        )

    async def progress(ctx: RequestContext, args: dict[str, Any]) -> str:
        for step in range(1, 4):
            await ctx.report_progress(step, 3, f"step {step}")
        return "done"

    async def logs(ctx: RequestContext, args: dict[str, Any]) -> str:
        await ctx.log("debug", "hidden unless debug")
        await ctx.log("info", {"event": "visible"}, logger="tests")
        return "logged"

    async def picture(ctx: RequestContext, args: dict[str, Any]) -> list[ImageContent]:
        return [ImageContent(data="aGk=", mime_type="image/png")]

    async def fails(ctx: RequestContext, args: dict[str, Any]) -> str:
        raise ToolError("nope, said the tool")

    async def crashes(ctx: RequestContext, args: dict[str, Any]) -> str:
        return str(1 / 0)

    async def protocol_error(ctx: RequestContext, args: dict[str, Any]) -> str:
        raise RPCError(-32602, "bad arguments", {"field": "x"})

    async def forever(ctx: RequestContext, args: dict[str, Any]) -> str:
        await anyio.sleep_forever()
        raise AssertionError

    async def not_json(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[], structured_content={"x": math.nan})

    handlers: list[tuple[str, ToolHandler]] = [
        ("add", add),
        ("progress", progress),
        ("logs", logs),
        ("picture", picture),
        ("fails", fails),
        ("crashes", crashes),
        ("protocol_error", protocol_error),
        ("forever", forever),
        ("not_json", not_json),
    ]
    for name, handler in handlers:
        server.add_tool(Tool(name=name, input_schema=schema, description=f"{name} tool"), handler)
    return server


@asynccontextmanager
async def connected(**client_options: Any) -> AsyncIterator[Client]:
    async with connect_memory(build_server(), **client_options) as client:
        yield client


async def test_initialize_exposes_server_identity() -> None:
    async with connected(era="handshake") as client:
        assert client.server_info.name == "test"
        assert client.server_info.version == "1.2.3"
        assert client.instructions == "Be nice."
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tools is not msgspec.UNSET
        await client.ping()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_client_can_ask_for_each_version(version: str) -> None:
    async with connected(protocol_version=version) as client:
        assert client.protocol_version == version


async def test_client_rejects_a_version_it_does_not_support() -> None:
    server = LowLevelServer("new-only", supported_versions=["2025-11-25"])
    with pytest.raises(RemoteProtocolError, match="2025-11-25"):
        async with connect_memory(
            server, protocol_version="2024-11-05", supported_versions=["2024-11-05"]
        ):
            pass


async def test_tools() -> None:
    async with connected() as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[:3] == ["add", "progress", "logs"]
        result = await client.call_tool("add", {"a": 2, "b": 40})
        assert result.content == [TextContent(text="42")]
        assert result.structured_content == {"sum": 42}
        picture = await client.call_tool("picture")
        assert picture.content == [ImageContent(data="aGk=", mime_type="image/png")]


async def test_raise_on_error_raises_the_tools_error() -> None:
    async with connected() as client:
        with pytest.raises(ToolError, match=r"^nope, said the tool$") as failed:
            await client.call_tool("fails", raise_on_error=True)
        assert failed.value.result is not None
        assert failed.value.result.is_error is True
        with pytest.raises(ToolError, match="division by zero"):
            await client.call_tool("crashes", raise_on_error=True)
        # A tool that succeeds returns its result as without it; without it, errors return.
        added = await client.call_tool("add", {"a": 1, "b": 2}, raise_on_error=True)
        assert added.structured_content == {"sum": 3}
        assert (await client.call_tool("fails")).is_error is True


async def test_tool_errors() -> None:
    async with connected() as client:
        failed = await client.call_tool("fails")
        assert failed.is_error is True
        assert failed.content == [TextContent(text="nope, said the tool")]
        crashed = await client.call_tool("crashes")
        assert crashed.is_error is True
        assert isinstance(crashed.content[0], TextContent)
        assert "division by zero" in crashed.content[0].text
        assert "Traceback" not in crashed.content[0].text
        with pytest.raises(RPCError) as info:
            await client.call_tool("protocol_error")
        assert (info.value.code, info.value.data) == (-32602, {"field": "x"})
        with pytest.raises(RPCError) as unknown:
            await client.call_tool("missing")
        assert unknown.value.code == -32602
        with pytest.raises(RPCError) as nan:
            await client.call_tool("not_json")
        assert nan.value.code == -32603
        # The connection is still fine after all of that.
        assert (await client.call_tool("add", {"a": 1, "b": 1})).content == [TextContent(text="2")]


async def test_progress_callback() -> None:
    seen: list[tuple[float, float | msgspec.UnsetType, str | msgspec.UnsetType]] = []

    def record(p: ProgressNotificationParams) -> None:
        seen.append((p.progress, p.total, p.message))

    async with connected() as client:
        result = await client.call_tool("progress", on_progress=record)
    assert result.content == [TextContent(text="done")]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_logging_respects_level() -> None:
    records: list[LoggingMessageNotificationParams] = []

    async with connected(era="handshake", on_log=records.append) as client:
        await client.call_tool("logs")
        await client.set_logging_level("debug")
        await client.call_tool("logs")
    levels = [r.level for r in records]
    assert levels == ["info", "debug", "info"]
    assert records[0].data == {"event": "visible"}
    assert records[0].logger == "tests"


@pytest.mark.parametrize("level", ["debug", "info", "warning", "error"])
async def test_the_log_shortcuts_send_at_their_level(level: str) -> None:
    server = LowLevelServer("shortcuts", "1")

    async def shout(ctx: RequestContext, args: dict[str, Any]) -> str:
        sent = await getattr(ctx, level)({"said": level}, logger="app")
        return str(sent)

    server.add_tool(Tool(name="shout", input_schema={"type": "object"}), shout)
    records: list[LoggingMessageNotificationParams] = []
    async with Client(server, era="handshake", on_log=records.append) as client:
        await client.set_logging_level("debug")
        result = await client.call_tool("shout")
    assert result.content == [TextContent(text="True")]
    assert [(r.level, r.data, r.logger) for r in records] == [(level, {"said": level}, "app")]


MISUSED: list[tuple[str, Any, str]] = [
    ("call_tool", [1, 2], "arguments must be a mapping of names to values (a dict), not list"),
    ("call_tool", "text=hi", "arguments must be a mapping of names to values (a dict), not str"),
    ("get_prompt", ["a"], "prompt arguments must be a mapping of names to values (a dict)"),
    ("get_prompt", {"city": 3}, "prompt arguments: values must be strings; 'city' is int"),
    ("complete", {"city": None}, "context: values must be strings; 'city' is NoneType"),
]


@pytest.mark.parametrize(("method", "values", "message"), MISUSED)
async def test_arguments_of_the_wrong_shape_are_refused_before_sending(
    method: str, values: Any, message: str
) -> None:
    from mcpkit.types import PromptReference

    async with connected(era="handshake") as client:
        if method == "complete":
            call = client.complete(PromptReference(name="p"), "city", "Pa", context=values)
        else:
            call = getattr(client, method)("add", values)
        with pytest.raises(LocalProtocolError, match=re.escape(message)):
            await call
        # Nothing was sent: the connection is as it was.
        assert (await client.call_tool("add", {"a": 1, "b": 2})).content == [TextContent(text="3")]


async def test_timeout_cancels_and_connection_survives() -> None:
    async with connected() as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("forever", timeout=0.05)
        assert (await client.call_tool("add", {"a": 1, "b": 2})).content == [TextContent(text="3")]


async def test_caller_cancellation_stops_the_call() -> None:
    async with connected() as client:
        with anyio.move_on_after(0.05) as scope:
            await client.call_tool("forever")
        assert scope.cancelled_caught
        await client.ping()


async def test_many_concurrent_calls() -> None:
    async with connected() as client:
        results: dict[int, str] = {}

        async def call(i: int) -> None:
            result = await client.call_tool("add", {"a": i, "b": 0})
            content = result.content[0]
            assert isinstance(content, TextContent)
            results[i] = content.text

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(call, i)
    assert results == {i: str(i) for i in range(200)}


async def test_pagination() -> None:
    server = build_server(page_size=2)
    async with connect_memory(server) as client:
        first = await client.list_tools()
        assert len(first.tools) == 2
        assert isinstance(first.next_cursor, str)
        names = [tool.name async for tool in client.iter_tools()]
    assert names == [tool.name for tool in server.tools]
    assert len(names) == 9


async def test_invalid_cursor_is_invalid_params() -> None:
    async with connect_memory(build_server(page_size=2)) as client:
        for cursor in ("garbage", "OTk5", ""):  # "OTk5" is base64 for an offset past the end
            with pytest.raises(RPCError) as info:
                await client.list_tools(cursor)
            assert info.value.code == -32602


async def test_custom_vendor_method() -> None:
    server = LowLevelServer("custom")

    class Params(msgspec.Struct):
        value: int

    async def double(ctx: RequestContext, params: Params) -> dict[str, int]:
        return {"value": params.value * 2}

    server.set_request_handler("acme/double", double, Params)

    class Result(msgspec.Struct):
        value: int

    async with connect_memory(server) as client:
        assert (await client.request("acme/double", {"value": 21}, Result)).value == 42
        with pytest.raises(RPCError) as bad:
            await client.request("acme/double", {"value": "x"}, Result)
        assert bad.value.code == -32602
        assert "value" in bad.value.message
        with pytest.raises(RPCError) as missing:
            await client.request("acme/unknown", {}, Result)
        assert missing.value.code == -32601


async def test_stdio_client_against_echo(echo_server_argv: list[str]) -> None:
    seen: list[float] = []
    with anyio.fail_after(20):
        async with Client(StdioTransport(echo_server_argv)) as client:
            assert client.server_info.name == "echo"
            assert [t.name async for t in client.iter_tools()] == ["echo", "blob", "sleep"]
            echoed = await client.call_tool("echo", {"text": "ünïcödé ✓"})
            assert echoed.content == [TextContent(text="ünïcödé ✓")]
            slept = await client.call_tool(
                "sleep", {"seconds": 0.35}, on_progress=lambda p: seen.append(p.progress)
            )
            assert slept.content == [TextContent(text="slept 0.35 s")]
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("sleep", {"seconds": 30}, timeout=0.2)
            await client.ping()
    assert len(seen) >= 2
    assert seen == sorted(seen)


# -- registration rules -----------------------------------------------------------------


async def _noop(ctx: RequestContext, params: Any) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize(
    "method",
    [
        "frobnicate",  # no vendor prefix
        "tools/frobnicate",  # MCP namespace, unknown to the SDK
        "notifications/whatever",
        "rpc.discover",
        "io.modelcontextprotocol/thing",
        "dev.mcp/thing",
        "mcp/thing",
        "initialize",  # built in
        "ping",
        "sampling/createMessage",  # sent by servers, not handled by them
        "/op",
        "9acme/op",
        "acme/",
    ],
)
def test_refused_method_names(method: str) -> None:
    with pytest.raises(LocalProtocolError):
        LowLevelServer("x").set_request_handler(method, _noop)


@pytest.mark.parametrize(
    "method", ["acme/op", "com.acme/op", "com.example.mcp/op", "tools/list", "prompts/get"]
)
def test_accepted_method_names(method: str) -> None:
    LowLevelServer("x").set_request_handler(method, _noop)


def test_notification_registered_as_request_is_refused() -> None:
    with pytest.raises(LocalProtocolError, match="notification"):
        LowLevelServer("x").set_request_handler("notifications/roots/list_changed", _noop)


async def _on_note(session: Any, params: Any) -> None:
    return None


@pytest.mark.parametrize(
    ("method", "reason"),
    [
        ("tools/list", "is an MCP request, not a notification"),
        ("notifications/initialized", "handled by mcpkit itself"),
        ("notifications/cancelled", "handled by mcpkit itself"),
        ("notifications/progress", "handled by mcpkit itself"),
        ("notifications/message", "sent by servers"),  # servers send log messages
        ("notifications/whatever", "vendor prefix"),  # MCP namespace, unknown to the SDK
        ("changed", "vendor prefix"),
        ("rpc.notify", "vendor prefix"),
    ],
)
def test_refused_notification_names(method: str, reason: str) -> None:
    with pytest.raises(LocalProtocolError, match=reason):
        LowLevelServer("x").set_notification_handler(method, _on_note)


@pytest.mark.parametrize("method", ["acme/changed", "notifications/roots/list_changed"])
def test_accepted_notification_names(method: str) -> None:
    LowLevelServer("x").set_notification_handler(method, _on_note)


@pytest.mark.parametrize("name", ["", "has space", "x" * 129, "slash/name", "ünï"])
def test_invalid_tool_names(name: str) -> None:
    async def tool(ctx: RequestContext, args: dict[str, Any]) -> str:
        return ""

    with pytest.raises(LocalProtocolError):
        LowLevelServer("x").add_tool(Tool(name=name, input_schema={"type": "object"}), tool)


def test_duplicate_tool_name() -> None:
    async def tool(ctx: RequestContext, args: dict[str, Any]) -> str:
        return ""

    server = LowLevelServer("x")
    server.add_tool(Tool(name="a.b-c_1", input_schema={"type": "object"}), tool)
    with pytest.raises(LocalProtocolError):
        server.add_tool(Tool(name="a.b-c_1", input_schema={"type": "object"}), tool)


@pytest.mark.parametrize(
    "schema",
    [{"type": "array"}, {"properties": {"q": {"type": "string"}}}, {"type": ["object", "null"]}],
)
def test_an_input_schema_must_describe_an_object(schema: dict[str, Any]) -> None:
    """Every revision's schema.json requires ``inputSchema.type == "object"``: one tool
    without it made strict clients (the TypeScript SDK) refuse the whole tools/list."""

    async def tool(ctx: RequestContext, args: dict[str, Any]) -> str:
        return ""

    server = LowLevelServer("x")
    with pytest.raises(LocalProtocolError, match=r"tool 'bad': .*\"type\": \"object\""):
        server.add_tool(Tool(name="bad", input_schema=schema), tool)
    assert server.tools == []


CHECKED_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}


async def test_arguments_are_checked_against_the_input_schema() -> None:
    """Servers MUST validate tool inputs (server/tools.mdx, "Security Considerations"): a
    call that breaks the schema is a tool error, as the decorator API reports it, and the
    handler never runs."""
    from mcpkit.server import Server

    server = LowLevelServer("checked")
    ran: list[dict[str, Any]] = []

    async def handler(ctx: RequestContext, args: dict[str, Any]) -> str:
        ran.append(args)
        return "ran"

    server.add_tool(Tool(name="checked", input_schema=CHECKED_SCHEMA), handler)
    app = Server("app")
    app.tool(name="checked", input_schema=CHECKED_SCHEMA)(lambda **arguments: "ran")
    async with connect_memory(server) as low, connect_memory(app) as high:
        for bad in ({}, {"q": 5}, {"q": "x", "z": 1}):
            refused = await low.call_tool("checked", bad)
            assert refused.is_error is True
            assert isinstance(refused.content[0], TextContent)
            assert refused.content[0].text.startswith("Invalid arguments: ")
            assert refused.content == (await high.call_tool("checked", bad)).content
        assert (await low.call_tool("checked", {"q": "ok"})).content == [TextContent(text="ran")]
    assert ran == [{"q": "ok"}]


async def test_validate_false_leaves_the_arguments_to_the_handler() -> None:
    server = LowLevelServer("unchecked")

    async def handler(ctx: RequestContext, args: dict[str, Any]) -> str:
        return repr(args)

    server.add_tool(Tool(name="unchecked", input_schema=CHECKED_SCHEMA), handler, validate=False)
    async with connect_memory(server) as client:
        result = await client.call_tool("unchecked", {"q": 5})
    assert result.content == [TextContent(text="{'q': 5}")]


def test_an_input_schema_that_cannot_be_compiled_is_refused() -> None:
    async def tool(ctx: RequestContext, args: dict[str, Any]) -> str:
        return ""

    broken = {"type": "object", "properties": {"q": {"type": "string", "pattern": "[a"}}}
    server = LowLevelServer("x")
    with pytest.raises(LocalProtocolError, match="tool 'bad'"):
        server.add_tool(Tool(name="bad", input_schema=broken), tool)
    assert server.tools == []


@pytest.mark.parametrize("mask", [False, True])
async def test_a_failing_tool_is_logged_and_can_be_masked(
    mask: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """As on Server: the traceback goes to the server's log, never to the client, and
    ``mask_errors=True`` keeps the exception's message (a secret, say) from the model."""
    # mask_errors given only to mask: the default is what this test checks otherwise.
    server = LowLevelServer("x", mask_errors=True) if mask else LowLevelServer("x")

    async def leaky(ctx: RequestContext, args: dict[str, Any]) -> str:
        raise RuntimeError("password=hunter2")

    async def leaves(ctx: RequestContext, args: dict[str, Any]) -> str:
        sys.exit(2)  # argparse does it on an option the model chose

    server.add_tool(Tool(name="leaky", input_schema={"type": "object"}), leaky)
    server.add_tool(Tool(name="leaves", input_schema={"type": "object"}), leaves)
    async with connect_memory(server) as client:
        leaked, left = await client.call_tool("leaky"), await client.call_tool("leaves")
    texts = []
    for result in (leaked, left):
        assert result.is_error is True
        assert isinstance(result.content[0], TextContent)
        texts.append(result.content[0].text)
    assert texts[0].startswith("Tool 'leaky' failed")
    assert ("hunter2" in texts[0]) is not mask
    assert "Traceback" not in texts[0]
    assert ("sys.exit(2)" in texts[1]) is not mask
    (logged,) = [r for r in caplog.records if "'leaky' failed" in r.getMessage()]
    assert logged.name == "mcpkit.server"
    assert logged.exc_info is not None
    assert "hunter2" in str(logged.exc_info[1])


def test_client_refuses_unsupported_requested_version() -> None:
    with pytest.raises(LocalProtocolError):
        Client(StdioTransport("x"), protocol_version="1999-01-01")


async def test_client_keeps_its_requests_under_the_server_cap() -> None:
    """More concurrent calls than the server accepts in flight wait on the client side."""
    server = LowLevelServer("capped", max_in_flight=4)

    async def slow(ctx: RequestContext, args: dict[str, Any]) -> str:
        await anyio.sleep(0.01)
        return "ok"

    server.add_tool(Tool(name="slow", input_schema={"type": "object"}), slow)
    async with connect_memory(server, max_concurrent_requests=4) as client:
        results: list[str] = []

        async def call() -> None:
            result = await client.call_tool("slow")
            content = result.content[0]
            assert isinstance(content, TextContent)
            results.append(content.text)

        async with anyio.create_task_group() as tg:
            for _ in range(40):
                tg.start_soon(call)
    assert results == ["ok"] * 40


async def test_client_connects_to_a_server_object_in_process() -> None:
    # Client(server): the in-memory connection, like the other SDKs' Client(server).
    from mcpkit.server import Server

    app = Server("app")

    @app.tool()
    def shout(text: str) -> str:
        return text.upper()

    for server in (build_server(), app):
        client = Client(server)
        for _ in range(2):  # a client may connect again: a new session each time
            async with client:
                assert client.server_info.name in ("test", "app")
                assert len(server.sessions) == 1
                if server is app:
                    result = await client.call_tool("shout", {"text": "hi"})
                    assert result.content == [TextContent(text="HI")]
            assert not server.sessions  # the in-process connection ended with the client


async def test_an_error_in_the_body_propagates_as_itself_from_an_in_process_client() -> None:
    with pytest.raises(KeyError, match="mine"):
        async with Client(build_server()):
            raise KeyError("mine")


@pytest.mark.parametrize("target", [object(), 42, b"http://127.0.0.1/mcp", None])
def test_client_refuses_what_it_cannot_connect_to(target: Any) -> None:
    # (a server-like object without serve() used to fail on entry with an AttributeError
    # from a background task, inside an exception group)
    with pytest.raises(LocalProtocolError, match="a Client connects to"):
        Client(target)


async def test_a_reconnected_client_forgets_the_last_servers_output_schemas() -> None:
    # The output schemas learned from the first connection's tools/list were kept: after
    # an upgrade the tool's plain result was refused as missing its structured content.
    from mcpkit.server import Server

    app = Server("upgraded")

    @app.tool(name="calc")
    def calc_v1() -> int:
        return 2

    client = Client(app, era="handshake")
    async with client:
        await client.list_tools()
        assert (await client.call_tool("calc")).structured_content == {"result": 2}
    app.remove_tool("calc")

    @app.tool(name="calc")
    def calc_v2() -> str:
        return "two"

    async with client:
        result = await client.call_tool("calc")
    assert result.content == [TextContent(text="two")]


def test_output_schemas_are_kept_for_a_bounded_number_of_tools() -> None:
    # A server with per-job tool names grew the table for the life of the client.
    from mcpkit.client._tool_checks import OutputChecks

    checks = OutputChecks()
    schema = {"type": "object", "required": ["n"]}
    for n in range(1100):
        tool = Tool(name=f"job{n}", input_schema={"type": "object"}, output_schema=schema)
        checks.learn([tool], "2025-11-25")
    wrong = CallToolResult(content=[], structured_content={})
    checks.check("job0", wrong, tolerant=False)  # forgotten: not checked any more
    with pytest.raises(RemoteProtocolError):
        checks.check("job1099", wrong, tolerant=False)
