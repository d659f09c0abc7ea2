"""Decoding and classifying JSON-RPC messages, following MCP's message rules to the letter.

Decoding is two-stage (msgspec ``Raw``): the envelope is decoded and classified here, and the
``params`` / ``result`` bytes stay undecoded until the layer that knows their type asks. The
classification answers every malformed input with the precise JSON-RPC error and the right
id (JSON-RPC 2.0 sections 4, 5 and 5.1; MCP ``basic/index.mdx`` "Messages"):

* a request's ``id`` is a string or an integer; anything else is -32600 with ``"id": null``
  and the message is never treated as a notification;
* ``params``, when present, is an object: an array is -32602, any other value -32600;
* a request that also carries ``result`` or ``error``, a wrong ``jsonrpc``, an unknown or a
  duplicated envelope member is -32600;
* a notification is never answered: an invalid one is reported for logging only;
* a response carrying both ``result`` and ``error`` is an error response, one with neither
  or with a non-object ``result`` fails the pending call.

Every input is bounded before decoding: size and nesting depth (see :class:`Limits`), strict
UTF-8 without BOM, no NaN/Infinity, no lone surrogates (msgspec rejects those itself).

Speed: every envelope member decodes as ``Raw`` in one pass. A message whose length equals
the sum of its members' lengths plus the minimal punctuation is *compact*: it has no room
for whitespace, unknown or duplicated members, so it skips the duplicate check entirely.
Senders that pretty-print take the general path, which is exact but slower.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..types import JSONRPC_VERSION, ErrorCode, ErrorObject, RequestId
from ._encode import is_object
from ._events import NotificationReceived, RequestReceived
from ._limits import DEFAULT_LIMITS, Limits

__all__ = ["DecodeFailure", "DecodedMessage", "DecodedResponse", "decode_message"]


class DecodedResponse(msgspec.Struct, frozen=True, gc=False):
    """A response: exactly one of ``result`` / ``error`` is set, or ``problem`` says why the
    message cannot be a valid response for ``id`` (the pending call then fails)."""

    id: RequestId
    result: Raw | None
    error: ErrorObject | None
    problem: str | None = None


class DecodeFailure(msgspec.Struct, frozen=True, gc=False):
    """A message that cannot be processed.

    Attributes:
        error: the JSON-RPC error describing the problem.
        id: the id to answer with (``None`` when it could not be read: ``"id": null``).
        reply: whether an error response must be sent; ``False`` for notifications and
            responses, which are never answered (they are only logged).
    """

    error: ErrorObject
    id: RequestId | None
    reply: bool


DecodedMessage = RequestReceived | NotificationReceived | DecodedResponse | DecodeFailure

_EMPTY: Final = Raw()
_V2: Final = Raw(b'"2.0"')
_NULL: Final = Raw(b"null")


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The fast path: every valid message decodes into this in one pass."""

    jsonrpc: Literal["2.0"]
    id: int | str | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: Raw = _EMPTY
    result: Raw = _EMPTY
    error: Raw = _EMPTY


_ENVELOPE_DECODER: Final = msgspec.json.Decoder(_Envelope)
_MEMBERS_DECODER: Final = msgspec.json.Decoder(dict[str, Raw])
_ID_DECODER: Final = msgspec.json.Decoder(int | str)
_STR_DECODER: Final = msgspec.json.Decoder(str)
_ERROR_DECODER: Final = msgspec.json.Decoder(ErrorObject)
_MEMBERS: Final = ("jsonrpc", "id", "method", "params", "result", "error")
_QUOTED: Final = {name: f'"{name}"'.encode() for name in _MEMBERS}

_BOM: Final = b"\xef\xbb\xbf"
_STRING_RE: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS: Final = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS: Final = bytes(set(range(256)) - set(b"[]{}"))
_KEY_RE: Final = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:')
_WHITESPACE: Final = b" \t\r\n"
#: _ID_DIGITS[n]: the non-negative integers written with exactly n - 6 digits (n counts
#: ',"id":' too); empty below 7.
_ID_DIGITS: Final = (
    *(range(0) for _ in range(7)),
    range(10),
    *(range(10**d, 10 ** (d + 1)) for d in range(1, 19)),
)
_KINDS: Final = {
    0x5B: "an array",
    0x7B: "an object",
    0x22: "a string",
    0x6E: "null",
    0x74: "a boolean",
    0x66: "a boolean",
}


def _failure(
    code: int, message: str, id: RequestId | None = None, reply: bool = True
) -> DecodeFailure:
    return DecodeFailure(ErrorObject(code=code, message=message), id, reply)


def _describe(raw: Raw) -> str:
    return _KINDS.get(memoryview(raw)[0], "a number")


