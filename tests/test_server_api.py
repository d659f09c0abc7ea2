"""The decorator API end to end, in memory on asyncio and trio: tools, resources,
prompts, completion, notifications, elicitation/sampling/roots from the context, and what
each protocol revision gets to see."""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import json
import threading
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypedDict

import anyio
import anyio.to_thread
import msgspec
import pytest
from msgspec import UNSET

from mcpkit.exceptions import LocalProtocolError, RPCError, ToolError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import (
    AudioContent,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    ImageContent,
    PromptMessage,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    Root,
    TextContent,
    ToolAnnotations,
)

pytestmark = pytest.mark.anyio


class Point(msgspec.Struct):
    x: int
    y: int


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Profile(msgspec.Struct):
    name: str
    age: int = 30
    role: Literal["admin", "user"] = "user"
    color: Color = Color.RED


@dataclasses.dataclass
class Forecast:
    city: str
    temperatures: list[float]


class Address(TypedDict):
    street: str
    city: str


def build() -> Server:
    server = Server("api", "2.0", instructions="Test server.", page_size=2)
    main_thread = threading.get_ident()

    @server.tool()
    async def add(a: int, b: Annotated[int, msgspec.Meta(ge=0, description="Non-negative")]) -> int:
        """Add two numbers.

        Args:
            a: The first number.
        """
        return a + b

    @server.tool
    def blocking(seconds: float = 0.0) -> str:
        """A sync tool: runs in a worker thread."""
        return "thread" if threading.get_ident() != main_thread else "loop"

    @server.tool(title="Forecast", annotations=ToolAnnotations(read_only_hint=True))
    async def forecast(city: str, days: int = 2) -> Forecast:
        return Forecast(city, [20.5] * days)

    @server.tool()
    async def where(point: Point, address: Address | None = None) -> dict[str, Any]:
        return {"x": point.x, "y": point.y, "city": address["city"] if address else None}

    @server.tool()
    async def fails(mode: Literal["tool", "crash", "rpc"]) -> str:
        if mode == "tool":
            raise ToolError("told you so")
        if mode == "rpc":
            raise RPCError(-32099, "custom")
        raise RuntimeError("boom")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 5}},
            "required": ["n"],
            "additionalProperties": False,
        }
    )
    async def raw(n: int) -> str:
        return f"n={n}"

    @server.tool()
    async def media() -> list[Any]:
        return [
            AudioContent(data="UklG", mime_type="audio/wav"),
            ResourceLink(uri="test://x", name="x"),
            TextContent(text="t"),
        ]

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        answer = await ctx.elicit("Your profile?", Profile)
        if not answer.accepted or answer.data is None:
            return answer.action
        p = answer.data
        return f"{p.name}/{p.age}/{p.role}/{p.color.value}"

    @server.tool()
    async def think(ctx: RequestContext, prompt: str) -> str:
        result = await ctx.sample(prompt, max_tokens=20)
        content = result.content
        assert isinstance(content, TextContent)
        return content.text

    @server.tool()
    async def roots(ctx: RequestContext) -> list[str]:
        return [root.uri for root in await ctx.list_roots()]

    @server.resource("test://static", mime_type="text/plain", description="Static text")
    def static() -> str:
        return "static text"

    @server.resource("test://binary", mime_type="image/png")
    async def binary() -> bytes:
        return b"\x89PNG"

    @server.resource("users://{user_id}/profile")
    async def profile(user_id: int) -> str:
        return json.dumps({"id": user_id})

    @server.prompt()
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone."""
        return f"Hello {name} ({style})"

    @server.prompt()
    async def conversation(topic: str) -> list[Any]:
        return [
            PromptMessage(role="user", content=TextContent(text=f"Talk about {topic}")),
            ImageContent(data="aGk=", mime_type="image/png"),
            "plain text",
        ]

    @server.completion()
    async def complete(ref: Any, argument: str, value: str, context: dict[str, str]) -> list[str]:
        if isinstance(ref, PromptReference) and argument == "style":
            return [s for s in ["plain", "pirate", "poem"] if s.startswith(value)]
        if isinstance(ref, ResourceTemplateReference):
            return [str(i) for i in range(250)]
        return []

    return server


@asynccontextmanager
async def client(**options: Any) -> AsyncIterator[Any]:
    async with connect_memory(build(), **options) as c:
        yield c


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_capabilities_are_computed() -> None:
    async with client() as c:
        caps = c.server_capabilities
        assert caps.tools is not UNSET
        assert caps.tools.list_changed is True
        assert caps.resources is not UNSET
        assert caps.resources.subscribe is True
        assert caps.prompts is not UNSET
        assert caps.completions == {}
        assert caps.logging == {}


async def test_tool_schemas_from_type_hints() -> None:
    async with client() as c:
        tools = {t.name: t async for t in c.iter_tools()}
    add = tools["add"]
    assert add.description == "Add two numbers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.input_schema["properties"]["b"] == {
        "type": "integer",
        "minimum": 0,
        "description": "Non-negative",
    }
    assert add.input_schema["properties"]["a"]["description"] == "The first number."
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["forecast"].title == "Forecast"
    assert tools["forecast"].annotations == ToolAnnotations(read_only_hint=True)
    assert tools["raw"].input_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 5}},
        "required": ["n"],
        "additionalProperties": False,
    }
    assert tools["blocking"].output_schema is UNSET  # text results have no schema


async def test_structured_results() -> None:
    async with client() as c:
        result = await c.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        assert text(result) == '{"result":5}'
        forecast = await c.call_tool("forecast", {"city": "Oslo"})
        assert forecast.structured_content == {"city": "Oslo", "temperatures": [20.5, 20.5]}
        where = await c.call_tool(
            "where", {"point": {"x": 1, "y": 2}, "address": {"street": "s", "city": "c"}}
        )
        assert where.structured_content == {"x": 1, "y": 2, "city": "c"}


async def test_sync_tools_run_off_the_event_loop() -> None:
    async with client() as c:
        assert text(await c.call_tool("blocking")) == "thread"


@pytest.mark.parametrize(
    ("name", "arguments", "fragments"),
    [
        ("add", {"a": "1", "b": 2}, ["'a' must be an integer, got a string"]),
        ("add", {"a": 1, "b": -1}, ["'b' must be at least 0"]),
        ("add", {"a": 1}, ["missing required argument 'b'"]),
        ("add", {"a": 1, "b": 2, "c": 3}, ["unexpected argument 'c'"]),
        ("where", {"point": {"x": 1}}, ["point"]),
        ("raw", {"n": 9}, ["9"]),
        ("fails", {"mode": "tool"}, ["told you so"]),
        ("fails", {"mode": "crash"}, ["RuntimeError: boom"]),
    ],
)
async def test_tool_errors_are_results(
    name: str, arguments: dict[str, Any], fragments: list[str]
) -> None:
    async with client() as c:
        result = await c.call_tool(name, arguments)
    assert result.is_error is True
    for fragment in fragments:
        assert fragment in text(result)
    assert "Traceback" not in text(result)


async def test_rpc_errors_and_unknown_tools() -> None:
    async with client() as c:
        with pytest.raises(RPCError) as custom:
            await c.call_tool("fails", {"mode": "rpc"})
        assert custom.value.code == -32099
        with pytest.raises(RPCError) as unknown:
            await c.call_tool("nope")
        assert unknown.value.code == -32602


async def test_mask_errors() -> None:
    server = Server("masked", mask_errors=True)

    @server.tool()
    async def secret() -> str:
        raise RuntimeError("password=hunter2")

    async with connect_memory(server) as c:
        result = await c.call_tool("secret")
    assert result.is_error is True
    assert "hunter2" not in text(result)


async def test_resources_and_templates() -> None:
    async with client(era="handshake") as c:
        resources = [r async for r in c.iter_resources()]
        assert [r.uri for r in resources] == ["test://static", "test://binary"]
        assert resources[0].description == "Static text"
        templates = [t async for t in c.iter_resource_templates()]
        assert [t.uri_template for t in templates] == ["users://{user_id}/profile"]
        static = await c.read_resource("test://static")
        assert static.contents[0].text == "static text"
        assert static.contents[0].mime_type == "text/plain"
        binary = await c.read_resource("test://binary")
        assert binary.contents[0].blob == "iVBORw=="
        assert binary.contents[0].mime_type == "image/png"
        templated = await c.read_resource("users://42/profile")
        assert json.loads(templated.contents[0].text) == {"id": 42}
        assert templated.contents[0].uri == "users://42/profile"
        with pytest.raises(RPCError) as missing:
            await c.read_resource("test://missing")
        assert missing.value.code == -32002
        assert missing.value.data == {"uri": "test://missing"}
        with pytest.raises(RPCError) as bad:
            await c.read_resource("users://abc/profile")
        assert bad.value.code == -32602


@dataclasses.dataclass
class _Row:
    table: str
    id: int


class _Score(msgspec.Struct):
    value: float


_TEXT = ("text/plain", None)
# (what the resource function returns, the declared MIME type,
#  the contents read: [(mimeType, text or None for a blob)] or the -32603 message's part)
_RETURNS: list[tuple[Any, str | None, list[tuple[str, str | None]] | str]] = [
    ("hi", None, [("text/plain", "hi")]),
    (b"\x00", None, [("application/octet-stream", None)]),
    (["a", b"b"], None, [("text/plain", "a"), ("application/octet-stream", None)]),
    ([], None, []),
    ({"a": [1, None]}, None, [("application/json", '{"a":[1,null]}')]),
    ({"a": 1}, "application/vnd.acme+json", [("application/vnd.acme+json", '{"a":1}')]),
    ([{"a": 1}, {"a": 2}], None, [("application/json", '[{"a":1},{"a":2}]')]),
    ((1, 2.5), None, [("application/json", "[1,2.5]")]),
    (_Row("users", 7), None, [("application/json", '{"table":"users","id":7}')]),
    (_Score(0.5), None, [("application/json", '{"value":0.5}')]),
    (0, None, [("application/json", "0")]),
    (None, None, "returned None"),
    (["a", {"b": 1}], None, "a list mixing text, bytes or ResourceContents with data"),
    ({"x": float("nan")}, None, "NaN or infinity (the value.x)"),
    (_Score(float("inf")), None, "NaN or infinity (the value.value)"),
    (object(), None, "returned object, which JSON cannot represent"),
]


@pytest.mark.parametrize(("value", "mime", "expected"), _RETURNS, ids=repr)
async def test_what_a_resource_function_returns(
    value: Any, mime: str | None, expected: list[tuple[str, str | None]] | str
) -> None:
    """Text, bytes, ResourceContents or lists of them are parts; any other data is one
    JSON text part, as a tool's result; what JSON cannot carry is the server's error."""
    server = Server("returns")

    @server.resource("test://value", mime_type=mime)
    def read() -> Any:
        return value

    async with connect_memory(server, era="handshake") as c:
        if isinstance(expected, str):
            with pytest.raises(RPCError) as failed:
                await c.read_resource("test://value")
            assert failed.value.code == -32603
            assert expected in failed.value.message, failed.value.message
            assert "it returns text, bytes, ResourceContents or JSON data" in failed.value.message
            # The connection stays up for the next read.
            assert [r.uri async for r in c.iter_resources()] == ["test://value"]
            return
        read_result = await c.read_resource("test://value")
        got = [
            (part.mime_type, part.text if part.blob is UNSET else None)
            for part in read_result.contents
        ]
        assert got == expected


async def test_subscriptions_and_updates() -> None:
    updates: list[str] = []
    server = build()
    async with connect_memory(server, era="handshake", on_resource_updated=updates.append) as c:
        await c.subscribe_resource("test://static")
        assert await server.notify_resource_updated("test://static") == 1
        assert await server.notify_resource_updated("test://binary") == 0
        await c.ping()  # the notification is ahead of the ping's answer
        await c.unsubscribe_resource("test://static")
        assert await server.notify_resource_updated("test://static") == 0
        with pytest.raises(RPCError):
            await c.subscribe_resource("test://unknown")
    assert updates == ["test://static"]


async def test_subscriptions_per_client_are_bounded() -> None:
    server = Server("subs", max_subscriptions=2)

    @server.resource("notes://{+path}")
    def note(path: str) -> str:
        return path

    async with connect_memory(server, era="handshake") as c:
        await c.subscribe_resource("notes://a")
        await c.subscribe_resource("notes://b")
        await c.subscribe_resource("notes://a")  # held already: not one more
        with pytest.raises(RPCError) as refused:
            await c.subscribe_resource("notes://c")
        assert refused.value.code == -32602
        assert "Too many subscriptions" in refused.value.message
        assert refused.value.data == {"limit": 2}
        await c.unsubscribe_resource("notes://a")
        await c.subscribe_resource("notes://c")
        # And by size: 1 KiB of URI per allowed subscription, 2 KiB in all here.
        await c.unsubscribe_resource("notes://b")
        with pytest.raises(RPCError, match="Too many subscriptions"):
            await c.subscribe_resource("notes://" + "x" * 2040)
        await c.subscribe_resource("notes://" + "x" * 1000)
    with pytest.raises(LocalProtocolError):
        Server("subs", max_subscriptions=0)


async def test_list_changed_notifications() -> None:
    changes: list[str] = []
    server = build()
    async with connect_memory(server, era="handshake", on_list_changed=changes.append) as c:

        @server.tool()
        async def late() -> str:
            return "late"

        server.remove_tool("blocking")

        @server.prompt()
        def late_prompt() -> str:
            return "x"

        with anyio.fail_after(5):
            while len(changes) < 3:
                await c.ping()
        names = [t.name async for t in c.iter_tools()]
    assert "late" in names
    assert "blocking" not in names
    assert sorted(changes) == ["prompts", "tools", "tools"]  # sent in the background: any order


async def test_tools_registered_from_another_thread_are_announced() -> None:
    """A sync tool runs in a worker thread; one that loads a plugin (registering a tool
    from there, or from a thread of its own) makes the loop tell the clients."""
    changes: list[str] = []
    server = Server("plugins")
    loop_thread = threading.get_ident()
    threads: list[int] = []
    failures: list[Exception] = []

    @server.tool()
    def load(name: str, own_thread: bool) -> str:
        def register() -> None:
            threads.append(threading.get_ident())
            try:
                server.tool(name=name)(lambda: f"I am {name}")
            except Exception as exc:  # (a thread's exception would go unseen)
                failures.append(exc)

        if own_thread:
            thread = threading.Thread(target=register)
            thread.start()
            thread.join(5)
        else:
            register()
        return "loaded"

    async with connect_memory(server, era="handshake", on_list_changed=changes.append) as c:
        for name, own_thread in (("worker_plugin", False), ("thread_plugin", True)):
            loaded = await c.call_tool("load", {"name": name, "own_thread": own_thread})
            assert loaded.content == [TextContent(text="loaded")]
            assert failures == []
            with anyio.fail_after(5):
                while len(changes) < len(threads):
                    await c.ping()
            called = await c.call_tool(name)
            assert called.content == [TextContent(text=f"I am {name}")]
    assert changes == ["tools", "tools"]
    assert len(threads) == 2
    assert loop_thread not in threads


def test_a_tool_registered_from_a_thread_before_serving_needs_no_loop() -> None:
    server = Server("early")
    thread = threading.Thread(target=lambda: server.tool(name="early")(lambda: "x"))
    thread.start()
    thread.join(5)
    assert server.tool_registry.get("early") is not None


async def test_list_changed_only_for_lists_declared_at_initialize() -> None:
    # This client was told of tools only: prompts and resources appearing later are not
    # announced to it (capabilities are used only as negotiated, basic/lifecycle.mdx).
    changes: list[str] = []
    server = Server("tools-only")

    @server.tool()
    def first() -> str:
        return "first"

    async with connect_memory(server, era="handshake", on_list_changed=changes.append) as c:
        assert c.server_capabilities.prompts is UNSET
        assert c.server_capabilities.resources is UNSET

        @server.prompt()
        def late_prompt() -> str:
            return "x"

        @server.resource("test://late")
        def late_resource() -> str:
            return "x"

        @server.tool()
        def second() -> str:
            return "second"

        with anyio.fail_after(5):
            while not changes:
                await c.ping()
    assert changes == ["tools"]  # (sent in order: the others would have come first)


async def test_prompts() -> None:
    async with client() as c:
        prompts = {p.name: p async for p in c.iter_prompts()}
        greet = prompts["greet"]
        assert greet.description == "Greet someone."
        assert greet.arguments is not UNSET
        assert [(a.name, a.required) for a in greet.arguments] == [("name", True), ("style", False)]
        result = await c.get_prompt("greet", {"name": "Ada"})
        assert result.messages == [
            PromptMessage(role="user", content=TextContent(text="Hello Ada (plain)"))
        ]
        conversation = await c.get_prompt("conversation", {"topic": "cats"})
        assert [type(m.content).__name__ for m in conversation.messages] == [
            "TextContent",
            "ImageContent",
            "TextContent",
        ]
        with pytest.raises(RPCError) as missing:
            await c.get_prompt("greet", {})
        assert missing.value.code == -32602
        assert "name" in missing.value.message
        with pytest.raises(RPCError) as unknown:
            await c.get_prompt("nope")
        assert unknown.value.code == -32602


async def test_completion() -> None:
    async with client() as c:
        assert await c.complete_prompt_argument("greet", "style", "p") == [
            "plain",
            "pirate",
            "poem",
        ]
        result = await c.complete(
            ResourceTemplateReference(uri="users://{user_id}/profile"), "user_id", ""
        )
        assert len(result.completion.values) == 100
        assert result.completion.total == 250
        assert result.completion.has_more is True


async def test_pagination_everywhere() -> None:
    async with client() as c:
        first = await c.list_tools()
        assert len(first.tools) == 2
        assert isinstance(first.next_cursor, str)
        assert len([t async for t in c.iter_tools()]) == 10
        with pytest.raises(RPCError) as bad:
            await c.list_prompts("not-a-cursor")
        assert bad.value.code == -32602


async def test_elicitation_with_a_typed_form() -> None:
    seen: list[ElicitRequestParams] = []

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        return ElicitResult(
            action="accept", content={"name": "Ada", "role": "admin", "color": "blue"}
        )

    async with client(elicitation=fill, era="handshake") as c:
        assert text(await c.call_tool("ask")) == "Ada/30/admin/blue"
    schema = seen[0].requested_schema
    assert isinstance(schema, dict)
    assert schema["required"] == ["name"]
    assert schema["properties"]["role"] == {
        "enum": ["admin", "user"],
        "default": "user",
        "type": "string",
    }
    assert schema["properties"]["color"]["oneOf"] == [
        {"const": "red", "title": "Red"},
        {"const": "blue", "title": "Blue"},
    ]


async def test_elicitation_decline_and_bad_answers() -> None:
    async def decline(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="decline")

    async with client(elicitation=decline, era="handshake") as c:
        assert text(await c.call_tool("ask")) == "decline"

    async def wrong(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": 5})

    async with client(elicitation=wrong, era="handshake") as c:
        result = await c.call_tool("ask")
        assert result.is_error is True
        assert "does not match" in text(result)


async def test_sampling_and_roots_from_the_context() -> None:
    async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(text="42"), model="m")

    async with client(sampling=model, roots=[Root(uri="file:///w")], era="handshake") as c:
        assert text(await c.call_tool("think", {"prompt": "meaning?"})) == "42"
        assert (await c.call_tool("roots")).structured_content == {"result": ["file:///w"]}


@pytest.mark.parametrize(
    ("version", "audio", "link", "structured", "title"),
    [
        ("2024-11-05", False, False, False, False),
        ("2025-03-26", True, False, False, False),
        ("2025-06-18", True, True, True, True),
        ("2025-11-25", True, True, True, True),
    ],
)
async def test_what_each_revision_sees(
    version: str, audio: bool, link: bool, structured: bool, title: bool
) -> None:
    async with client(protocol_version=version) as c:
        media = await c.call_tool("media")
        kinds = [type(block).__name__ for block in media.content]
        assert ("AudioContent" in kinds) is audio
        assert ("ResourceLink" in kinds) is link
        assert len(kinds) == 3  # nothing is silently dropped: unsupported kinds become text
        added = await c.call_tool("add", {"a": 1, "b": 1})
        assert (added.structured_content is not UNSET) is structured
        assert text(added) == '{"result":2}'
        tools = {t.name: t async for t in c.iter_tools()}
        assert (tools["forecast"].title is not UNSET) is title
        assert (tools["add"].output_schema is not UNSET) is structured


def test_registration_errors() -> None:
    server = Server("errors")

    @server.tool()
    async def once() -> str:
        return ""

    with pytest.raises(LocalProtocolError):
        server.tool(name="once")(once)
    with pytest.raises(LocalProtocolError):
        server.tool(name="bad name")(once)
    # An empty name is refused, not taken as "use the function's name" (a second 'once').
    with pytest.raises(LocalProtocolError, match="name= must not be empty"):
        server.tool(name="")(once)
    with pytest.raises(LocalProtocolError, match="name= must not be empty"):
        server.tool(name="", input_schema={"type": "object"})(lambda **kwargs: "")
    # A lambda's __name__ is '<lambda>': say to name it, not that the name is invalid.
    with pytest.raises(LocalProtocolError, match="a lambda has no name of its own; pass name="):
        server.tool()(lambda: "")
    with pytest.raises(LocalProtocolError, match="a lambda has no name of its own; pass name="):
        server.prompt()(lambda: "")
    server.tool(name="named")(lambda: "")  # named, it is fine
    with pytest.raises(LocalProtocolError):

        @server.resource("users://{id}")
        def wrong_params(other: str) -> str:
            return ""

    with pytest.raises(LocalProtocolError):

        @server.resource("static://x")
        def needs_args(x: str) -> str:
            return ""

    with pytest.raises(LocalProtocolError):
        server.remove_tool("missing")


def test_a_hand_written_input_schema_must_describe_an_object() -> None:
    server = Server("x")
    with pytest.raises(LocalProtocolError, match=r"tool 'loose': .*\"type\": \"object\""):

        @server.tool(input_schema={"properties": {"q": {"type": "string"}}})
        def loose(**arguments: Any) -> str:
            return ""

    # Nothing was registered: the name is still free.
    server.tool(name="loose", input_schema={"type": "object"})(lambda **arguments: "")


def _first(a: str) -> str:
    return a


def _listed(x: list[str]) -> str:
    return ",".join(x)


def _raw(x: str) -> str:
    return x


def _maybe(a: str, b: str | None = None) -> str:
    return f"{a}{b}"


@pytest.mark.parametrize(
    ("uri", "fn", "why"),
    [
        # A variable the function does not take: every read would have failed with -32602.
        ("res://two/{a}/{b}", _first, "must be the variables"),
        ("res://dot/{a.b}", lambda: "", "must be the variables"),
        ("res://q/{a}{?b}", _first, "must be the variables"),
        # An exploded variable arrives as one string ("a,b"), never as a list.
        ("res://list/{x*}", _listed, "declare '_listed'"),
        # A static URI without a scheme is not a URI.
        ("", lambda: "", "needs a scheme"),
        ("not a uri", lambda: "", "needs a scheme"),
        ("notes.txt", lambda: "", "needs a scheme"),
    ],
)
def test_resources_that_could_never_be_read_are_refused(uri: str, fn: Any, why: str) -> None:
    with pytest.raises(LocalProtocolError, match=why):
        Server("refusals").resource(uri)(fn)


async def test_template_variables_bind_as_declared() -> None:
    server = Server("templates")
    with pytest.warns(UserWarning, match="stops at '/'"):
        server.resource("res://list/{x*}")(_raw)
    server.resource("res://q/{a}{?b}")(_maybe)
    async with connect_memory(server, era="handshake") as c:
        assert (await c.read_resource("res://list/a,b")).contents[0].text == "a,b"
        assert (await c.read_resource("res://q/x?b=y")).contents[0].text == "xy"
        assert (await c.read_resource("res://q/x")).contents[0].text == "xNone"


async def test_a_wildcard_style_template_warns_and_reserved_expansion_spans_segments() -> None:
    # FastMCP's {path*} matches across '/'; in RFC 6570 it is the explode modifier and a
    # simple value stops at '/': said at registration, with the template that works.
    server = Server("paths")
    with pytest.warns(UserWarning, match=r"\{path\*\} of 'files://\{path\*\}'.*use \{\+path\}"):
        server.resource("files://{path*}")(_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these warns
        server.resource("tree://{+path}")(_path)
        server.resource("segments:{/path*}")(_path)
        server.resource("query://q{?path*}")(_path)
    async with connect_memory(server, era="handshake") as c:
        assert (await c.read_resource("tree://a/b/c.txt")).contents[0].text == "a/b/c.txt"
        assert (await c.read_resource("segments:/a/b")).contents[0].text == "a/b"
        with pytest.raises(RPCError, match="not found"):
            await c.read_resource("files://a/b")
        assert (await c.read_resource("files://a")).contents[0].text == "a"


def _path(path: str) -> str:
    return path


async def test_python_logging_is_forwarded_during_requests() -> None:
    import logging

    server = Server("logs")
    log = logging.getLogger("tests.forwarded")
    log.setLevel(logging.DEBUG)
    handler = server.forward_logging(log, level=logging.DEBUG)

    @server.tool()
    async def in_loop() -> str:
        log.info("from the loop")
        log.debug("debug detail")
        return "ok"

    @server.tool()
    def in_thread() -> str:
        log.warning("from a worker thread")
        return "ok"

    @server.tool()
    async def in_own_thread() -> str:
        # What asyncio.to_thread does: a thread that is not anyio's, with the context.
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(log.error, "from its own thread"))
        thread.start()
        await anyio.to_thread.run_sync(thread.join)
        return "ok"

    records: list[Any] = []
    try:
        log.info("outside any request: not forwarded")
        async with connect_memory(server, era="handshake", on_log=records.append) as c:
            await c.call_tool("in_loop")
            await c.call_tool("in_thread")
            assert text(await c.call_tool("in_own_thread")) == "ok"
            await c.set_logging_level("debug")
            await c.call_tool("in_loop")
            await c.ping()
    finally:
        log.removeHandler(handler)
    seen = [(r.level, r.data, r.logger) for r in records]
    assert seen == [
        ("info", "from the loop", "tests.forwarded"),
        ("warning", "from a worker thread", "tests.forwarded"),
        ("error", "from its own thread", "tests.forwarded"),
        ("info", "from the loop", "tests.forwarded"),
        ("debug", "debug detail", "tests.forwarded"),
    ]


@pytest.mark.parametrize(
    ("version", "completions"),
    [("2024-11-05", False), ("2025-03-26", True), ("2025-06-18", True), ("2025-11-25", True)],
)
async def test_capabilities_per_revision(version: str, completions: bool) -> None:
    async with client(protocol_version=version) as c:
        assert (c.server_capabilities.completions is not UNSET) is completions


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2024-11-05", UNSET),
        ("2025-03-26", UNSET),
        ("2025-06-18", {}),
        ("2025-11-25", {"form": {}, "url": {}}),
    ],
)
async def test_client_declares_elicitation_as_each_revision_defines_it(
    version: str, expected: Any
) -> None:
    seen: list[Any] = []
    server = Server("caps")

    @server.tool()
    async def caps(ctx: RequestContext) -> str:
        seen.append(ctx.client_capabilities.elicitation)
        return ""

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="cancel")

    async with connect_memory(
        server, protocol_version=version, elicitation=fill, elicitation_url=True
    ) as c:
        await c.call_tool("caps")
    assert seen == [expected]


async def test_typed_forms_adapt_to_2025_06_18() -> None:
    seen: list[ElicitRequestParams] = []

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="accept", content={"name": "Ada", "color": "red"})

    async with client(elicitation=fill, protocol_version="2025-06-18") as c:
        assert text(await c.call_tool("ask")) == "Ada/30/user/red"
    schema = seen[0].requested_schema
    assert isinstance(schema, dict)
    color = schema["properties"]["color"]
    assert color == {"type": "string", "enum": ["red", "blue"], "enumNames": ["Red", "Blue"]}
    assert all("default" not in prop for prop in schema["properties"].values())


async def test_multi_select_needs_2025_11_25() -> None:
    class Pick(msgspec.Struct):
        colors: list[Color]

    server = Server("pick")

    @server.tool()
    async def pick(ctx: RequestContext) -> str:
        await ctx.elicit("Pick", Pick)
        return "sent"

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="cancel")

    async with connect_memory(server, elicitation=fill, protocol_version="2025-06-18") as c:
        result = await c.call_tool("pick")
    assert result.is_error is True
    assert "2025-11-25" in text(result)


def test_add_tool_points_to_the_decorator() -> None:
    with pytest.raises(LocalProtocolError, match=r"@server\.tool"):
        Server("x").add_tool(object(), object())


async def test_hand_written_schema_with_kwargs() -> None:
    """A hand-given schema may use names that are not Python identifiers: **kwargs."""
    server = Server("raw")
    schema = {
        "type": "object",
        "properties": {"first-name": {"type": "string"}, "$weird": {"type": "integer"}},
        "required": ["first-name"],
    }

    @server.tool(input_schema=schema, output_schema={"type": "object"})
    async def greet(ctx: RequestContext, **arguments: Any) -> dict[str, Any]:
        """Greet with odd argument names."""
        assert isinstance(ctx, RequestContext)
        return {"hello": arguments["first-name"], "n": arguments.get("$weird")}

    async with connect_memory(server) as c:
        tools = [t async for t in c.iter_tools()]
        assert tools[0].input_schema == schema
        assert tools[0].description == "Greet with odd argument names."
        result = await c.call_tool("greet", {"first-name": "Ada", "$weird": 3})
        assert result.structured_content == {"hello": "Ada", "n": 3}
        bad = await c.call_tool("greet", {"$weird": "x"})
        assert bad.is_error is True
        assert "first-name" in text(bad)
