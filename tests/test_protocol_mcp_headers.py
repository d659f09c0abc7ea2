"""The MCP request headers of Streamable HTTP 2026-07-28 (SEP-2243), sans-I/O: the
``=?base64?...?=`` value codec, the ``x-mcp-header`` annotation rules, the headers a client
sends, and the server's check of headers against the body.
2026-07-28 ``basic/transports/streamable-http.mdx`` and ``server/tools.mdx``."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcpkit.exceptions import LocalProtocolError, RemoteProtocolError
from mcpkit.protocol import (
    MAX_SAFE_INTEGER,
    ParamHeader,
    annotation_problem,
    decode_header_value,
    encode_header_value,
    header_text,
    headers_for_request,
    needs_encoding,
    param_headers,
    request_header_problem,
)
from mcpkit.types import Tool


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# -- value codec ------------------------------------------------------------------------------

# The spec's own table ("Encoding examples") plus the edges of "plain".
ENCODING = [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("", ""),
    ("a b", "a b"),
    ("x", "x"),
    (" lead", b64(" lead")),
    ("trail ", b64("trail ")),
    ("\tTab", b64("\tTab")),
    ("in\ttab", b64("in\ttab")),
    ("crlf\r\n", b64("crlf\r\n")),
    ("nul\x00", b64("nul\x00")),
    ("del\x7f", b64("del\x7f")),
    ("café", b64("café")),
    ("=?base64?", "=?base64?"),  # not the whole sentinel: literal
    ("?=", "?="),
    ("=?base64?=", b64("=?base64?=")),  # prefix and suffix overlap: encoded to be safe
    ("file:///a b/c.json", "file:///a b/c.json"),
]


@pytest.mark.parametrize(("value", "encoded"), ENCODING)
def test_encode_header_value(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert needs_encoding(value) == (encoded != value)
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    ("received", "decoded"),
    [
        ("us-west1", "us-west1"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("=?base64??=", ""),
        ("SGVsbG8=", "SGVsbG8="),  # no prefix: literal
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no suffix: literal
        ("SGVsbG8=?=", "SGVsbG8=?="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # the markers are case-sensitive
        ("a\tb", "a\tb"),
    ],
)
def test_decode_header_value(received: str, decoded: str) -> None:
    assert decode_header_value(received) == decoded


@pytest.mark.parametrize(
    "received",
    [
        "=?base64?SGVsbG8?=",  # missing padding
        "=?base64?SGVs!!!bG8=?=",  # not the alphabet
        "=?base64?SGVsbG8=\n?=",
        "=?base64?SGVsbG9=?=",  # non-zero pad bits: not the canonical spelling
        "=?base64?SGVsbG8_?=",  # the URL-safe alphabet
        "=?base64?/w==?=",  # not UTF-8
        "caf\xe9",  # obs-text: invalid characters in a header
        "bell\x07",
    ],
)
def test_decode_header_value_refuses(received: str) -> None:
    with pytest.raises(RemoteProtocolError):
        decode_header_value(received)


@given(st.text())
@settings(max_examples=500)
def test_encode_then_decode_is_identity(value: str) -> None:
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    # What is sent is always a valid header value: visible ASCII and inner spaces.
    assert all(0x20 <= ord(c) <= 0x7E for c in encoded)
    assert encoded == encoded.strip()


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
@settings(max_examples=500)
def test_plain_ascii_stays_unencoded(value: str) -> None:
    # Visible ASCII with inner spaces: everything but the sentinel's own shape and values
    # with a space at either end (those are encoded, see the table).
    assume(value == value.strip(" "))
    assume(not (value.startswith("=?base64?") and value.endswith("?=")))
    assert not needs_encoding(value)
    assert encode_header_value(value) == value
    assert decode_header_value(value) == value


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("us-west1", "us-west1"),
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (42.0, "42"),
        (True, "true"),
        (False, "false"),
        (MAX_SAFE_INTEGER, str(MAX_SAFE_INTEGER)),
        (-MAX_SAFE_INTEGER, str(-MAX_SAFE_INTEGER)),
    ],
)
def test_header_text(value: Any, text: str) -> None:
    assert header_text(value) == text


@pytest.mark.parametrize(
    "value", [1.5, float("inf"), MAX_SAFE_INTEGER + 1, -(2**60), {"a": 1}, [1], None]
)
def test_header_text_refuses(value: Any) -> None:
    with pytest.raises(LocalProtocolError):
        header_text(value)


# -- x-mcp-header annotations -----------------------------------------------------------------


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def prop(kind: Any, header: Any = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": kind, **more}
    if header is not None:
        out["x-mcp-header"] = header
    return out


@pytest.mark.parametrize(
    ("input_schema", "expected"),
    [
        (schema(), ()),
        ({"type": "object"}, ()),
        (schema(q=prop("string")), ()),
        (
            schema(region=prop("string", "Region"), query=prop("string")),
            (ParamHeader("Region", ("region",), "string"),),
        ),
        (
            schema(p=prop("integer", "Priority"), v=prop("boolean", "Verbose")),
            (
                ParamHeader("Priority", ("p",), "integer"),
                ParamHeader("Verbose", ("v",), "boolean"),
            ),
        ),
        # Nested objects are fine while every step is a `properties` key.
        (
            schema(outer={"type": "object", "properties": {"inner": prop("string", "Inner")}}),
            (ParamHeader("Inner", ("outer", "inner"), "string"),),
        ),
        (schema(t=prop("string", "!#$%&'*+-.^_`|~09azAZ")), None),
        # "x-mcp-header" as data (a default, an enum member) or as a property name is no
        # annotation.
        (schema(d=prop("object", default={"x-mcp-header": "X"})), ()),
        (schema(e=prop("object", enum=[{"x-mcp-header": "X"}])), ()),
        (schema(**{"x-mcp-header": prop("string")}), ()),
    ],
)
def test_valid_annotations(input_schema: dict[str, Any], expected: Any) -> None:
    assert annotation_problem(input_schema) is None
    found = param_headers(input_schema)
    if expected is not None:
        assert found == expected


INVALID = [
    ("empty", schema(v=prop("string", "")), "not an HTTP field-name token"),
    ("space", schema(v=prop("string", "My Region")), "not an HTTP field-name token"),
    ("colon", schema(v=prop("string", "Region:Primary")), "not an HTTP field-name token"),
    ("non-ascii", schema(v=prop("string", "Région")), "not an HTTP field-name token"),
    ("tab", schema(v=prop("string", "Region\t1")), "not an HTTP field-name token"),
    ("crlf", schema(v=prop("string", "A\r\nB")), "not an HTTP field-name token"),
    ("not a string", schema(v=prop("string", 7)), "not an HTTP field-name token"),
    ("number", schema(v=prop("number", "Score")), "only string, integer and boolean"),
    ("object", schema(v=prop("object", "Data")), "only string, integer and boolean"),
    ("array", schema(v=prop("array", "Items", items={"type": "string"})), "only string"),
    ("null", schema(v=prop("null", "Nil")), "only string, integer and boolean"),
    ("type list", schema(v=prop(["string", "null"], "R")), "only string, integer and boolean"),
    ("no type", schema(v={"x-mcp-header": "R"}), "only string, integer and boolean"),
    (
        "duplicate",
        schema(a=prop("string", "Region"), b=prop("string", "Region")),
        "names are compared case-insensitively",
    ),
    (
        "duplicate other case",
        schema(a=prop("string", "MyField"), b=prop("string", "myfield")),
        "names are compared case-insensitively",
    ),
    ("root", {"type": "object", "x-mcp-header": "Root"}, "not on a property reachable"),
    (
        "items",
        schema(v={"type": "array", "items": prop("string", "Item")}),
        "not on a property reachable",
    ),
    (
        "anyOf",
        {"type": "object", "anyOf": [schema(v=prop("string", "V"))]},
        "not on a property reachable",
    ),
    (
        "if/then",
        {"type": "object", "if": {}, "then": schema(v=prop("string", "V"))},
        "not on a property reachable",
    ),
    ("$defs", {"type": "object", "$defs": {"d": prop("string", "D")}}, "not on a property"),
    (
        "nested under items",
        schema(v={"type": "array", "items": schema(w=prop("string", "W"))}),
        "not on a property reachable",
    ),
    (
        "patternProperties",
        {"type": "object", "patternProperties": {"^a": prop("string", "A")}},
        "not on a property reachable",
    ),
]


@pytest.mark.parametrize(
    ("input_schema", "reason"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_invalid_annotations(input_schema: dict[str, Any], reason: str) -> None:
    problem = annotation_problem(input_schema)
    assert problem is not None
    assert reason in problem
    with pytest.raises(LocalProtocolError, match="invalid tool input schema"):
        param_headers(input_schema)


def test_value_in_follows_the_path() -> None:
    param = ParamHeader("Inner", ("outer", "inner"), "string")
    assert param.header == "Mcp-Param-Inner"
    assert param.where == "arguments.outer.inner"
    assert param.value_in({"outer": {"inner": "x"}}) == "x"
    assert param.value_in({"outer": {"inner": None}}) is None
    assert param.value_in({"outer": "not an object"}) is None
    assert param.value_in({}) is None
    assert param.value_in(None) is None


# -- the headers of a request -----------------------------------------------------------------

TOOL = Tool(
    name="execute_sql",
    input_schema=schema(
        region=prop("string", "Region"),
        priority=prop("integer", "Priority"),
        verbose=prop("boolean", "Verbose"),
        scope={"type": "object", "properties": {"tenant": prop("string", "Tenant")}},
        query=prop("string"),
    ),
)
MIRRORED = param_headers(TOOL.input_schema)


def call(**arguments: Any) -> dict[str, Any]:
    return {"name": "execute_sql", "arguments": arguments}


@pytest.mark.parametrize(
    ("method", "params", "tool", "expected"),
    [
        ("tools/list", None, None, {"Mcp-Method": "tools/list"}),
        ("tools/list", {}, None, {"Mcp-Method": "tools/list"}),
        (
            "resources/read",
            {"uri": "file:///projects/myapp/config.json"},
            None,
            {"Mcp-Method": "resources/read", "Mcp-Name": "file:///projects/myapp/config.json"},
        ),
        (
            "prompts/get",
            {"name": "résumé"},
            None,
            {"Mcp-Method": "prompts/get", "Mcp-Name": b64("résumé")},
        ),
        (
            "tools/call",
            call(region="us-west1", query="SELECT 1"),
            None,  # without the definition: no Mcp-Param
            {"Mcp-Method": "tools/call", "Mcp-Name": "execute_sql"},
        ),
        (
            "tools/call",
            call(region="us-west1", priority=42, verbose=False, query="SELECT 1"),
            TOOL,
            {
                "Mcp-Method": "tools/call",
                "Mcp-Name": "execute_sql",
                "Mcp-Param-Region": "us-west1",
                "Mcp-Param-Priority": "42",
                "Mcp-Param-Verbose": "false",
            },
        ),
        (
            "tools/call",
            call(region=" padded ", verbose=None, scope={"tenant": "Zürich"}),
            TOOL,
            {
                "Mcp-Method": "tools/call",
                "Mcp-Name": "execute_sql",
                "Mcp-Param-Region": b64(" padded "),
                "Mcp-Param-Tenant": b64("Zürich"),
            },
        ),
        ("tools/list", {}, TOOL, {"Mcp-Method": "tools/list"}),
    ],
)
def test_headers_for_request(
    method: str, params: dict[str, Any] | None, tool: Tool | None, expected: dict[str, str]
) -> None:
    headers = headers_for_request(method, params, tool)
    assert headers == expected
    # What the client sends, the server accepts.
    received = {name.lower(): value for name, value in headers.items()}
    assert request_header_problem(method, params, received, MIRRORED if tool else ()) is None


@pytest.mark.parametrize(
    ("method", "params", "tool", "match"),
    [
        ("tools/call", call(region="x"), Tool(name="other", input_schema=schema()), "not the one"),
        ("tools/call", call(priority=1.5), TOOL, r"arguments\.priority"),
        ("tools/call", call(priority=2**53), TOOL, "safe integer range"),
        ("tools/call", call(region={"a": 1}), TOOL, "cannot be mirrored"),
        (
            "tools/call",
            {"name": "bad", "arguments": {}},
            Tool(name="bad", input_schema=schema(v=prop("number", "V"))),
            "invalid tool input schema",
        ),
        ("tools/lïst", {}, None, "Mcp-Method"),
        ("", {}, None, "Mcp-Method"),
    ],
)
def test_headers_for_request_refuses(
    method: str, params: dict[str, Any], tool: Tool | None, match: str
) -> None:
    with pytest.raises(LocalProtocolError, match=match):
        headers_for_request(method, params, tool)


# -- the server's check -----------------------------------------------------------------------


def sent(**headers: str) -> dict[str, str]:
    """Lower-case header names, as the server reads them; ``_`` stands for ``-``."""
    out = {"mcp-method": "tools/call", "mcp-name": "execute_sql"}
    out.update({name.replace("_", "-").lower(): value for name, value in headers.items()})
    return {name: value for name, value in out.items() if value != "-"}


@pytest.mark.parametrize(
    ("params", "headers", "problem"),
    [
        # Matching headers.
        (call(query="q"), sent(), None),
        (call(region="us-west1"), sent(mcp_param_region="us-west1"), None),
        (call(region="Hello"), sent(mcp_param_region="=?base64?SGVsbG8=?="), None),
        (call(region="SGVsbG8="), sent(mcp_param_region="SGVsbG8="), None),
        (call(region=" padded "), sent(mcp_param_region=b64(" padded ")), None),
        (call(region="世界"), sent(mcp_param_region=b64("世界")), None),
        (call(region="a\tb"), sent(mcp_param_region="a\tb"), None),  # tolerated unencoded
        (call(priority=42), sent(mcp_param_priority="42"), None),
        (call(priority=42), sent(mcp_param_priority="42.0"), None),  # numerically equal
        (call(priority=42.0), sent(mcp_param_priority="42"), None),
        (call(priority=-7), sent(mcp_param_priority="-7"), None),
        (call(priority=0), sent(mcp_param_priority="0"), None),
        (call(verbose=True), sent(mcp_param_verbose="true"), None),
        (call(verbose=None), sent(), None),  # null: no header expected
        (call(scope={"tenant": "t1"}), sent(mcp_param_tenant="t1"), None),
        (call(scope={}), sent(), None),
        (call(region="r"), sent(mcp_param_region="r", mcp_param_other="ignored"), None),
        # Mismatches.
        (call(region="us-west1"), sent(mcp_param_region="eu-west1"), "does not match"),
        (call(region="us-west1"), sent(), "Mcp-Param-Region header is required"),
        (call(), sent(mcp_param_region="us-west1"), "arguments.region has no value"),
        (call(region=None), sent(mcp_param_region="x"), "arguments.region has no value"),
        (call(region="Hello"), sent(mcp_param_region="=?base64?SGVsbG8?="), "Base64"),
        (call(region="Hello"), sent(mcp_param_region="=?base64?SGVs!!!bG8=?="), "Base64"),
        (call(region="x"), sent(mcp_param_region=b64("y")), "does not match"),
        (call(region=" x"), sent(mcp_param_region="x"), "does not match"),
        (call(region="caf\xe9"), sent(mcp_param_region="caf\xe9"), "may not carry"),
        (call(priority=42), sent(mcp_param_priority="43"), "does not match"),
        (call(priority=42), sent(mcp_param_priority="forty-two"), "is not a number"),
        (call(priority=42), sent(mcp_param_priority="0x2a"), "is not a number"),
        (call(priority=2**53), sent(mcp_param_priority=str(2**53)), "safe range"),
        (call(verbose=True), sent(mcp_param_verbose="True"), "does not match"),
        (call(verbose=True), sent(mcp_param_verbose="1"), "does not match"),
        (call(region=["a"]), sent(mcp_param_region="a"), "non-primitive"),
        (call(scope={"tenant": "t1"}), sent(), "arguments.scope.tenant"),
        # The standard headers.
        (call(), sent(mcp_method="-"), "Mcp-Method header is required"),
        (call(), sent(mcp_method="tools/list"), "does not match the body's method"),
        (call(), sent(mcp_name="-"), "Mcp-Name header is required"),
        (call(), sent(mcp_name="other"), "Mcp-Name does not match params.name"),
        (call(), sent(mcp_name="=?base64?!?="), "Mcp-Name: "),
        (call(), sent(mcp_name=b64("execute_sql")), None),
    ],
)
def test_request_header_problem(
    params: dict[str, Any], headers: dict[str, str], problem: str | None
) -> None:
    found = request_header_problem("tools/call", params, headers, MIRRORED)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_only_tools_call_mirrors_parameters() -> None:
    # Another method ignores Mcp-Param-*; a tool without annotations expects none.
    headers = {"mcp-method": "tools/list", "mcp-param-region": "x"}
    assert request_header_problem("tools/list", {}, headers, MIRRORED) is None
    assert request_header_problem("tools/call", call(region="x"), sent(), ()) is None