def _too_deep(data: bytes, limit: int) -> bool:
    """Whether JSON arrays/objects nest deeper than ``limit`` (strings ignored).

    Strings are removed and innermost bracket pairs are deleted one level per pass, in C;
    after ``limit`` passes anything still pairing up nests deeper than the limit. (Only
    called for messages with more opening brackets than the limit: see _check_input.)
    """
    skeleton = _STRING_RE.sub(b"", data).translate(_BRACKETS, _NOT_BRACKETS)
    for _ in range(limit):
        if not skeleton:
            return False
        reduced = skeleton.replace(b"()", b"")
        if len(reduced) == len(skeleton):
            return False  # unbalanced leftovers: a syntax error for the decoder to report
        skeleton = reduced
    return b"()" in skeleton


def _has_duplicate(data: bytes, members: dict[str, Raw]) -> bool:
    """Whether an envelope member occurs twice (a parser-differential risk msgspec hides by
    keeping the last occurrence). ``members`` are the decoded (deduplicated) members."""
    if b"\\u" not in data and all(data.count(_QUOTED[name]) == 1 for name in members):
        return False
    # Cut the structured values out, leaving only the top-level keys and scalar values,
    # then compare the (unescaped) keys.
    skeleton = data
    for name in ("params", "result", "error"):
        raw = members.get(name)
        if raw:
            skeleton = skeleton.replace(bytes(raw), b"", 1)
    keys = []
    for token in _KEY_RE.findall(skeleton):
        try:
            keys.append(_STR_DECODER.decode(b'"' + token + b'"'))
        except msgspec.DecodeError:
            return True
    return len(keys) != len(set(keys))


def _check_input(data: bytes, limits: Limits) -> DecodeFailure | None:
    """Size, encoding and depth checks, run before any decoding."""
    size = len(data)
    if size > limits.max_message_bytes:
        return _failure(
            ErrorCode.PARSE_ERROR,
            f"Parse error: message of {size} bytes exceeds the limit of "
            f"{limits.max_message_bytes} bytes",
        )
    if not data.isascii():
        if data.startswith(_BOM):
            return _failure(ErrorCode.PARSE_ERROR, "Parse error: a byte order mark is not allowed")
        # msgspec does not check the UTF-8 of values it skips as Raw: check it here, once.
        # (ASCII, the common case, is valid UTF-8 by definition.)
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _failure(
                ErrorCode.PARSE_ERROR, f"Parse error: invalid UTF-8 at byte {exc.start}"
            )
    # Nesting deeper than the limit takes more opening brackets than the limit (and two
    # bytes per level). They are counted as what replace() removes: it finds a single
    # byte with memchr, several times cheaper than count() or translate() (which test
    # every byte) or a find() loop (a call per bracket) on CPython.
    limit = limits.max_depth
    if size <= 2 * limit:
        return None
    braces = size - len(data.replace(b"{", b""))
    if (braces > limit or braces + size - len(data.replace(b"[", b"")) > limit) and _too_deep(
        data, limit
    ):
        return _failure(
            ErrorCode.PARSE_ERROR,
            f"Parse error: JSON nests deeper than the limit of {limits.max_depth} levels",
        )
    return None


