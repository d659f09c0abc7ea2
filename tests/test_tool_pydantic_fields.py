"""Tool parameters described and bounded the way FastMCP's and the official SDK's users
write them: ``Annotated[int, Field(ge=0, description=...)]``, ``n: int = Field(default=3,
ge=1)``, ``conint(le=5)``, ``PositiveInt``. The bounds and descriptions are in the input
schema and checked before the function runs; an absent argument gets the field's default.
Before, msgspec described the bare type: the bounds were neither published nor checked,
and an absent argument reached the function as the ``FieldInfo`` object itself."""

from __future__ import annotations

import dataclasses
import sys
import typing
from typing import Annotated, Any, NamedTuple

import pytest
import typing_extensions
from msgspec import UNSET
from pydantic import BaseModel, Field, PositiveInt, conint

from mcpkit.server import Server
from mcpkit.testing import connect_memory
from mcpkit.types import CallToolResult, TextContent, Tool

from ._toolcalls import call_once, listed_tools, text

pytestmark = pytest.mark.anyio


def build() -> Server:
    server = Server("fields", "1.0")

    @server.tool()
    def bounded(x: Annotated[int, Field(description="How many.", ge=0, le=10)]) -> int:
        return x

    @server.tool()
    def defaulted(n: int = Field(default=3, description="Count.", ge=1)) -> int:
        """Doc.

        Args:
            n: the docstring's words, which the field's description wins over
        """
        return n

    @server.tool()
    def made(
        tags: list[str] = Field(default_factory=lambda: ["new"], max_length=2),  # noqa: B008  (the form under test)
    ) -> str:
        return ",".join(tags)

    @server.tool()
    def needed(code: str = Field(pattern="^[a-z]{2}$")) -> str:
        return code

    @server.tool()
    def constrained(n: conint(ge=1, le=5), p: PositiveInt = 1) -> int:  # type: ignore[valid-type]
        return int(n * p)

    @server.tool()
    def texts(
        name: Annotated[str, Field(min_length=2, max_length=5)],
        ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5,
    ) -> str:
        return f"{name} {ratio}"

    return server


async def tools() -> dict[str, Tool]:
    return await listed_tools(build())


async def call(name: str, arguments: dict[str, Any]) -> CallToolResult:
    return await call_once(build(), name, arguments)


