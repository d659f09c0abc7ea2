"""Tool arguments as deep as the server's limits let through are bound or refused like
any others: the integral-float retry (3.0 is an integer) walks them without recursion
(about 335 levels gave RecursionError, answered -32603; ``server/_argvalues.py``). A
``ToolError`` raised in a task group the tool runs reaches the model as one raised
directly does."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pydantic
import pytest

from mcpkit.exceptions import LocalProtocolError, ToolError
from mcpkit.protocol import Limits
from mcpkit.server import Server
from mcpkit.testing import connect_memory

pytestmark = pytest.mark.anyio


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(("n", "refused"), [(1, False), (1.0, False), ("x", True)])
async def test_deep_arguments_are_bound_or_refused_as_arguments(n: Any, refused: bool) -> None:
    server = Server("deep", limits=Limits(max_depth=512))

    @server.tool()
    def nest(x: Any, n: int) -> str:
        return "ok"

    async with connect_memory(server, era="handshake") as client:
        result = await client.call_tool("nest", {"x": nested(400), "n": n})
    text = result.content[0].text  # type: ignore[union-attr]
    assert (result.is_error is True) is refused, text
    assert ("'n'" in text) if refused else text == "ok"


@pytest.mark.parametrize("mask_errors", [False, True])
async def test_tool_errors_raised_in_a_task_group_reach_the_model(mask_errors: bool) -> None:
    server = Server("grouped", mask_errors=mask_errors)

    @server.tool()
    async def grouped() -> str:
        async def look_up() -> None:
            raise ToolError("unknown city 'Atlantis'; try 'Paris'")

        async with anyio.create_task_group() as tg:
            tg.start_soon(look_up)
        return "unreachable"

    async with connect_memory(server, era="handshake") as client:
        result = await client.call_tool("grouped")
    assert result.is_error is True
    assert result.content[0].text == "unknown city 'Atlantis'; try 'Paris'"  # type: ignore[union-attr]


def test_a_generator_with_a_hand_given_schema_is_refused_at_registration() -> None:
    def gen(**arguments: Any) -> Any:
        yield "no"

    with pytest.raises(LocalProtocolError, match="generator"):
        Server("gen").tool(input_schema={"type": "object"})(gen)


async def test_an_object_with_an_async_call_and_a_hand_given_schema_is_awaited() -> None:
    class Greeter:
        __name__ = "greet"

        async def __call__(self, **arguments: Any) -> str:
            return f"hello {arguments['who']}"

    server = Server("objects")
    schema = {"type": "object", "properties": {"who": {"type": "string"}}}
    server.tool(input_schema=schema)(Greeter())
    async with connect_memory(server, era="handshake") as client:
        result = await client.call_tool("greet", {"who": "Ada"})
    assert result.content[0].text == "hello Ada"  # type: ignore[union-attr]


async def test_integral_floats_become_ints_only_where_an_int_is_expected() -> None:
    server = Server("integral")

    @server.tool()
    def quote(data: dict[str, Any], qty: int) -> str:
        return f"{data['price']!r} x {qty!r}"

    @server.tool()
    def pair(n: int, m: int) -> str:
        return f"{n!r} {m!r}"

    async with connect_memory(server, era="handshake") as client:
        # 2.0 for an int is 2; the float in a dict[str, Any] stays a float.
        quoted = await client.call_tool("quote", {"data": {"price": 5.0}, "qty": 2.0})
        assert quoted.content[0].text == "5.0 x 2"  # type: ignore[union-attr]
        # n=3.0 is a fine integer: only m is reported.
        refused = await client.call_tool("pair", {"n": 3.0, "m": "x"})
    assert refused.is_error is True
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "'m'" in text
    assert "'n'" not in text


class _Inner(msgspec.Struct):
    tags: set[int]


class _Model(pydantic.BaseModel):
    names: frozenset[str]


@pytest.mark.parametrize(
    ("arguments", "refused"),
    [
        ({"top": [1, 2], "inner": {"tags": [1]}, "items": [{"tags": [1]}]}, None),
        ({"top": [1, 1], "inner": {"tags": [1]}, "items": []}, "'top'"),
        ({"top": [1, 1.0], "inner": {"tags": [1]}, "items": []}, "'top'"),  # equal numbers
        ({"top": [], "inner": {"tags": [2, 2]}, "items": []}, "'inner.tags'"),
        ({"top": [], "inner": {"tags": []}, "items": [{"tags": [3, 3]}]}, "'items[0].tags'"),
        ({"top": [], "inner": {"tags": []}, "items": [], "model": {"names": ["a", "a"]}}, None),
    ],
)
async def test_sets_refuse_repeated_items_at_any_depth(
    arguments: dict[str, Any], refused: str | None
) -> None:
    # The schema advertises uniqueItems for every set; msgspec (and pydantic) would merge
    # the repeats silently, so the tool would see fewer items than the client sent. Only
    # top-level sets were checked before.
    server = Server("s")
    seen: list[Any] = []

    @server.tool()
    def f(top: set[int], inner: _Inner, items: list[_Inner], model: _Model | None = None) -> str:
        seen.append((top, inner, items, model))
        return "ok"

    async with connect_memory(server) as client:
        result = await client.call_tool("f", arguments)
    if refused is None and "model" not in arguments:
        assert result.is_error is not True
        assert len(seen) == 1
    elif refused is None:
        # A pydantic model's set is advertised with uniqueItems too: refused likewise.
        assert result.is_error is True
        assert "'model.names'" in result.content[0].text  # type: ignore[union-attr]
    else:
        assert result.is_error is True
        assert not seen
        text = result.content[0].text  # type: ignore[union-attr]
        assert f"{refused} must not contain duplicates (uniqueItems)" in text