def decode_message(
    data: bytes, limits: Limits = DEFAULT_LIMITS, *, tolerant: bool = False
) -> DecodedMessage:
    """Decode and classify one framed message.

    Never raises for bad input: every problem comes back as a :class:`DecodeFailure` (or a
    :class:`DecodedResponse` with ``problem`` set when the pending call can be identified).

    ``tolerant`` accepts ``"params": null`` as absent params, a deviation some peers have.
    """
    size = len(data)
    # One cheap test covers the common case: small ASCII input needs none of these checks.
    if size > limits.trivially_within or not data.isascii():
        failure = _check_input(data, limits)
        if failure is not None:
            return failure
    try:
        env = _ENVELOPE_DECODER.decode(data)
    except msgspec.ValidationError:
        return _decode_slow(data, tolerant)  # not an object, or an unknown member
    except msgspec.DecodeError as exc:
        return _failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:  # only reachable with a very high configured max_depth
        return _failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")

    # The fast path: a compact message needs no duplicate check. The length each member
    # would have in compact form is computed from its decoded value; escapes, whitespace
    # and non-ASCII only make the real message longer, so equality proves compactness.
    # (Literals instead of named constants: this is the hottest code in mcpkit.)
    method = env.method
    if type(method) is str:
        params = env.params
        # Absent members are the very default objects (identity tests are the cheapest).
        # (jsonrpc is exactly "2.0": the struct's Literal type checked it.)
        if env.result is _EMPTY and env.error is _EMPTY:
            rid = env.id
            # '{"jsonrpc":"2.0","method":""}' is 29 bytes; ',"params":' 10; ',"id":' 6.
            # Every term is a lower bound of the real member's length, so rest >= 0.
            if params is _EMPTY:
                rest = size - 29 - len(method)
            else:
                rest = size - 39 - len(method) - len(params)
            if type(rid) is int:
                # Is the id exactly `rest - 6` digits long? A table of ranges, not
                # len(str(rid)), which costs more than the rest of this test. Negative
                # ids and "-0" fail it and take the exact path below.
                compact = rest < 26 and rid in _ID_DIGITS[rest]
                # Is params an object? Of the members left (no result, no error), only
                # params can hold an object: a compact message ending in "}}" has params
                # last, as an object. Otherwise find where its value starts:
                # '"params":' cannot occur unescaped inside the other (scalar) members, so
                # its first occurrence is the top-level member.
                if compact:
                    if params is _EMPTY:
                        return RequestReceived(rid, method, None)
                    if data[-2] == 0x7D or data[data.find(b'"params":') + 9] == 0x7B:
                        return RequestReceived(rid, method, params)
            else:
                # A notification, or a string id: ',"id":""' is 8 bytes.
                compact = rest == 0 if rid is UNSET else rest == 8 + len(rid)  # type: ignore[arg-type]
                if compact:
                    if params is _EMPTY:
                        return _received(rid, method, None)
                    if data[-2] == 0x7D or data[data.find(b'"params":') + 9] == 0x7B:
                        return _received(rid, method, params)
            # Not compact (pretty-printed, escaped, non-ASCII): valid as decoded unless a
            # member is duplicated, which the (slower) exact checks rule out. (A "}"
            # right before the closing brace ends the last member's value, an object:
            # a params, and the last one is what msgspec kept.)
            if (
                not compact
                and (params is _EMPTY or data[-2] == 0x7D or is_object(params))
                and (
                    _compact_but_spaces(data, rest, rid, method, params)
                    or not _has_duplicate(data, _present(rid, params))
                )
            ):
                return _received(rid, method, params or None)
    elif env.result and not env.error and type(env.id) is int:
        # '{"jsonrpc":"2.0","id":,"result":}' is 33 bytes.
        result = env.result
        if (
            size == 33 + len(str(env.id)) + len(result)
            and data[data.find(b'"result":') + 9] == 0x7B
        ):
            return DecodedResponse(env.id, result, None)
    return _decode_slow(data, tolerant)


def _compact_but_spaces(
    data: bytes, rest: int, rid: RequestId | UnsetType, method: str, params: Raw
) -> bool:
    """Whether the message is compact except for whitespace between its tokens (what
    pretty-printers add), which proves, as the compact test does, that no member is
    duplicated: ``rest`` is what the compact test left for the id.

    Whitespace is counted in the whole message and subtracted inside ``params``. A raw
    tab, CR or LF cannot occur inside a JSON string, but a space can: the scalar strings
    (``jsonrpc`` is exactly "2.0" here) must hold none, or counting could let a
    duplicate's extra bytes cancel out. Counting only some of the whitespace is still a
    proof (what is left uncounted is excess, and any excess fails it): spaces alone,
    counted with memchr by replace(), settle Python's ``json.dumps`` style; other
    whitespace takes the translate() that deletes all four.
    """
    if " " in method or (type(rid) is str and " " in rid):
        return False
    size = len(data)
    if params is _EMPTY:
        spaces = size - len(data.replace(b" ", b""))
    elif data[-2] == 0x7D:
        # params is last and ends right before the closing brace: count the spaces in
        # front of it only.
        head = data[: size - 1 - len(params)]
        spaces = len(head) - len(head.replace(b" ", b""))
    else:
        inner = bytes(params)
        spaces = size - len(data.replace(b" ", b"")) - len(inner) + len(inner.replace(b" ", b""))
    if _id_fits(rest - spaces, rid):
        return True
    inner = bytes(params) if params is not _EMPTY else b""
    rest -= size - len(data.translate(None, _WHITESPACE))
    rest += len(inner) - len(inner.translate(None, _WHITESPACE))
    return _id_fits(rest, rid)


def _id_fits(rest: int, rid: RequestId | UnsetType) -> bool:
    """Whether ``rest`` bytes are exactly what ``rid`` takes in compact form."""
    if rid is UNSET:
        return rest == 0
    if type(rid) is int:
        return 0 <= rest < 26 and rid in _ID_DIGITS[rest]
    assert isinstance(rid, str)
    return rest == 8 + len(rid)


def _received(
    rid: RequestId | UnsetType, method: str, params: Raw | None
) -> RequestReceived | NotificationReceived:
    if rid is UNSET:
        return NotificationReceived(method, params)
    return RequestReceived(rid, method, params)


def _present(rid: object, params: Raw) -> dict[str, Raw]:
    """The members of a request as _has_duplicate wants them (only params' bytes matter)."""
    members = {"jsonrpc": _EMPTY, "method": _EMPTY}
    if rid is not UNSET:
        members["id"] = _EMPTY
    if params:
        members["params"] = params
    return members


