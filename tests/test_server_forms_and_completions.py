"""What a server sends in forms, completions and file resources stays within what the spec
allows: a typed form's string formats are only the four ``StringSchema.format`` knows (a
UUID or a Decimal field is a plain string, converted back in the answer); a raw
``requestedSchema`` is checked before it is sent; a handler's ``Completion`` keeps its own
``total`` and has string values; a directory's default file size bound keeps a binary
file's base64 within the usual 16 MiB message limit."""

from __future__ import annotations

import decimal
import threading
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpkit.exceptions import LocalProtocolError, RPCError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import Completion as CompletionResult
from mcpkit.types import (
    CompletionReference,
    ElicitContentValue,
    ElicitRequestParams,
    ElicitResult,
    PromptReference,
    TextContent,
)

pytestmark = pytest.mark.anyio


class Ticket(msgspec.Struct):
    id: uuid.UUID
    price: decimal.Decimal


def forms_server() -> Server:
    server = Server("forms")

    @server.tool()
    async def typed(ctx: RequestContext) -> str:
        answer = await ctx.elicit("Ticket?", Ticket)
        assert answer.data is not None
        return f"{type(answer.data.id).__name__} {answer.data.price!r}"

    @server.tool()
    async def raw(ctx: RequestContext, kind: str) -> str:
        schemas: dict[str, Any] = {
            "nested": {"type": "object", "properties": {"a": {"type": "object"}}},
            "uuid": {"type": "object", "properties": {"a": {"type": "string", "format": "uuid"}}},
            "not an object": {"type": "array"},
            "fine": {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
        }
        answer = await ctx.elicit("Raw?", schemas[kind])
        return f"{answer.action}"

    return server


async def test_typed_forms_carry_only_the_formats_the_spec_allows() -> None:
    seen: list[ElicitRequestParams] = []

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        content: dict[str, ElicitContentValue] = {
            "id": "12345678-1234-5678-1234-567812345678",
            "price": "1.50",
        }
        return ElicitResult(action="accept", content=content)

    async with connect_memory(forms_server(), elicitation=fill, era="handshake") as client:
        result = await client.call_tool("typed")
    assert result.content == [TextContent(text="UUID Decimal('1.50')")]
    properties = seen[0].requested_schema["properties"]  # type: ignore[index]
    assert properties["id"] == {"type": "string"}
    assert "format" not in properties["price"]


@pytest.mark.parametrize(
    ("kind", "refused"),
    [("nested", True), ("uuid", True), ("not an object", True), ("fine", False)],
)
async def test_raw_forms_are_checked_before_sending(kind: str, refused: bool) -> None:
    sent: list[ElicitRequestParams] = []

    async def fill(params: ElicitRequestParams) -> ElicitResult:
        sent.append(params)
        return ElicitResult(action="decline")

    async with connect_memory(forms_server(), elicitation=fill, era="handshake") as client:
        result = await client.call_tool("raw", {"kind": kind})
    assert (result.is_error is True) is refused
    assert len(sent) == (0 if refused else 1)


def completing(outcome: Any) -> Server:
    server = Server("complete")

    @server.prompt()
    def greet(name: str) -> str:
        return name

    @server.completion()
    def complete(ref: CompletionReference, argument: str, value: str, context: Any) -> Any:
        return outcome

    return server


@pytest.mark.parametrize(
    ("outcome", "values", "total", "more"),
    [
        # The handler knows of 1,000: cutting to 100 must not make it 150.
        (
            CompletionResult(values=[f"v{n}" for n in range(150)], total=1000, has_more=True),
            100,
            1000,
            True,
        ),
        (CompletionResult(values=[f"v{n}" for n in range(150)]), 100, 150, True),
        (CompletionResult(values=[1, 2]), 2, None, None),  # type: ignore[list-item]
    ],
)
async def test_completion_results_are_kept_whole_and_valid(
    outcome: Any, values: int, total: int | None, more: bool | None
) -> None:
    async with connect_memory(completing(outcome), era="handshake") as client:
        result = await client.complete(PromptReference(name="greet"), "name", "v")
    completion = result.completion
    assert len(completion.values) == values
    assert all(isinstance(v, str) for v in completion.values)
    assert (completion.total or None) == total
    assert (completion.has_more or None) == more


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (42, "the completion handler returned int; it returns a list of strings or a Completion"),
        (None, "the completion handler returned NoneType"),
        ({"values": ["a"]}, "the completion handler returned dict"),
    ],
)
async def test_a_completion_handler_returning_something_else_is_named(
    outcome: Any, message: str
) -> None:
    async with connect_memory(completing(outcome), era="handshake") as client:
        with pytest.raises(RPCError) as failed:
            await client.complete(PromptReference(name="greet"), "name", "v")
        assert failed.value.code == -32603
        assert message in failed.value.message
        assert await client.get_prompt("greet", {"name": "n"})  # the session goes on


