"""``pattern`` is ECMA-262 (JSON Schema 2020-12 section 6.4) run by RE2 (linear time), or
by Python's ``re`` when RE2 cannot express it (lookaround, back references): the places
where the engines read a pattern differently are translated, so a pattern keeps out what it
means to keep out (``$`` let a trailing newline through), and both engines give the same
answers; a pattern only Python can run may not nest repetitions (exponential backtracking);
malformed schemas are ``LocalProtocolError``s, never another exception
(``protocol/_jsonschema_regex.py``, ``_jsonschema_compile.py``)."""

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


#: ECMA-262 readings that Python's and RE2's own differ from (or spell otherwise).
SEMANTICS: Final = [
    ("^[a-z_]+$", "rm_rf", True),
    ("^[a-z_]+$", "rm_rf\n", False),  # $ is the very end in ECMA-262
    ("a$|b", "a\n", False),
    ("^a$", "a\r", False),
    ("\\$", "cost $5", True),  # an escaped $ stays a dollar sign
    ("[$]", "$", True),
    ("^.$", "\r", False),  # . matches no line terminator
    ("^.$", "\n", False),
    ("^.$", "\u2028", False),
    ("^.$", "\u2029", False),
    ("^.$", "é", True),
    ("^.$", "😀", True),  # (code points, as in ECMA-262's u mode)
    ("^\\d+$", "\u0661\u0662", False),  # \d and \w are ASCII
    ("^\\d+$", "12", True),
    ("^\\w+$", "é", False),
    ("^[\\w]+$", "é", False),
    ("^[\\d.]+$", "1.2", True),
    ("^\\D$", "\u0661", True),  # ARABIC-INDIC DIGIT ONE
    ("^[\\D]$", "\u0661", True),
    ("^[\\D]$", "1", False),
    ("^[\\W]$", "é", True),
    ("^[\\W]$", "_", False),
    ("\\bfoo", "éfoo", True),  # \b between ASCII word and non-word characters
    ("\\bfoo", "_foo", False),
    ("^\\s$", "\ufeff", True),  # \s: ECMA-262 WhiteSpace and LineTerminator
    ("^\\s$", "\xa0", True),
    ("^\\s$", "\u3000", True),
    ("^\\s$", "\v", True),
    ("^\\s$", "\x1c", False),  # (Python's \s: yes)
    ("^\\s$", "\x85", False),
    ("^\\S$", "\xa0", False),
    ("^[\\s]$", "\u2028", True),
    ("^[\\S]$", "\xa0", False),
    ("^[\\S]$", "x", True),
    ("^[^]$", "\n", True),  # [^] is any character, [] none
    ("[]", "anything", False),
    ("^[\\b]$", "\b", True),  # [\b] is a backspace
    ("^\\u0041\\u00e9$", "Aé", True),
    ("^\\x41$", "A", True),
    ("^\\0$", "\0", True),
    ("^\\t\\v$", "\t\v", True),
    ("^a\\/b$", "a/b", True),
    ("^\\ud83d\\ude00$", "😀", False),  # UTF-16 halves: no code point matches
    ("^(?<year>[0-9]{4})-(?<month>[0-9]{2})$", "2024-05", True),
    ("^(?<year>[0-9]{4})-\\k<year>$", "2024-2024", True),
    ("^(?<year>[0-9]{4})-\\k<year>$", "2024-2025", False),
    ("^(a)\\1$", "aa", True),
    ("(?<=a)b", "ab", True),  # lookbehind is not a named group
    ("(?<!a)b", "ab", False),
    ("^[[]$", "[", True),  # [ inside a class is literal
    ("es", "yes", True),  # unanchored
    ("^a{2}$", "aa", True),
    ("^a{,2}$", "a{,2}", True),  # not a quantifier: literal, in both
    ("^a{1001}$", "a" * 1001, True),  # (past RE2's bound: Python)
]


@pytest.mark.parametrize(("pattern", "text", "expected"), SEMANTICS)
def test_patterns_read_as_ecma_262(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(("pattern", "text", "expected"), SEMANTICS)
def test_python_reads_patterns_as_re2_does(pattern: str, text: str, expected: bool) -> None:
    # An empty lookahead changes nothing but what RE2 can run: Python's engine runs it.
    assert matches(f"(?=){pattern}", text) is expected


@pytest.mark.parametrize("pattern", ["\\u{41}", "\\p{L}", "\\cJ", "(a", "[a", "a\\"])
def test_what_python_refused_stays_refused(pattern: str) -> None:
    with pytest.raises(LocalProtocolError, match="invalid pattern"):
        compile_schema({"type": "string", "pattern": pattern})


def test_pattern_properties_are_translated_too() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^[a-z]+$": {"type": "integer"}},
        "additionalProperties": False,
    }
    validator = compile_schema(schema)
    assert validator.is_valid({"name": 1})
    assert not validator.is_valid({"name\n": 1})


