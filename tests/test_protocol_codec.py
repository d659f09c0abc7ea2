"""The JSON-RPC message rules, table-driven, on the sans-I/O codec (no event loop)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

import msgspec
import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import (
    DecodedResponse,
    DecodeFailure,
    Limits,
    NotificationReceived,
    RequestReceived,
    decode_message,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from mcpkit.types import Annotations, CallToolResult, TextContent

PARSE, INVALID, NOT_FOUND, PARAMS = -32700, -32600, -32601, -32602


def outcome(data: bytes, limits: Limits | None = None) -> tuple[Any, ...]:
    """Classify a message into a comparable tuple."""
    msg = decode_message(data, limits) if limits else decode_message(data)
    if isinstance(msg, RequestReceived):
        return ("request", msg.request_id, msg.method)
    if isinstance(msg, NotificationReceived):
        return ("notification", msg.method)
    if isinstance(msg, DecodedResponse):
        if msg.problem is not None and msg.error is None:
            return ("response-invalid", msg.id)
        if msg.error is not None:
            return ("response-error", msg.id, msg.error.code)
        return ("response", msg.id)
    assert isinstance(msg, DecodeFailure)
    return ("reply" if msg.reply else "drop", msg.error.code, msg.id)


REQUEST_CASES: list[tuple[str, bytes, tuple[Any, ...]]] = [
    ("int id", b'{"jsonrpc":"2.0","id":1,"method":"ping"}', ("request", 1, "ping")),
    ("string id", b'{"jsonrpc":"2.0","id":"1","method":"ping"}', ("request", "1", "ping")),
    ("negative id", b'{"jsonrpc":"2.0","id":-7,"method":"ping"}', ("request", -7, "ping")),
    ("empty string id", b'{"jsonrpc":"2.0","id":"","method":"ping"}', ("request", "", "ping")),
    (
        "2^64 id",
        b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
        ("request", 2**64, "ping"),
    ),
    (
        "10^30 id",
        b'{"jsonrpc":"2.0","id":1000000000000000000000000000000,"method":"ping"}',
        ("request", 10**30, "ping"),
    ),
    (
        "whitespace",
        b' {\n"jsonrpc" : "2.0" ,\t"id" : 3 , "method" : "ping" } ',
        ("request", 3, "ping"),
    ),
    ("params object", b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}', ("request", 1, "m")),
    ("member order", b'{"method":"ping","id":9,"jsonrpc":"2.0"}', ("request", 9, "ping")),
    (
        "nested id keys are fine",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":2,"method":"x"}}',
        ("request", 1, "m"),
    ),
    (
        "escaped method",
        b'{"jsonrpc":"2.0","id":1,"method":"tools\\/list"}',
        ("request", 1, "tools/list"),
    ),
    # Invalid ids: -32600 with id null, never a notification.
    ("float id 1.5", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', ("reply", INVALID, None)),
    ("float id 1.0", b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', ("reply", INVALID, None)),
    ("exponent id", b'{"jsonrpc":"2.0","id":1e2,"method":"ping"}', ("reply", INVALID, None)),
    ("null id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', ("reply", INVALID, None)),
    ("true id", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', ("reply", INVALID, None)),
    ("false id", b'{"jsonrpc":"2.0","id":false,"method":"ping"}', ("reply", INVALID, None)),
    ("array id", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', ("reply", INVALID, None)),
    ("object id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', ("reply", INVALID, None)),
    # Envelope rules: -32600 echoing a readable id.
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":1,"method":"ping"}', ("reply", INVALID, 1)),
    ("jsonrpc number", b'{"jsonrpc":2.0,"id":1,"method":"ping"}', ("reply", INVALID, 1)),
    ("jsonrpc missing", b'{"id":1,"method":"ping"}', ("reply", INVALID, 1)),
    (
        "request with result",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
        ("reply", INVALID, 1),
    ),
    (
        "request with error",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1,"message":"x"}}',
        ("reply", INVALID, 1),
    ),
    ("method number", b'{"jsonrpc":"2.0","id":1,"method":5}', ("reply", INVALID, 1)),
    ("method null", b'{"jsonrpc":"2.0","id":1,"method":null}', ("reply", INVALID, 1)),
    (
        "unknown member",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}',
        ("reply", INVALID, 1),
    ),
    (
        "duplicate method",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}',
        ("reply", INVALID, None),
    ),
    ("duplicate id", b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', ("reply", INVALID, None)),
    (
        "duplicate via escape",
        b'{"jsonrpc":"2.0","\\u0069d":1,"id":2,"method":"ping"}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate params",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":{"a":1}}',
        ("reply", INVALID, None),
    ),
    # Spaces inside a scalar string must not let a duplicate pass the length proofs of
    # the fast paths (the duplicate's 7 extra bytes against 7 spaces).
    (
        "duplicate id, spaces in method",
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"a       b"}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate method, spaces in id",
        b'{"jsonrpc":"2.0","id":"a             b","method":"m","method":"m"}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate id, spaced",
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate params, spaced",
        b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}, "params": {"a": 1}}',
        ("reply", INVALID, None),
    ),
    # Python's json.dumps style (params last): the spaces before params are counted
    # against the id, so a duplicate's bytes must not pass for spaces.
    (
        "duplicate id, spaced, params last",
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "m", "params": {}}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate id, spaces in method, spaced, params last",
        b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "a       b", "params": {}}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate params, spaced, params last",
        b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": 1}, "params": {}}',
        ("reply", INVALID, None),
    ),
    # The slack proof (at most 7 spare bytes, one a space before params' value): a
    # duplicate (7 bytes at least) plus that space is one byte too many.
    (
        "duplicate id, a space before params",
        b'{"jsonrpc":"2.0","id":1,"id":42,"method":"m","params": {}}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate id, no space before params",
        b'{"jsonrpc":"2.0","id":1,"id":42,"method":"m","params":{}}',
        ("reply", INVALID, None),
    ),
    (
        "duplicate id, spaces in method, a space before params",
        b'{"jsonrpc":"2.0","id":1,"id":42,"method":"a b","params": {}}',
        ("reply", INVALID, None),
    ),
    (
        "a space before params only",
        b'{"jsonrpc":"2.0","id":42,"method":"m","params": {"a": 1}}',
        ("request", 42, "m"),
    ),
    (
        "7 spare bytes, not all spaces",
        b'{ "jsonrpc":\t"2.0",\n"id":\r42 ,"method":"tools\\/call","params": {}}',
        ("request", 42, "tools/call"),
    ),
    (
        "spaced, id 0",
        b'{"jsonrpc": "2.0", "id": 0, "method": "m", "params": {}}',
        ("request", 0, "m"),
    ),
    (
        "spaced, 8 spare bytes",
        b'{"jsonrpc": "2.0",  "id": 5, "method": "m", "params": {}}',
        ("request", 5, "m"),
    ),
    (
        "spaced, 19-digit id",
        b'{"jsonrpc": "2.0", "id": 1000000000000000000, "method": "m", "params": {}}',
        ("request", 10**18, "m"),
    ),
    (
        "spaced, negative id",
        b'{"jsonrpc": "2.0", "id": -5, "method": "m", "params": {}}',
        ("request", -5, "m"),
    ),
    (
        "spaced, trailing newline",
        b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}}\n',
        ("request", 1, "m"),
    ),
    (
        "spaced request",
        b'{"jsonrpc": "2.0", "id": 7, "method": "m", "params": {"a": [1, 2], "b": " x "}}',
        ("request", 7, "m"),
    ),
    (
        "pretty-printed request",
        b'{\n  "jsonrpc": "2.0",\r\n\t"id": "a b",\n  "method": "m",\n  "params": {}\n}',
        ("request", "a b", "m"),
    ),
    (
        "spaced, params first",
        b'{"jsonrpc": "2.0", "params": {"a": " "}, "id": 3, "method": "m"}',
        ("request", 3, "m"),
    ),
    (
        "spaced, params first, duplicate id",
        b'{"jsonrpc": "2.0", "params": {"a": " "}, "id": 3, "method": "m", "id": 4}',
        ("reply", INVALID, None),
    ),
    (
        "spaced notification",
        b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": 1}}',
        ("notification", "notifications/x"),
    ),
    ("method with a space", b'{"jsonrpc":"2.0","id":1,"method":"a b"}', ("request", 1, "a b")),
    (
        "params object, not last",
        b'{"jsonrpc":"2.0","method":"m","params":{"a":"}"},"id":1}',
        ("request", 1, "m"),
    ),
    *[
        (
            f"id {rid}",
            b'{"jsonrpc":"2.0","id":%d,"method":"m","params":{}}' % rid,
            ("request", rid, "m"),
        )
        for rid in (0, 9, 10, 99, 100, 10**18, 10**19 - 1, 10**19, 10**20, -1, -10)
    ],
    ("id -0", b'{"jsonrpc":"2.0","id":-0,"method":"m"}', ("request", 0, "m")),
    # params must be an object: string/number/bool/null -32600, array -32602.
    ("params string", b'{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}', ("reply", INVALID, 1)),
    ("params number", b'{"jsonrpc":"2.0","id":1,"method":"m","params":3}', ("reply", INVALID, 1)),
    ("params true", b'{"jsonrpc":"2.0","id":1,"method":"m","params":true}', ("reply", INVALID, 1)),
    ("params null", b'{"jsonrpc":"2.0","id":1,"method":"m","params":null}', ("reply", INVALID, 1)),
    ("params array", b'{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}', ("reply", PARAMS, 1)),
    (
        "params array of objects, last",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":[{}]}',
        ("reply", PARAMS, 1),
    ),
    # Trailing whitespace (a CRLF line's CR, a body's newline): the byte before the
    # closing brace is not params' last byte, so it says nothing about params' type.
    *[
        (
            f"params {kind} {name}, trailing {ws!r}",
            b'{"jsonrpc":"2.0","id":%s,"method":"m","params":%s}%s' % (rid, value, ws),
            ("reply", code, json.loads(rid)),
        )
        for kind, value, code in (("string", b'"x"', INVALID), ("array", b"[1]", PARAMS))
        for name, rid in (("int id", b"1"), ("string id", b'"1"'))
        for ws in (b"\n", b"\r", b" ")
    ],
    (
        "notification params string, trailing newline",
        b'{"jsonrpc":"2.0","method":"m","params":"}"}\n',
        ("drop", INVALID, None),
    ),
    (
        "params string ending in a brace",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":"}"}',
        ("reply", INVALID, 1),
    ),
    # Not a message at all.
    ("empty object", b"{}", ("reply", INVALID, None)),
    ("only jsonrpc", b'{"jsonrpc":"2.0"}', ("reply", INVALID, None)),
    ("top-level string", b'"ping"', ("reply", INVALID, None)),
    ("top-level number", b"42", ("reply", INVALID, None)),
    ("top-level null", b"null", ("reply", INVALID, None)),
    (
        "batch (not negotiated)",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        ("reply", INVALID, None),
    ),
    ("empty batch", b"[]", ("reply", INVALID, None)),
]

NOTIFICATION_CASES: list[tuple[str, bytes, tuple[Any, ...]]] = [
    (
        "plain",
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        ("notification", "notifications/initialized"),
    ),
    ("with params", b'{"jsonrpc":"2.0","method":"n","params":{"a":[1]}}', ("notification", "n")),
    # Invalid notifications are dropped (reply=False), never answered.
    ("bad jsonrpc", b'{"jsonrpc":"1.0","method":"n"}', ("drop", INVALID, None)),
    ("params array", b'{"jsonrpc":"2.0","method":"n","params":[1]}', ("drop", INVALID, None)),
    ("params string", b'{"jsonrpc":"2.0","method":"n","params":"x"}', ("drop", INVALID, None)),
    ("unknown member", b'{"jsonrpc":"2.0","method":"n","x":1}', ("drop", INVALID, None)),
    ("with result", b'{"jsonrpc":"2.0","method":"n","result":{}}', ("drop", INVALID, None)),
    ("method number", b'{"jsonrpc":"2.0","method":1}', ("drop", INVALID, None)),
    ("duplicate method", b'{"jsonrpc":"2.0","method":"a","method":"b"}', ("drop", INVALID, None)),
]

RESPONSE_CASES: list[tuple[str, bytes, tuple[Any, ...]]] = [
    ("result", b'{"jsonrpc":"2.0","id":1,"result":{}}', ("response", 1)),
    ("string id result", b'{"jsonrpc":"2.0","id":"1","result":{"a":1}}', ("response", "1")),
    (
        "big id result",
        b'{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}',
        ("response", 2**64),
    ),
    (
        "error",
        b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}',
        ("response-error", 1, -32601),
    ),
    (
        "error with data",
        b'{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"x","data":[1]}}',
        ("response-error", 1, 5),
    ),
    # Both: the error is authoritative, the result never delivered.
    (
        "both",
        b'{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":{"code":-1,"message":"x"}}',
        ("response-error", 1, -1),
    ),
    ("neither", b'{"jsonrpc":"2.0","id":1}', ("response-invalid", 1)),
    ("result array", b'{"jsonrpc":"2.0","id":1,"result":[]}', ("response-invalid", 1)),
    ("result string", b'{"jsonrpc":"2.0","id":1,"result":"ok"}', ("response-invalid", 1)),
    ("result null", b'{"jsonrpc":"2.0","id":1,"result":null}', ("response-invalid", 1)),
    ("error not object", b'{"jsonrpc":"2.0","id":1,"error":"bad"}', ("response-invalid", 1)),
    (
        "error code float",
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}',
        ("response-invalid", 1),
    ),
    (
        "error without message",
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1}}',
        ("response-invalid", 1),
    ),
    ("bad jsonrpc", b'{"jsonrpc":"1.0","id":1,"result":{}}', ("response-invalid", 1)),
    ("unknown member", b'{"jsonrpc":"2.0","id":1,"result":{},"x":0}', ("response-invalid", 1)),
    # Responses that cannot be matched to a call are dropped and logged.
    (
        "null id error",
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        ("drop", INVALID, None),
    ),
    ("no id result", b'{"jsonrpc":"2.0","result":{}}', ("drop", INVALID, None)),
    ("float id result", b'{"jsonrpc":"2.0","id":1.5,"result":{}}', ("drop", INVALID, None)),
]

JSON_CASES: list[tuple[str, bytes, tuple[Any, ...]]] = [
    ("invalid utf-8", b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', ("reply", PARSE, None)),
    ("overlong utf-8", b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}', ("reply", PARSE, None)),
    (
        "encoded surrogate",
        b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}',
        ("reply", PARSE, None),
    ),
    ("bom", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', ("reply", PARSE, None)),
    ("utf-16", '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"), ("reply", PARSE, None)),
    (
        "utf-16-le",
        '{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16-le"),
        ("reply", PARSE, None),
    ),
    ("NaN", b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}', ("reply", PARSE, None)),
    (
        "Infinity",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":Infinity}}',
        ("reply", PARSE, None),
    ),
    (
        "-Infinity",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-Infinity}}',
        ("reply", PARSE, None),
    ),
    (
        "lone high surrogate",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\ud800"}}',
        ("reply", PARSE, None),
    ),
    (
        "lone low surrogate",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\udc00"}}',
        ("reply", PARSE, None),
    ),
    (
        "surrogate then letter",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\ud800a"}}',
        ("reply", PARSE, None),
    ),
    ("truncated", b'{"jsonrpc":"2.0","id":1,"method":"ping"', ("reply", PARSE, None)),
    ("trailing garbage", b'{"jsonrpc":"2.0","id":1,"method":"ping"} x', ("reply", PARSE, None)),
    ("two messages", b'{"jsonrpc":"2.0","id":1,"method":"ping"}{}', ("reply", PARSE, None)),
    ("single quotes", b"{'jsonrpc':'2.0'}", ("reply", PARSE, None)),
    ("empty", b"", ("reply", PARSE, None)),
    # Syntactically valid; the typed params decoder refuses the value later (-32602).
    (
        "number out of range",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}}',
        ("request", 1, "m"),
    ),
    (
        "valid pair",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\ud83d\\ude00"}}',
        ("request", 1, "m"),
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(d, e, id=n)
        for n, d, e in REQUEST_CASES + NOTIFICATION_CASES + RESPONSE_CASES + JSON_CASES
    ],
)
def test_classification(data: bytes, expected: tuple[Any, ...]) -> None:
    assert outcome(data) == expected


#: Integer ids at both ends of every digit count the codec's compactness proof knows.
_BOUNDARY_IDS = sorted({b for d in range(1, 20) for b in (10 ** (d - 1), 10**d - 1)} | {0})


@pytest.mark.parametrize("rid", _BOUNDARY_IDS)
def test_compact_ids_at_every_digit_count(rid: int) -> None:
    """The compactness proof's length tables neither refuse nor (with a duplicated id
    padding the message to another id's length) wrongly accept: a duplicate is -32600
    whatever the two ids' lengths."""
    request = b'{"jsonrpc":"2.0","id":%d,"method":"m"}' % rid
    assert outcome(request) == ("request", rid, "m")
    assert outcome(b'{"jsonrpc":"2.0","id":%d,"result":{}}' % rid) == ("response", rid)
    for other in _BOUNDARY_IDS:
        for data in (
            b'{"jsonrpc":"2.0","id":%d,"id":%d,"method":"m"}' % (other, rid),
            b'{"jsonrpc":"2.0","id":%d,"method":"m","params":{},"id":%d}' % (other, rid),
        ):
            assert outcome(data) == ("reply", INVALID, None), data
        response = b'{"jsonrpc":"2.0","id":%d,"result":{},"id":%d}' % (other, rid)
        assert outcome(response) == ("response-invalid", rid), response


