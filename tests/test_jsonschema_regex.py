"""``pattern`` is ECMA-262 (JSON Schema 2020-12 section 6.4) run by Python's ``re``: the
places where the two read a pattern differently are translated, so a pattern keeps out
what it means to keep out (``$`` let a trailing newline through); a peer's schema may not
nest repetitions (exponential backtracking); malformed schemas are ``LocalProtocolError``s,
never another exception (``protocol/_jsonschema_regex.py``, ``_jsonschema_compile.py``)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import compile_schema
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.testing import connect_memory
from mcpkit.types import CallToolResult, Tool


def matches(pattern: str, text: str) -> bool:
    return compile_schema({"type": "string", "pattern": pattern}).is_valid(text)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("^[a-z_]+$", "rm_rf", True),
        ("^[a-z_]+$", "rm_rf\n", False),  # $ is the very end in ECMA-262
        ("a$|b", "a\n", False),
        ("\\$", "cost $5", True),  # an escaped $ stays a dollar sign
        ("[$]", "$", True),
        ("^.$", "\r", False),  # . matches no line terminator
        ("^.$", "\u2028", False),
        ("^.$", "é", True),
        ("^\\d+$", "\u0661\u0662", False),  # \d and \w are ASCII
        ("^\\d+$", "12", True),
        ("^\\w+$", "é", False),
        ("^[\\d.]+$", "1.2", True),
        ("^\\D$", "\u0661", True),  # ARABIC-INDIC DIGIT ONE
        ("^[^]$", "\n", True),  # [^] is any character, [] none
        ("[]", "anything", False),
        ("^(?<year>[0-9]{4})-\\k<year>$", "2024-2024", True),
        ("^(?<year>[0-9]{4})-\\k<year>$", "2024-2025", False),
        ("(?<=a)b", "ab", True),  # lookbehind is not a named group
        ("(?<!a)b", "ab", False),
        ("^[[]$", "[", True),  # [ inside a class is literal
        ("es", "yes", True),  # unanchored
        ("^a{2}$", "aa", True),
        ("^a{,2}$", "a{,2}", True),  # not a quantifier: literal, in both
    ],
)
def test_patterns_read_as_ecma_262(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


def test_pattern_properties_are_translated_too() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^[a-z]+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    validator = compile_schema(schema)
    assert validator.is_valid({"name": 1})
    assert not validator.is_valid({"name\n": 1})


@pytest.mark.parametrize(
    "pattern", ["^([a-z0-9]+-?)+$", "(a+)+", "(\\w+\\s?)*$", "((ab)*c)+", "(?:a|b+){2,}"]
)
def test_a_peer_schema_may_not_nest_repetitions(pattern: str) -> None:
    schema = {"type": "string", "pattern": pattern}
    compile_schema(schema)  # a schema of one's own: one's own responsibility
    with pytest.raises(LocalProtocolError, match="exponential"):
        compile_schema(schema, untrusted=True)


@pytest.mark.parametrize("pattern", ["^[a-z]+(-[a-z]+)?$", "(ab)?c+", "^(\\d{3})-\\d+$", "a{2}b*"])
def test_a_peer_schema_may_repeat_what_does_not_nest(pattern: str) -> None:
    compile_schema({"type": "string", "pattern": pattern}, untrusted=True)


def test_refusing_nested_repetition_is_what_keeps_a_peer_from_stalling_us() -> None:
    # The pattern that took 8.6 s at 28 characters: refused, never run.
    started = time.monotonic()
    with pytest.raises(LocalProtocolError):
        compile_schema({"type": "string", "pattern": "^([a-z0-9]+-?)+$"}, untrusted=True)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "a{99999999999}"},  # OverflowError in re
        {"type": "integer", "minimum": 10**400},  # past a double's range
        # ValueError in urljoin
        {"$id": "http://a/", "$defs": {"b": {"$id": "http://[x/"}}, "$ref": "#/$defs/b"},
        {"type": "string", "pattern": "(a"},
        {"type": "string", "pattern": "a\\"},
        {"type": "string", "pattern": "[a"},
    ],
)
def test_malformed_schemas_are_local_protocol_errors(schema: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        compile_schema(schema)


@pytest.mark.anyio
async def test_a_client_lists_tools_whose_output_schemas_it_cannot_use(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One odd outputSchema used to fail the whole tools/list (an OverflowError escaped);
    # a ReDoS pattern would have stalled the client on the result. Neither is checked.
    server = LowLevelServer("odd")
    odd = {
        "huge": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 10**400}}},
        "redos": {"type": "object", "properties": {"s": {"type": "string", "pattern": "(a+)+$"}}},
    }

    async def answer(ctx: RequestContext, args: dict[str, Any]) -> CallToolResult:
        return CallToolResult(content=[], structured_content={"s": "a" * 40 + "!"})

    for name, schema in odd.items():
        tool = Tool(name=name, input_schema={"type": "object"}, output_schema=schema)
        server.add_tool(tool, answer)
    async with connect_memory(server, protocol_version="2025-11-25") as client:
        assert [tool.name async for tool in client.iter_tools()] == ["huge", "redos"]
        started = time.monotonic()
        result = await client.call_tool("redos")
        assert time.monotonic() - started < 5
    assert result.structured_content == {"s": "a" * 40 + "!"}
    assert caplog.text.count("cannot check the output") == 2