SCHEMAS = [
    (
        "bounded",
        {"x": {"type": "integer", "description": "How many.", "minimum": 0, "maximum": 10}},
        ["x"],
    ),
    (
        "defaulted",
        {"n": {"type": "integer", "description": "Count.", "minimum": 1, "default": 3}},
        None,
    ),
    ("made", {"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}, None),
    ("needed", {"code": {"type": "string", "pattern": "^[a-z]{2}$"}}, ["code"]),
    (
        "constrained",
        {
            "n": {"type": "integer", "minimum": 1, "maximum": 5},
            "p": {"type": "integer", "exclusiveMinimum": 0, "default": 1},
        },
        ["n"],
    ),
    (
        "texts",
        {
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "ratio": {
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "default": 0.5,
            },
        },
        ["name"],
    ),
]


@pytest.mark.parametrize(("name", "properties", "required"), SCHEMAS, ids=[s[0] for s in SCHEMAS])
async def test_the_schema_has_the_fields_bounds_and_words(
    name: str, properties: dict[str, Any], required: list[str] | None
) -> None:
    schema = (await tools())[name].input_schema
    assert schema["properties"] == properties
    assert schema.get("required") == required


CALLS = [
    ("bounded", {"x": 10}, None, '{"result":10}'),
    # JSON Schema's "integer" is any number with a zero fraction (as msgspec's path has it).
    ("bounded", {"x": 7.0}, None, '{"result":7}'),
    ("bounded", {"x": 7.5}, "'x' should be a valid integer", None),
    ("bounded", {"x": "7"}, "'x' should be a valid integer", None),
    ("bounded", {"x": 11}, "'x' should be less than or equal to 10", None),
    ("bounded", {"x": -1}, "'x' should be greater than or equal to 0", None),
    ("defaulted", {}, None, '{"result":3}'),
    ("defaulted", {"n": 0}, "'n' should be greater than or equal to 1", None),
    ("made", {}, None, "new"),
    ("made", {"tags": ["a", "b"]}, None, "a,b"),
    ("made", {"tags": ["a", "b", "c"]}, "'tags' should have at most 2 items", None),
    ("needed", {}, "missing required argument 'code'", None),
    ("needed", {"code": "fr"}, None, "fr"),
    ("needed", {"code": "FR"}, "'code' should match pattern", None),
    ("constrained", {"n": 5, "p": 2}, None, '{"result":10}'),
    ("constrained", {"n": 6}, "'n' should be less than or equal to 5", None),
    ("constrained", {"n": 1, "p": 0}, "'p' should be greater than 0", None),
    ("texts", {"name": "abc"}, None, "abc 0.5"),
    ("texts", {"name": "a"}, "'name' should have at least 2 characters", None),
    ("texts", {"name": "abc", "ratio": 1}, "'ratio' should be less than 1", None),
]


@pytest.mark.parametrize(("name", "arguments", "error", "answer"), CALLS)
async def test_the_bounds_are_checked_and_the_defaults_given(
    name: str, arguments: dict[str, Any], error: str | None, answer: str | None
) -> None:
    result = await call(name, arguments)
    if error is None:
        assert result.is_error is UNSET, result
        assert text(result) == answer
    else:
        assert result.is_error is True
        assert error in text(result)


async def test_prompts_take_field_defaults_too() -> None:
    server = Server("fields", "1.0")

    @server.prompt()
    def greet(name: str = Field(default="you", description="Who to greet.")) -> str:
        return f"Hello, {name}."

    async with connect_memory(server) as c:
        (prompt,) = [p async for p in c.iter_prompts()]
        (argument,) = prompt.arguments  # type: ignore[misc]
        assert (argument.name, argument.description, argument.required) == (
            "name",
            "Who to greet.",
            False,
        )
        result = await c.get_prompt("greet", {})
    message = result.messages[0].content
    assert isinstance(message, TextContent)
    assert message.text == "Hello, you."


@dataclasses.dataclass
class Box:
    width: Annotated[int, Field(ge=1, description="Width.")]


class Pair(NamedTuple):
    low: Annotated[int, Field(ge=0)]
    high: int


class Limits(typing_extensions.TypedDict):
    most: Annotated[int, Field(le=3)]


class OldLimits(typing.TypedDict):
    most: Annotated[int, Field(le=3)]


async def test_constraints_on_the_fields_of_dataclasses_and_typed_dicts() -> None:
    server = Server("fields", "1.0")

    @server.tool()
    def area(box: Box, pair: Pair, limits: Limits) -> int:
        return box.width + pair.low + pair.high + limits["most"]

    async with connect_memory(server) as c:
        (tool,) = [t async for t in c.iter_tools()]
        box = tool.input_schema["properties"]["box"]
        assert box["properties"]["width"]["minimum"] == 1
        assert box["properties"]["width"]["description"] == "Width."
        good = {"box": {"width": 2}, "pair": [0, 5], "limits": {"most": 3}}
        assert text(await c.call_tool("area", good)) == '{"result":10}'
        for field, bad, words in [
            ("box", {"width": 0}, "'box.width' should be greater than or equal to 1"),
            ("pair", [-1, 5], "'pair[0]' should be greater than or equal to 0"),
            ("limits", {"most": 4}, "'limits.most' should be less than or equal to 3"),
        ]:
            result = await c.call_tool("area", {**good, field: bad})
            assert result.is_error is True
            assert words in text(result)


async def test_a_typed_dict_pydantic_cannot_take_keeps_msgspec_and_says_so() -> None:
    server = Server("fields", "1.0")
    # pydantic takes typing.TypedDict from Python 3.12 on only (typing_extensions' before).
    if sys.version_info < (3, 12):
        with pytest.warns(UserWarning, match="constraints on the fields of OldLimits are neither"):

            @server.tool()
            def old(limits: OldLimits) -> int:
                return limits["most"]

    else:

        @server.tool()
        def old(limits: OldLimits) -> int:
            return limits["most"]

    async with connect_memory(server) as c:
        result = await c.call_tool("old", {"limits": {"most": 4}})
    if sys.version_info < (3, 12):
        assert text(result) == '{"result":4}'
    else:
        assert result.is_error is True
        assert "'limits.most' should be less than or equal to 3" in text(result)


class Order(BaseModel):
    count: int
    price: float


async def test_a_model_takes_integral_floats_as_integers() -> None:
    server = Server("fields", "1.0")

    @server.tool()
    def total(order: Order) -> float:
        return order.count * order.price

    for order, error in [
        ({"count": 3.0, "price": 2.0}, None),
        ({"count": 3, "price": 2.5}, None),
        ({"count": 3.5, "price": 2.0}, "'order.count' should be a valid integer"),
    ]:
        result = await call_once(server, "total", {"order": order})
        if error is None:
            assert result.is_error is UNSET, result
            assert result.structured_content == {"result": order["count"] * order["price"]}
        else:
            assert result.is_error is True
            assert error in text(result)