@pytest.mark.parametrize(
    ("limits", "data", "expected"),
    [
        pytest.param(
            Limits(max_message_bytes=40),
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            ("request", 1, "ping"),
            id="at size limit",
        ),
        pytest.param(
            Limits(max_message_bytes=39),
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            ("reply", PARSE, None),
            id="one byte over",
        ),
        pytest.param(
            Limits(max_depth=4),
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{}]}}',
            ("request", 1, "m"),
            id="at depth limit",
        ),
        pytest.param(
            Limits(max_depth=4),
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"b":[]}]}}',
            ("reply", PARSE, None),
            id="one level over",
        ),
        pytest.param(
            Limits(max_depth=3),
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"[[[[[[[[{{{{{{"}}',
            ("request", 1, "m"),
            id="brackets in strings do not count",
        ),
        pytest.param(
            Limits(max_depth=3),
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\"[[[[[[[[[[\\""}}',
            ("request", 1, "m"),
            id="escaped quotes in strings",
        ),
        pytest.param(
            Limits(max_depth=3),
            b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[],"b":[],"c":[],"d":[]}}',
            ("request", 1, "m"),
            id="wide is not deep",
        ),
        pytest.param(
            Limits(max_depth=4),
            '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"é":[]}]}}'.encode(),
            ("reply", PARSE, None),
            id="not ASCII, one level over",
        ),
        pytest.param(
            Limits(max_depth=5),
            '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"é":[]}]}}'.encode(),
            ("request", 1, "m"),
            id="not ASCII, at depth limit",
        ),
    ],
)
def test_limits(limits: Limits, data: bytes, expected: tuple[Any, ...]) -> None:
    assert outcome(data, limits) == expected


