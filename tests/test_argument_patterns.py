"""Patterns on tool arguments run in linear time (RE2), whoever wrote them: a client's one
``tools/call`` with a long string used to pin a server CPU for minutes to hours through
Python's backtracking ``re`` (msgspec's ``Meta(pattern=...)`` and the JSON Schema
validator alike: ``\\d+\\.\\d+`` took 17.8 s on 100,000 digits, ``a+b`` 250 s on a million
"a"). ``server/_argpatterns.py``, ``protocol/_jsonschema_regex.py``."""

from __future__ import annotations

import sys
import textwrap
from typing import Annotated, Any, Final

import anyio
import msgspec
import pytest

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import ArgumentError, Server, function_schema
from mcpkit.types import TextContent

M = msgspec.Meta

#: A server with the patterns on typed parameters (msgspec) and in a hand-given schema.
SERVER: Final = textwrap.dedent(
    r"""
    from typing import Annotated
    import msgspec
    from mcpkit.server import Server

    server = Server("patterns")

    @server.tool()
    def version(
        number: Annotated[str, msgspec.Meta(pattern=r"\d+\.\d+")],
        words: list[Annotated[str, msgspec.Meta(pattern="^(a|aa)+$")]] = [],
        big: Annotated[str, msgspec.Meta(pattern="x{0,1000}x{0,1000}y")] = "",
    ) -> str:
        return number

    @server.tool(input_schema={
        "type": "object",
        "properties": {"number": {"type": "string", "pattern": r"\d+\.\d+"}},
    })
    def raw(number: str) -> str:
        return number

    server.run()
    """
)
#: Each took from a minute to hours in Python's re (quadratic search, or exponential).
HOSTILE: Final[list[tuple[str, dict[str, Any], str]]] = [
    ("version", {"number": "1" * 200_000}, "'number' must match the pattern \\d+\\.\\d+"),
    (
        "version",
        {"number": "1.0", "words": ["a" * 100_000 + "!"]},
        "'words[0]' must match the pattern ^(a|aa)+$",
    ),
    # RE2's program of 4,005 instructions outgrows its DFA here: 64 s on a million "x".
    (
        "version",
        {"number": "1.0", "big": "x" * 1_000_000},
        "'big' is too long (1000000 characters) to be checked against the pattern "
        "x{0,1000}x{0,1000}y (at most 33512)",
    ),
    # (the JSON Schema validator shows a pattern as a Python literal)
    ("raw", {"number": "1" * 200_000}, "'number' must match the pattern '\\\\d+\\\\.\\\\d+'"),
]


@pytest.mark.anyio
async def test_hostile_strings_are_refused_at_once_over_stdio() -> None:
    # A subprocess, so that a server stuck in a regular expression fails the test (a server
    # in this process would block the event loop and fail_after with it).
    transport = StdioTransport(sys.executable, ["-c", SERVER], terminate_timeout=0.5)
    with anyio.fail_after(15):
        async with Client(transport) as client:
            for tool, arguments, problem in HOSTILE:
                with anyio.fail_after(5):
                    result = await client.call_tool(tool, arguments)
                assert result.is_error is True
                assert result.content == [TextContent(text=f"Invalid arguments: {problem}")]
            result = await client.call_tool("version", {"number": "x1.25y", "words": ["aaa"]})
            assert result.content == [TextContent(text="x1.25y")]


class Release(msgspec.Struct):
    version: Annotated[str, M(pattern="^[0-9]+$")]


def tool(
    code: Annotated[str, M(pattern="^[A-Z]{3}$", max_length=3)],
    tags: list[Annotated[str, M(pattern="^#")]] | None = None,
    labels: dict[Annotated[str, M(pattern="^[a-z]+$")], Annotated[str, M(pattern="^x")]] = {},  # noqa: B006
    pair: tuple[Annotated[str, M(pattern="^a")], int] | None = None,
    many: tuple[Annotated[str, M(pattern="^b")], ...] = (),
    either: Annotated[str, M(pattern="^c")] | int = 0,
    release: Release | None = None,
) -> str:
    return code


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        ({"code": "abc"}, [("/code", "'code' must match the pattern ^[A-Z]{3}$")]),
        ({"code": "ABCD"}, [("/code", "'code' must be at most 3 characters long")]),
        (
            {"code": "ABC", "tags": ["#a", "b"]},
            [("/tags/1", "'tags[1]' must match the pattern ^#")],
        ),
        (
            {"code": "ABC", "labels": {"A": "x"}},
            [("/labels", "a key of 'labels' must match the pattern ^[a-z]+$")],
        ),
        (
            {"code": "ABC", "labels": {"a": "y"}},
            [("/labels/a", "'labels.a' must match the pattern ^x")],
        ),
        ({"code": "ABC", "pair": ["b", 1]}, [("/pair/0", "'pair[0]' must match the pattern ^a")]),
        (
            {"code": "ABC", "many": ["b", "c"]},
            [("/many/1", "'many[1]' must match the pattern ^b")],
        ),
        ({"code": "ABC", "either": "d"}, [("/either", "'either' must match the pattern ^c")]),
        # The server's own classes keep msgspec's check (see _argpatterns.py).
        (
            {"code": "ABC", "release": {"version": "x"}},
            [("/release/version", "'release.version' must match the pattern ^[0-9]+$")],
        ),
        (
            {"code": "abc", "tags": [1], "either": "d"},
            [
                ("/code", "'code' must match the pattern ^[A-Z]{3}$"),
                ("/tags/0", "'tags[0]' must be a string, got an integer"),
                ("/either", "'either' must match the pattern ^c"),
            ],
        ),
    ],
)
def test_argument_patterns_are_reported_as_before(
    arguments: dict[str, Any], problems: list[tuple[str, str]]
) -> None:
    schema = function_schema(tool)
    with pytest.raises(ArgumentError) as caught:
        schema.bind(arguments)
    assert caught.value.errors == problems


def test_valid_arguments_keep_their_types() -> None:
    arguments = {
        "code": "ABC",
        "tags": ["#a"],
        "labels": {"a": "x1"},
        "pair": ["a", 1],
        "many": ["b"],
        "either": "c",
        "release": {"version": "12"},
    }
    bound = function_schema(tool).bind(arguments)
    assert bound == {**arguments, "pair": ("a", 1), "many": ("b",), "release": Release("12")}
    # The schema a client sees still has every pattern.
    schema = function_schema(tool).input_schema
    assert schema["properties"]["code"]["pattern"] == "^[A-Z]{3}$"
    assert schema["properties"]["tags"]["anyOf"][0]["items"]["pattern"] == "^#"


def test_a_pattern_only_python_runs_is_refused_at_registration_if_it_could_backtrack() -> None:
    def lookahead(word: Annotated[str, M(pattern="(?=a)(a|aa)+$")]) -> str:
        return word

    with pytest.raises(LocalProtocolError, match="only Python's engine can run it"):
        Server("s").tool()(lookahead)

    def bounded(word: Annotated[str, M(pattern="(?=a)a+b")]) -> str:
        return word

    with pytest.raises(ArgumentError, match="too long"):
        function_schema(bounded).bind({"word": "a" * 9_000})
    assert function_schema(bounded).bind({"word": "ab"}) == {"word": "ab"}