#: Patterns that backtrack for exponential or polynomial time on a crafted string in Python
#: (the auditor's figures on Python 3.11: ``^(a|aa)+$`` 10 s on 41 characters,
#: ``a*a*a*a*a*a*b`` 1.1 s on 60, ``a*a*b`` 6.5 s on 4,096, ``\\d+\\.\\d+`` 17.8 s on
#: 100,000), with whether they match ``"a" * 100_000 + "!"``.
BACKTRACKING: Final = [
    ("^([a-z0-9]+-?)+$", False),
    ("(a+)+", True),
    ("(\\w+\\s?)*$", True),
    ("((ab)*c)+", False),
    ("(?:a|b+){2,}", True),
    ("^(a|a)+$", False),
    ("^(a|aa)+$", False),
    ("a*a*a*a*a*a*b", False),
    ("a*a*b", False),
    ("^[a-z]+(-[a-z]+)?$", False),
    ("x{0,1000}x{0,1000}y", False),
    ("\\d+\\.\\d+", False),
    ("a+b", False),
]


@pytest.mark.parametrize(("pattern", "expected"), BACKTRACKING)
@pytest.mark.parametrize("untrusted", [False, True])
def test_patterns_run_in_linear_time(pattern: str, expected: bool, untrusted: bool) -> None:
    # RE2 runs them, a peer's and one's own alike, on text as long as a message.
    validator = compile_schema({"type": "string", "pattern": pattern}, untrusted=untrusted)
    started = time.monotonic()
    assert validator.is_valid("a" * 100_000 + "!") is expected
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("untrusted", [False, True])
def test_a_large_re2_program_runs_on_bounded_text(untrusted: bool) -> None:
    # RE2 is linear in the text times the program size once its DFA outgrows its memory:
    # 4,005 instructions took 64 s on a million "x". Small programs are not bounded.
    pattern = "x{0,1000}x{0,1000}y"
    validator = compile_schema({"type": "string", "pattern": pattern}, untrusted=untrusted)
    assert validator.is_valid("x" * 30_000 + "y")
    started = time.monotonic()
    errors = validator.errors("x" * 1_000_000)
    assert time.monotonic() - started < 1
    assert "too long (1000000 characters) to be checked" in errors[0].message
    assert "(at most 33512)" in errors[0].message
    names = {"type": "object", "patternProperties": {pattern: {"type": "integer"}}}
    validator = compile_schema(names, untrusted=untrusted)
    assert validator.is_valid({"x" * 30_000 + "y": 1, "z": "any"})
    started = time.monotonic()
    errors = validator.errors({"x" * 1_000_000: 1})
    assert time.monotonic() - started < 1
    assert [(e.keyword, e.message[:50]) for e in errors] == [
        ("patternProperties", "the property name is too long (1000000 characters)")
    ]
    small = compile_schema({"type": "string", "pattern": "\\d+\\.\\d+"}, untrusted=untrusted)
    assert small.is_valid("1" * 4_000_000 + ".5")


#: Patterns only Python's engine can run (lookaround) that could backtrack for long.
UNSAFE_FOR_PYTHON: Final = ["(?=a)(a+)+", "(?=a)(a|aa)+$", "(?!b)a*a*b", "(a)\\1*a*b"]


@pytest.mark.parametrize("pattern", UNSAFE_FOR_PYTHON)
def test_a_peer_pattern_that_could_backtrack_is_not_run(pattern: str) -> None:
    schema = {"type": "string", "pattern": pattern}
    # A peer's: left unchecked (the rest of its schema still is), never run on its text.
    peer = compile_schema({**schema, "maxLength": 100}, untrusted=True)
    started = time.monotonic()
    assert peer.is_valid("a" * 99 + "!")
    assert not peer.is_valid("a" * 101)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("pattern", UNSAFE_FOR_PYTHON)
def test_an_own_pattern_that_could_backtrack_is_refused(pattern: str) -> None:
    # One's own is refused when the schema is compiled (a server: at registration), with
    # the reason: silently leaving it unchecked would let through what it keeps out.
    with pytest.raises(LocalProtocolError, match="refused: only Python's engine can run it"):
        compile_schema({"type": "string", "pattern": pattern})


@pytest.mark.parametrize(
    "pattern", ["(ab)?c+", "^(\\d{3})-\\d+$", "a{2}b*", "^\\d{4}-\\d{2}-\\d{2}$", "^[a-z]+$"]
)
def test_a_peer_pattern_with_one_long_repetition_is_checked(pattern: str) -> None:
    for prefix in ("", "(?=)"):  # RE2, and Python's engine
        peer = compile_schema({"type": "string", "pattern": prefix + pattern}, untrusted=True)
        assert not peer.is_valid("!")