@pytest.mark.parametrize("depth", [129, 1_000, 100_000])
def test_deep_nesting_is_a_parse_error_not_a_recursion_error(depth: int) -> None:
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":' + b"[" * depth + b"]" * depth + b"}}"
    )
    assert outcome(data) == ("reply", PARSE, None)


@pytest.mark.parametrize(
    "data", [b"[" * 100_000, b"{" * 100_000, b'{"a":' * 100_000, b"[" * 50 + b"]"]
)
def test_unbalanced_input_is_a_parse_error(data: bytes) -> None:
    assert outcome(data) == ("reply", PARSE, None)


def test_default_limits_are_documented_values() -> None:
    limits = Limits()
    assert limits.max_message_bytes == 16 * 1024 * 1024
    assert limits.max_depth == 128


@pytest.mark.parametrize("kwargs", [{"max_message_bytes": 0}, {"max_depth": 0}, {"max_depth": 513}])
def test_limits_are_validated(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Limits(**kwargs)


# -- encoding ---------------------------------------------------------------------------


@pytest.mark.parametrize("rid", [0, 1, -1, 2**64, 10**30, "", "1", "ünïcode"])
def test_ids_round_trip_with_type_and_value(rid: int | str) -> None:
    request = encode_request(rid, "ping")
    decoded = decode_message(request)
    assert isinstance(decoded, RequestReceived)
    assert decoded.request_id == rid
    assert type(decoded.request_id) is type(rid)
    response = decode_message(encode_result(rid, {}))
    assert isinstance(response, DecodedResponse)
    assert response.id == rid
    assert type(response.id) is type(rid)
    # The wire form of a big integer is its exact digits, never a float.
    assert json.loads(request)["id"] == rid


def test_encoded_messages_are_single_line_compact_json() -> None:
    data = encode_result(1, CallToolResult(content=[TextContent(text="a\nb\r\u2028")]))
    assert b"\n" not in data
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "a\nb\r\u2028"}]},
    }


