"""``pattern`` is ECMA-262 (JSON Schema 2020-12 section 6.4) run by Python's ``re``: the
places where the two read a pattern differently are translated, so a pattern keeps out
what it means to keep out (``$`` let a trailing newline through); a peer's schema may not
nest repetitions (exponential backtracking); malformed schemas are ``LocalProtocolError``s,
never another exception (``protocol/_jsonschema_regex.py``, ``_jsonschema_compile.py``)."""

from __future__ import annotations

import time
from typing import Any, Final

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


#: A peer's patterns that backtrack for exponential or polynomial time on a crafted string
#: (the auditor's figures on Python 3.11: ``^(a|aa)+$`` 10 s on 41 characters,
#: ``a*a*a*a*a*a*b`` 1.1 s on 60, ``a*a*b`` 6.5 s on 4,096).
BACKTRACKING: Final = [
    "^([a-z0-9]+-?)+$",
    "(a+)+",
    "(\\w+\\s?)*$",
    "((ab)*c)+",
    "(?:a|b+){2,}",
    "^(a|a)+$",
    "^(a|aa)+$",
    "a*a*a*a*a*a*b",
    "a*a*b",
    "^[a-z]+(-[a-z]+)?$",
    "x{0,1000}x{0,1000}y",
]


@pytest.mark.parametrize("pattern", BACKTRACKING)
def test_a_peer_pattern_that_could_backtrack_is_not_run(pattern: str) -> None:
    schema = {"type": "string", "pattern": pattern}
    compile_schema(schema)  # a schema of one's own: one's own responsibility
    # A peer's: left unchecked (the rest of its schema still is), never run on its text.
    peer = compile_schema({**schema, "maxLength": 100}, untrusted=True)
    started = time.monotonic()
    assert peer.is_valid("a" * 99 + "!")
    assert not peer.is_valid("a" * 101)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(
    "pattern", ["(ab)?c+", "^(\\d{3})-\\d+$", "a{2}b*", "^\\d{4}-\\d{2}-\\d{2}$", "^[a-z]+$"]
)
def test_a_peer_pattern_with_one_long_repetition_is_checked(pattern: str) -> None:
    peer = compile_schema({"type": "string", "pattern": pattern}, untrusted=True)
    assert not peer.is_valid("!")


def test_a_peer_pattern_runs_on_bounded_text() -> None:
    # Even one repetition searches in quadratic time: "a+b" took 250 s on a million "a".
    peer = compile_schema({"type": "string", "pattern": "a+b"}, untrusted=True)
    assert peer.is_valid("a" * 8_000 + "b")
    started = time.monotonic()
    errors = peer.errors("a" * 1_000_000)
    assert time.monotonic() - started < 1
    assert "too long (1000000 characters) to be checked" in errors[0].message
    assert compile_schema({"type": "string", "pattern": "a+b"}).is_valid("a" * 20_000 + "b")


def test_a_peer_pattern_properties_pattern_that_could_backtrack_is_refused() -> None:
    # Which subschema applies to which property depends on it: it cannot go unchecked.
    schema = {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}}}
    compile_schema(schema)
    with pytest.raises(LocalProtocolError, match="patternProperties"):
        compile_schema(schema, untrusted=True)


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
    # The huge minimum makes its schema unusable; the ReDoS pattern goes unchecked alone.
    assert caplog.text.count("cannot check the output") == 1
