"""Bytes <-> JSON-RPC messages, following MCP's message rules to the letter.

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
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..exceptions import LocalProtocolError
from ..types import JSONRPC_VERSION, ErrorCode, ErrorObject, RequestId
from ._limits import DEFAULT_LIMITS, Limits

__all__ = [
    "DecodeFailure",
    "DecodedMessage",
    "DecodedNotification",
    "DecodedRequest",
    "DecodedResponse",
    "decode_message",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "is_object",
]


@dataclass(frozen=True, slots=True)
class DecodedRequest:
    """A well-formed request. ``params`` is the raw JSON object, or ``None`` if absent."""

    id: RequestId
    method: str
    params: Raw | None


@dataclass(frozen=True, slots=True)
class DecodedNotification:
    """A well-formed notification."""

    method: str
    params: Raw | None


@dataclass(frozen=True, slots=True)
class DecodedResponse:
    """A response: exactly one of ``result`` / ``error`` is set, or ``problem`` says why the
    message cannot be a valid response for ``id`` (the pending call then fails)."""

    id: RequestId
    result: Raw | None
    error: ErrorObject | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class DecodeFailure:
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


DecodedMessage = DecodedRequest | DecodedNotification | DecodedResponse | DecodeFailure


# -- decoding ---------------------------------------------------------------------------

_EMPTY: Final = Raw()


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    """The fast path: every valid message decodes into this in one pass."""

    jsonrpc: str
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
_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})
_QUOTED: Final = {name: f'"{name}"'.encode() for name in _MEMBERS}

_BOM: Final = b"\xef\xbb\xbf"
_STRING_RE: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS: Final = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS: Final = bytes(set(range(256)) - set(b"[]{}"))
_KEY_RE: Final = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:')


def _failure(
    code: int, message: str, id: RequestId | None = None, reply: bool = True
) -> DecodeFailure:
    return DecodeFailure(ErrorObject(code=code, message=message), id, reply)


def _too_deep(data: bytes, limit: int) -> bool:
    """Whether JSON arrays/objects nest deeper than ``limit`` (strings ignored).

    Cheap bound first: fewer brackets than the limit cannot nest deeper. Otherwise strings
    are removed and innermost bracket pairs are deleted one level per pass, in C; after
    ``limit`` passes anything still pairing up nests deeper than the limit.
    """
    if len(data) <= 2 * limit or data.count(b"[") + data.count(b"{") <= limit:
        return False
    skeleton = _STRING_RE.sub(b"", data).translate(_BRACKETS, _NOT_BRACKETS)
    for _ in range(limit):
        if not skeleton:
            return False
        reduced = skeleton.replace(b"()", b"")
        if len(reduced) == len(skeleton):
            return False  # unbalanced leftovers: a syntax error for the decoder to report
        skeleton = reduced
    return b"()" in skeleton


def _duplicate_member(data: bytes, present: list[str], structured: list[Raw]) -> bool:
    """Whether an envelope member occurs twice (a parser-differential risk msgspec hides,
    since it keeps the last occurrence)."""
    if b"\\u" not in data and all(data.count(_QUOTED[name]) == 1 for name in present):
        return False
    # Cut the structured values out, leaving only the top-level keys and scalar values,
    # then compare the (unescaped) keys.
    skeleton = data
    for raw in structured:
        skeleton = skeleton.replace(bytes(raw), b"", 1)
    keys = []
    for token in _KEY_RE.findall(skeleton):
        try:
            keys.append(_STR_DECODER.decode(b'"' + token + b'"'))
        except msgspec.DecodeError:
            return True
    return len(keys) != len(set(keys))


def _first(raw: Raw) -> bytes:
    return bytes(memoryview(raw)[:1])


def is_object(raw: Raw) -> bool:
    """Whether raw JSON is an object (msgspec strips surrounding whitespace)."""
    return _first(raw) == b"{"


_KINDS: Final = {
    b"[": "an array",
    b"{": "an object",
    b'"': "a string",
    b"n": "null",
    b"t": "a boolean",
    b"f": "a boolean",
}


def _describe(raw: Raw) -> str:
    first = _first(raw)
    return _KINDS.get(first, "a number")


def decode_message(data: bytes, limits: Limits = DEFAULT_LIMITS) -> DecodedMessage:
    """Decode and classify one framed message.

    Never raises for bad input: every problem comes back as a :class:`DecodeFailure` (or a
    :class:`DecodedResponse` with ``problem`` set when the pending call can be identified).
    """
    if len(data) > limits.max_message_bytes:
        return _failure(
            ErrorCode.PARSE_ERROR,
            f"Parse error: message of {len(data)} bytes exceeds the limit of "
            f"{limits.max_message_bytes} bytes",
        )
    if data.startswith(_BOM):
        return _failure(ErrorCode.PARSE_ERROR, "Parse error: a byte order mark is not allowed")
    if _too_deep(data, limits.max_depth):
        return _failure(
            ErrorCode.PARSE_ERROR,
            f"Parse error: JSON nests deeper than the limit of {limits.max_depth} levels",
        )
    try:
        env = _ENVELOPE_DECODER.decode(data)
    except msgspec.ValidationError:
        return _decode_slow(data)
    except msgspec.DecodeError as exc:
        return _failure(ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:  # only reachable with a very high configured max_depth
        return _failure(ErrorCode.PARSE_ERROR, "Parse error: JSON nests too deeply")
    present = ["jsonrpc"]
    structured = []
    if env.id is not UNSET:
        present.append("id")
    if env.method is not UNSET:
        present.append("method")
    for name, raw in (("params", env.params), ("result", env.result), ("error", env.error)):
        if len(raw):
            present.append(name)
            structured.append(raw)
    return _classify(
        data,
        present,
        structured,
        jsonrpc_ok=env.jsonrpc == JSONRPC_VERSION,
        id=env.id,
        id_problem=None,
        method=env.method,
        params=env.params,
        result=env.result,
        error=env.error,
        unknown=(),
    )


def _decode_slow(data: bytes) -> DecodedMessage:
    """Precise classification of a message the fast path rejected."""
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

    jsonrpc = members.get("jsonrpc", _EMPTY)
    jsonrpc_ok = bytes(jsonrpc) == b'"2.0"'
    if not jsonrpc_ok and len(jsonrpc):
        try:
            jsonrpc_ok = _STR_DECODER.decode(jsonrpc) == JSONRPC_VERSION
        except msgspec.ValidationError:
            pass
    id: int | str | UnsetType = UNSET
    id_problem = None
    if "id" in members:
        try:
            id = _ID_DECODER.decode(members["id"])
        except msgspec.ValidationError:
            kind = _describe(members["id"])
            if kind == "a number":
                kind = "a fractional number"
            id_problem = f"id must be a string or an integer, not {kind}"
    method: str | UnsetType | None = UNSET
    if "method" in members:
        try:
            method = _STR_DECODER.decode(members["method"])
        except msgspec.ValidationError:
            method = None  # present but not a string
    present = [name for name in members if name in _MEMBERS]
    structured = [members[name] for name in ("params", "result", "error") if name in members]
    return _classify(
        data,
        present,
        structured,
        jsonrpc_ok=jsonrpc_ok,
        id=id,
        id_problem=id_problem,
        method=method,
        params=members.get("params", _EMPTY),
        result=members.get("result", _EMPTY),
        error=members.get("error", _EMPTY),
        unknown=sorted(name for name in members if name not in _MEMBERS),
    )


def _classify(
    data: bytes,
    present: list[str],
    structured: list[Raw],
    *,
    jsonrpc_ok: bool,
    id: int | str | UnsetType,
    id_problem: str | None,
    method: str | UnsetType | None,
    params: Raw,
    result: Raw,
    error: Raw,
    unknown: Any,
) -> DecodedMessage:
    has_id = id is not UNSET or id_problem is not None
    rid: RequestId | None = None if id is UNSET else id
    duplicate = _duplicate_member(data, present, structured)

    if method is not UNSET:
        # A request (has an id member) or a notification (has none).
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
        elif len(result) or len(error):
            problem = "a request must not carry `result` or `error`"
        elif method is None:
            problem = "method must be a string"
        elif len(params) and not is_object(params):
            if has_id and _first(params) == b"[":
                return _failure(
                    ErrorCode.INVALID_PARAMS,
                    "Invalid params: params must be an object, not an array",
                    rid,
                )
            problem = f"params must be an object, not {_describe(params)}"
        if problem is not None:
            return _failure(ErrorCode.INVALID_REQUEST, f"Invalid Request: {problem}", rid, has_id)
        assert isinstance(method, str)
        raw_params = params if len(params) else None
        if rid is None:
            return DecodedNotification(method, raw_params)
        return DecodedRequest(rid, method, raw_params)

    if has_id or len(result) or len(error):
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
        if len(error):
            # The error is authoritative, even next to a result.
            try:
                err = _ERROR_DECODER.decode(error)
            except msgspec.ValidationError as exc:
                return DecodedResponse(rid, None, None, f"malformed error object: {exc}")
            return DecodedResponse(rid, None, err, response_problem)
        if not len(result):
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


# -- encoding ---------------------------------------------------------------------------


class _Request(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _Notification(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _ResultResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId | None
    error: ErrorObject


_ENCODER: Final = msgspec.json.Encoder()


def _non_finite_path(obj: Any, path: str, depth: int = 0) -> str | None:
    """Find a NaN or infinity, which msgspec would silently write as ``null``."""
    if depth > 512:
        return None
    if isinstance(obj, float):
        return None if math.isfinite(obj) else path
    if isinstance(obj, (str, int, bool, type(None), Raw)):
        return None
    if isinstance(obj, dict):
        for key, value in obj.items():
            found = _non_finite_path(value, f"{path}.{key}", depth + 1)
            if found:
                return found
        return None
    if isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            found = _non_finite_path(value, f"{path}[{index}]", depth + 1)
            if found:
                return found
        return None
    if isinstance(obj, msgspec.Struct):
        for name in obj.__struct_fields__:
            found = _non_finite_path(getattr(obj, name), f"{path}.{name}", depth + 1)
            if found:
                return found
    return None


def _encode(envelope: msgspec.Struct, payload: Any, where: str) -> bytes:
    """Encode, refusing anything that would not be valid JSON on the wire.

    Raises:
        LocalProtocolError: the payload holds a value JSON cannot represent (NaN, infinity,
            a lone surrogate, an unsupported Python type).
    """
    try:
        out = _ENCODER.encode(envelope)
    except (TypeError, ValueError, OverflowError) as exc:  # UnicodeEncodeError is a ValueError
        raise LocalProtocolError(f"cannot encode {where} as JSON: {exc}") from exc
    if b"null" in out:
        path = _non_finite_path(payload, where)
        if path is not None:
            raise LocalProtocolError(f"cannot encode {path}: NaN and infinity are not JSON")
    return out


def _check_params(params: Any, where: str) -> None:
    if params is UNSET or isinstance(params, (dict, msgspec.Struct)):
        return
    if isinstance(params, Raw) and is_object(params):
        return
    raise LocalProtocolError(f"{where} must be an object (a dict or a struct)")


def encode_request(id: RequestId, method: str, params: Any = UNSET) -> bytes:
    """Encode a request. ``params`` is a struct, a dict, raw JSON object bytes, or UNSET.

    Raises:
        LocalProtocolError: ``params`` is not an object or cannot be encoded.
    """
    _check_params(params, "params")
    return _encode(_Request(JSONRPC_VERSION, id, method, params), params, "params")


def encode_notification(method: str, params: Any = UNSET) -> bytes:
    """Encode a notification.

    Raises:
        LocalProtocolError: ``params`` is not an object or cannot be encoded.
    """
    _check_params(params, "params")
    return _encode(_Notification(JSONRPC_VERSION, method, params), params, "params")


def encode_result(id: RequestId, result: Any) -> bytes:
    """Encode a success response; ``result`` must be an object (JSON-RPC 2.0 section 5).

    Raises:
        LocalProtocolError: ``result`` is not an object or cannot be encoded.
    """
    if result is UNSET:
        raise LocalProtocolError("result must be an object")
    _check_params(result, "result")
    return _encode(_ResultResponse(JSONRPC_VERSION, id, result), result, "result")


def encode_error(
    id: RequestId | None, code: int, message: str, data: Any | UnsetType = UNSET
) -> bytes:
    """Encode an error response. ``id`` is ``None`` when the request's id could not be read.

    If ``data`` cannot be encoded the error is sent without it rather than not at all.
    """
    error = ErrorObject(code=int(code), message=message, data=data)
    try:
        return _encode(_ErrorResponse(JSONRPC_VERSION, id, error), data, "error.data")
    except LocalProtocolError:
        # Drop what cannot be encoded: the data, and unpaired surrogates in the message.
        safe = message.encode("utf-8", "replace").decode("utf-8")
        error = ErrorObject(code=int(code), message=safe)
        return _ENCODER.encode(_ErrorResponse(JSONRPC_VERSION, id, error))