@pytest.mark.parametrize(
    "result",
    [
        pytest.param({"x": float("nan")}, id="nan in dict"),
        pytest.param({"x": [1.0, float("inf")]}, id="inf in list"),
        pytest.param({"x": {"y": float("-inf")}}, id="-inf nested"),
        pytest.param({"x": "\ud800"}, id="lone surrogate"),
        pytest.param({"x": object()}, id="unserialisable"),
    ],
)
def test_unencodable_results_raise_local_error(result: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        encode_result(1, result)


def test_nan_inside_a_struct_is_caught() -> None:
    class Weird(msgspec.Struct):
        value: float

    with pytest.raises(LocalProtocolError, match="NaN"):
        encode_result(1, {"w": Weird(float("nan"))})


class _Scored(msgspec.Struct):
    score: float
    label: str = ""


class _Block(msgspec.Struct):
    text: str
    scored: _Scored | None = None
    extra: Any = None


@dataclasses.dataclass
class _Point:
    x: float
    y: float


_NAN = float("nan")
#: Three sizes, one per way a message is checked for NaN and infinity (which msgspec writes
#: as ``null``): a few hundred bytes (scanned for ``null``), a few KiB (proved float-free by
#: its MessagePack encoding), more than 8 KiB (a walk over its objects first).
_LONG_SIZES = [
    pytest.param(100, id="scan"),
    pytest.param(2100, id="pack"),
    pytest.param(9000, id="walk"),
]
#: U+02C0 is b"\xcb\x80" in UTF-8: MessagePack's float64 marker byte inside a string.
_MARKER_TEXT = "\u02c0"


def _long_non_finite(long: str) -> list[tuple[str, Any]]:
    """(where the NaN or infinity hides, a payload holding it): every place a float can be,
    what the walk does not know, past its budget, and where the MessagePack proof cannot
    be used (an integer it cannot encode) or is fooled (its marker byte in a string)."""
    return [
        ("dict value", {"t": long, "x": _NAN}),
        ("negative infinity in a list", {"t": long, "x": [1.0, float("-inf")]}),
        ("struct float field", {"t": long, "b": _Block(long, _Scored(float("inf")))}),
        ("struct Any field", {"b": _Block(long, extra={"deep": [[_NAN]]})}),
        ("in a tuple", {"t": long, "x": (1, (2.0, _NAN))}),
        ("dataclass field", {"t": long, "x": _Point(1.0, _NAN)}),
        ("past the walk's budget", {"t": long, "x": [{"v": 1.0} for _ in range(100)] + [_NAN]}),
        (
            "content annotations",
            CallToolResult(
                content=[TextContent(text=long, annotations=Annotations(priority=_NAN))]
            ),
        ),
        (
            "structured content",
            CallToolResult(content=[], structured_content={"t": long, "x": _NAN}),
        ),
        # Structs are not type-checked when built: a field declared as a string can hold one.
        (
            "a float where a struct declares a string",
            CallToolResult(content=[TextContent(text=long), TextContent(text=cast(Any, _NAN))]),
        ),
        ("beside an integer MessagePack cannot encode", {"t": long, "n": 2**70, "x": _NAN}),
        ("beside the float64 marker in a string", {"t": long + _MARKER_TEXT, "x": _NAN}),
    ]


@pytest.mark.parametrize("size", _LONG_SIZES)
@pytest.mark.parametrize(
    "case", range(len(_long_non_finite(""))), ids=[name for name, _ in _long_non_finite("")]
)
def test_non_finite_floats_in_long_results_are_caught(size: int, case: int) -> None:
    _, result = _long_non_finite("x" * size)[case]
    with pytest.raises(LocalProtocolError, match="NaN and infinity are not JSON"):
        encode_result(1, result)
    with pytest.raises(LocalProtocolError, match="NaN and infinity are not JSON"):
        encode_request(1, "m", result)


def _long_finite(long: str) -> list[Any]:
    return [
        {"t": long, "x": None, "y": [None, 1.5, -0.0]},
        {"b": _Block(long, _Scored(1e308, "null"), extra={"k": [1.0, None]})},
        {"t": long, "x": [{"v": 1.0} for _ in range(100)]},
        CallToolResult(
            content=[TextContent(text=long + "null", annotations=Annotations(priority=0.5))],
            structured_content=[0.25, None],
        ),
        {"t": long + "null", "n": 2**70},
        {"t": long + _MARKER_TEXT + "null", "x": None},
    ]


@pytest.mark.parametrize("size", _LONG_SIZES)
@pytest.mark.parametrize("case", range(len(_long_finite(""))))
def test_finite_long_results_encode(size: int, case: int) -> None:
    result = _long_finite("x" * size)[case]
    assert json.loads(encode_result(1, result))["result"] == json.loads(msgspec.json.encode(result))


def test_null_values_are_fine() -> None:
    assert json.loads(encode_result(1, {"x": None}))["result"] == {"x": None}


class _Pair(msgspec.Struct, array_like=True):
    first: int
    second: str


# What is judged is the JSON written, not the Python type: an array_like struct is an
# array on the wire (it was let through as "a struct"), a dataclass is an object.
_NOT_OBJECTS = [[1], "x", 3, None, "}", _Pair(1, "}"), (1, {}), msgspec.Raw(b"[{}]")]


@pytest.mark.parametrize("bad", _NOT_OBJECTS, ids=repr)
def test_result_and_params_must_be_objects(bad: Any) -> None:
    with pytest.raises(LocalProtocolError, match="must be an object"):
        encode_result(1, bad)
    with pytest.raises(LocalProtocolError, match="must be an object"):
        encode_request(1, "m", bad)
    with pytest.raises(LocalProtocolError, match="must be an object"):
        encode_notification("n", bad)


@pytest.mark.parametrize(
    "good", [{}, {"a": [1]}, _Point(1.0, 2.0), msgspec.Raw(b'{"a":[]}'), _Scored(0.5)], ids=repr
)
def test_result_and_params_objects_encode(good: Any) -> None:
    expected = json.loads(msgspec.json.encode(good))
    assert json.loads(encode_result(1, good))["result"] == expected
    assert json.loads(encode_request(1, "m", good))["params"] == expected
    assert json.loads(encode_notification("n", good))["params"] == expected


def test_error_encoding() -> None:
    assert json.loads(encode_error(None, PARSE, "Parse error")) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": PARSE, "message": "Parse error"},
    }
    assert json.loads(encode_error("a", 1, "m", {"k": [1]}))["error"]["data"] == {"k": [1]}


def test_error_with_unencodable_data_is_still_sent() -> None:
    decoded = json.loads(encode_error(1, -32603, "bad \ud800 message", {"x": float("nan")}))
    assert decoded["error"]["code"] == -32603
    assert "data" not in decoded["error"]