@pytest.mark.parametrize("untrusted", [False, True])
def test_a_pattern_only_python_runs_runs_on_bounded_text(untrusted: bool) -> None:
    # Even one repetition searches in quadratic time: "a+b" took 250 s on a million "a".
    validator = compile_schema({"type": "string", "pattern": "(?=a)a+b"}, untrusted=untrusted)
    assert validator.is_valid("a" * 8_000 + "b")
    started = time.monotonic()
    errors = validator.errors("a" * 1_000_000)
    assert time.monotonic() - started < 1
    assert "too long (1000000 characters) to be checked" in errors[0].message
    assert "(at most 8192)" in errors[0].message


def test_a_pattern_properties_pattern_that_could_backtrack_is_refused() -> None:
    # Which subschema applies to which property depends on it: it cannot go unchecked.
    schema = {"type": "object", "patternProperties": {"(?=a)(a|aa)+$": {"type": "integer"}}}
    with pytest.raises(LocalProtocolError, match="refused"):
        compile_schema(schema)
    with pytest.raises(LocalProtocolError, match="patternProperties"):
        compile_schema(schema, untrusted=True)
    # RE2 runs the same without the lookahead, on names of any length.
    linear = compile_schema({**schema, "patternProperties": {"^(a|aa)+$": {"type": "integer"}}})
    started = time.monotonic()
    assert linear.is_valid({"a" * 100_000 + "!": "x"})
    assert not linear.is_valid({"a" * 100_000: "x"})
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
        "redos": {
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "(?=a)(a+)+$"}},
        },
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


#: Leading lookaheads after ``^`` (password rules, "never two dashes"): RE2 runs them as
#: separate anchored checks, and they mean what they mean in ECMA-262 (and Python).
LEADING_LOOKAHEADS: Final = [
    ("^(?=.*[A-Z])(?=.*\\d).{8,}$", "Password1", True),
    ("^(?=.*[A-Z])(?=.*\\d).{8,}$", "password1", False),
    ("^(?=.*[A-Z])(?=.*\\d).{8,}$", "Pass1", False),
    ("^(?=.*[A-Z])(?=.*\\d).{8,}$", "Passw\n1ord", False),  # . stops at a line end
    ("^(?!.*--)[a-z-]+$", "a-b-c", True),
    ("^(?!.*--)[a-z-]+$", "a--b", False),
    ("^(?!.*--)[a-z-]+$", "ab\n", False),
    ("^(?=a|b)[a-c]", "cb", False),  # the alternative stays inside its lookahead
    ("^(?=[)])[)(]+", ")(", True),  # a parenthesis in a class does not end the group
    ("^(?=\\))\\)", ")", True),  # nor an escaped one
    ("^(?=.*x)(?!.*y)", "zx", True),  # an empty rest
    ("^(?=.*x)(?!.*y)", "xy", False),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), LEADING_LOOKAHEADS)
def test_leading_lookaheads_run_on_re2_with_their_meaning(
    pattern: str, text: str, expected: bool
) -> None:
    assert matches(pattern, text) is expected
    # An own pattern of this shape was refused at registration (two long repetitions,
    # for Python's engine); it runs in linear time now, on text of any length.
    started = time.monotonic()
    matches(pattern, "a" * 2_000_000 + "A1")
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("pattern", ["^(?=a)b|c*c*d", "^(?=(a))\\1*a*b"])
def test_lookaheads_that_cannot_be_split_keep_pythons_rules(pattern: str) -> None:
    # An alternative at the top (the ^ anchors only the first) or a back reference: not
    # split, so Python's engine and its refusal of what could backtrack.
    with pytest.raises(LocalProtocolError, match="refused: only Python's engine"):
        compile_schema({"type": "string", "pattern": pattern})


_WITHOUT_RE2: Final = """
import sys, warnings
sys.modules["re2"] = None  # as if google-re2 could not be installed (no musl wheel)
from mcpkit.protocol import compile_schema
from mcpkit.exceptions import LocalProtocolError
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    check = compile_schema({"type": "string", "pattern": "^[a-z]+$"})
    print(check.is_valid("abc"), check.is_valid("ab1"), check.is_valid("rm\\n"))
    compile_schema({"type": "string", "pattern": "^[0-9]{3}$"})
    try:
        compile_schema({"type": "string", "pattern": "(a+)+$"})
    except LocalProtocolError as exc:
        print("refused", "only Python's engine" in str(exc))
print(len(caught), "google-re2 is not installed" in str(caught[0].message))
"""


def test_without_re2_patterns_fall_back_to_the_safe_python_rules() -> None:
    """google-re2 has no wheel for musl or glibc before 2.28: installed without it, safe
    patterns run on Python's engine (with ECMA-262's meaning), unsafe ones are refused,
    and a warning says so once, instead of an ImportError on the first pattern."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_RE2], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True False False", "refused True", "1 True"]