def _decode_slow(data: bytes, tolerant: bool = False) -> DecodedMessage:
    """Classification of a message the envelope struct could not take."""
    try:
        members = _MEMBERS_DECODER.decode(data)
    except msgspec.ValidationError:
        # Not an object: first make sure it is JSON at all (msgspec stopped at the first byte).
        try:
            msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            return _failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
        except RecursionError:
            return _failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")
        if data.lstrip()[:1] == b"[":
            return _failure(ErrorCode.INVALID_REQUEST, "Invalid Request: batches are not supported")
        return _failure(
            ErrorCode.INVALID_REQUEST, "Invalid Request: a message must be a JSON object"
        )
    except msgspec.DecodeError as exc:  # the fast path stopped before the syntax error
        return _failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:
        return _failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")
    unknown = sorted(name for name in members if name not in _MEMBERS)
    known = {k: v for k, v in members.items() if k in _MEMBERS}
    if tolerant and known.get("params") == _NULL:
        del known["params"]  # only as a member of the object; the duplicate check still sees it
    return _classify(data, known, unknown)


def _classify(
    data: bytes, members: dict[str, Raw], unknown: list[str] | tuple[()]
) -> DecodedMessage:
    """The general path: exact classification of any object-shaped message."""
    raw_jsonrpc = members.get("jsonrpc", _EMPTY)
    jsonrpc_ok = raw_jsonrpc == _V2
    if not jsonrpc_ok and raw_jsonrpc:
        try:
            jsonrpc_ok = _STR_DECODER.decode(raw_jsonrpc) == JSONRPC_VERSION
        except msgspec.ValidationError:
            pass
    has_id = "id" in members
    rid: RequestId | None = None
    id_problem = None
    if has_id:
        try:
            rid = _ID_DECODER.decode(members["id"])
        except msgspec.ValidationError:
            kind = _describe(members["id"])
            if kind == "a number":
                kind = "a fractional number"
            id_problem = f"id must be a string or an integer, not {kind}"
    duplicate = _has_duplicate(data, members)
    params = members.get("params", _EMPTY)
    result = members.get("result", _EMPTY)
    error = members.get("error", _EMPTY)

    if "method" in members:
        # A request (has an id member) or a notification (has none).
        method: str | None = None
        try:
            method = _STR_DECODER.decode(members["method"])
        except msgspec.ValidationError:
            pass
        problem = None
        if duplicate:
            problem = "an envelope member appears more than once"
            rid = None
        elif id_problem is not None:
            problem = id_problem
        elif not jsonrpc_ok:
            problem = 'jsonrpc must be exactly "2.0"'
        elif unknown:
            problem = f"unknown envelope member {unknown[0]!r}"
        elif result or error:
            problem = "a request must not carry `result` or `error`"
        elif method is None:
            problem = "method must be a string"
        elif params and not is_object(params):
            if has_id and memoryview(params)[0] == 0x5B:  # "["
                return _failure(
                    ErrorCode.INVALID_PARAMS,
                    "Invalid params: params must be an object, not an array",
                    rid,
                )
            problem = f"params must be an object, not {_describe(params)}"
        if problem is not None:
            return _failure(ErrorCode.INVALID_REQUEST, f"Invalid Request: {problem}", rid, has_id)
        assert method is not None
        if not has_id:
            return NotificationReceived(method, params or None)
        assert rid is not None
        return RequestReceived(rid, method, params or None)

    if has_id or result or error:
        # A response. Without a usable id it cannot be matched to a call: report only.
        if rid is None:
            why = id_problem or "it has no id"
            return _failure(ErrorCode.INVALID_REQUEST, f"Response dropped: {why}", None, False)
        response_problem = None
        if duplicate:
            response_problem = "an envelope member appears more than once"
        elif not jsonrpc_ok:
            response_problem = 'jsonrpc must be exactly "2.0"'
        elif unknown:
            response_problem = f"unknown envelope member {unknown[0]!r}"
        if error:
            # The error is authoritative, even next to a result.
            try:
                err = _ERROR_DECODER.decode(error)
            except msgspec.ValidationError as exc:
                return DecodedResponse(rid, None, None, f"malformed error object: {exc}")
            return DecodedResponse(rid, None, err, response_problem)
        if not result:
            return DecodedResponse(rid, None, None, "a response needs `result` or `error`")
        if not is_object(result):
            return DecodedResponse(
                rid, None, None, f"result must be an object, not {_describe(result)}"
            )
        if response_problem is not None:
            return DecodedResponse(rid, None, None, response_problem)
        return DecodedResponse(rid, result, None)

    return _failure(
        ErrorCode.INVALID_REQUEST,
        "Invalid Request: a message needs a `method` (request, notification) or an `id` (response)",
    )