async def test_one_completion_handler_a_second_is_refused() -> None:
    server = completing(["a"])
    with pytest.raises(LocalProtocolError, match="a completion handler is already registered"):
        server.completion()(lambda ref, argument, value, context: ["b"])
    async with connect_memory(server, era="handshake") as client:  # the first one stays
        result = await client.complete(PromptReference(name="greet"), "name", "v")
    assert result.completion.values == ["a"]


async def test_a_plain_completion_function_runs_off_the_event_loop() -> None:
    """As a tool's: a completion querying a database must not stall every session."""
    server = Server("complete")
    threads: list[int] = []

    @server.prompt()
    def greet(name: str) -> str:
        return name

    @server.completion()
    def complete(ref: CompletionReference, argument: str, value: str, context: Any) -> Any:
        threads.append(threading.get_ident())
        return [value + "!"]

    async with connect_memory(server, era="handshake") as client:
        result = await client.complete(PromptReference(name="greet"), "name", "v")
    assert result.completion.values == ["v!"]
    assert len(threads) == 1
    assert threads[0] != threading.get_ident()


async def test_prompt_messages_may_be_dicts_of_their_wire_form() -> None:
    server = Server("prompts")

    @server.prompt()
    def chat(topic: str) -> Any:
        return [
            {"role": "user", "content": {"type": "text", "text": f"Tell me about {topic}"}},
            {"role": "assistant", "content": {"type": "text", "text": "Gladly."}},
        ]

    @server.prompt()
    def broken() -> Any:
        return [{"role": "narrator", "content": {"type": "text", "text": "x"}}]

    async with connect_memory(server, era="handshake") as client:
        result = await client.get_prompt("chat", {"topic": "owls"})
        assert [(m.role, m.content.text) for m in result.messages] == [  # type: ignore[union-attr]
            ("user", "Tell me about owls"),
            ("assistant", "Gladly."),
        ]
        with pytest.raises(RPCError) as failed:
            await client.get_prompt("broken", {})
        assert failed.value.code == -32603
        assert "a dict that is not a prompt message" in failed.value.message
        assert "$.role" in failed.value.message


async def test_invalid_arguments_are_named_once() -> None:
    server = Server("prompts")

    @server.prompt()
    def count(n: int) -> str:
        return str(n)

    @server.resource("rows://{n}")
    def row(n: int) -> str:
        return str(n)

    async with connect_memory(server, era="handshake") as client:
        with pytest.raises(RPCError) as prompt:
            await client.get_prompt("count", {"n": "x"})
        assert prompt.value.message == (
            "Invalid arguments for prompt 'count': 'n' must be an integer, got a string"
        )
        with pytest.raises(RPCError) as resource:
            await client.read_resource("rows://x")
        assert resource.value.message == (
            "Invalid resource URI 'rows://x': 'n' must be an integer, got a string"
        )


async def test_a_file_over_the_default_bound_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"\xff" * (9 * 1024 * 1024))
    server = Server("files")
    server.add_directory(tmp_path)
    async with connect_memory(server, era="handshake") as client:
        with pytest.raises(RPCError, match="allowed"):
            await client.read_resource("files://big.bin")


async def test_a_hand_given_output_schema_is_held_even_with_a_return_annotation() -> None:
    # The result was checked against the annotation only; what the client was promised
    # (the hand-given schema) was not kept, and the client refused the whole call.
    server = Server("hand")
    promised = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    @server.tool(output_schema=promised)
    def counts(with_n: bool) -> dict[str, int]:
        return {"n": 1} if with_n else {"m": 1}

    async with connect_memory(server, protocol_version="2025-11-25") as client:
        good = await client.call_tool("counts", {"with_n": True})
        bad = await client.call_tool("counts", {"with_n": False})
    assert good.structured_content == {"n": 1}
    assert bad.is_error is True
    assert "invalid result" in bad.content[0].text  # type: ignore[union-attr]
