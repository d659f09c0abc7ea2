"""Encoding JSON-RPC messages: never invalid JSON, never a silently altered value.

msgspec writes NaN and infinity as ``null``; an encoded message that contains ``null`` is
therefore checked for non-finite floats before it is handed out, and anything JSON cannot
represent raises :class:`LocalProtocolError` so the caller can answer -32603 instead.

Looking for ``null`` costs about 0.3-0.6 ns per byte, which on a 1 KiB text result is half
of what encoding it costs. Above a few hundred bytes it is cheaper to prove there is no
float at all: msgspec's MessagePack encoder writes every float as ``0xCB`` and eight bytes,
and encoding (no escaping: mostly a copy) and looking for that byte (``memchr``) cost about
0.6x the scan at 1 KiB, less above. For a large message (an image, a long text) a walk
over the payload's few objects is cheaper still; it gives up past a small budget of
objects.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..exceptions import LocalProtocolError
from ..types import JSONRPC_VERSION, ErrorObject, RequestId

__all__ = [
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "is_object",
    "non_finite_path",
]


def is_object(raw: Raw) -> bool:
    """Whether raw JSON is an object (msgspec strips surrounding whitespace)."""
    return len(raw) > 0 and memoryview(raw)[0] == 0x7B  # "{"


class _Request(msgspec.Struct, omit_defaults=True, gc=False):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _Notification(msgspec.Struct, omit_defaults=True, gc=False):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _ResultResponse(msgspec.Struct, gc=False):
    jsonrpc: str
    id: RequestId
    result: Any


class _ErrorResponse(msgspec.Struct, gc=False):
    jsonrpc: str
    id: RequestId | None
    error: ErrorObject


_ENCODER: Final = msgspec.json.Encoder()
_encode_json: Final = _ENCODER.encode  # bound once, for the hot paths


def non_finite_path(obj: Any, path: str, depth: int = 0) -> str | None:
    """Where ``obj`` holds a NaN or an infinity, which msgspec would silently write as
    ``null``: ``path`` followed by ``.key`` / ``[index]`` steps; ``None`` if nowhere
    (dicts, lists, tuples, structs and dataclasses are looked into, 512 levels deep)."""
    if depth > 512:
        return None
    if isinstance(obj, float):
        return None if math.isfinite(obj) else path
    if isinstance(obj, (str, int, bool, type(None), Raw)):
        return None
    if isinstance(obj, dict):
        for key, value in obj.items():
            found = non_finite_path(value, f"{path}.{key}", depth + 1)
            if found:
                return found
        return None
    if isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            found = non_finite_path(value, f"{path}[{index}]", depth + 1)
            if found:
                return found
        return None
    if isinstance(obj, msgspec.Struct):
        names: tuple[str, ...] = obj.__struct_fields__
    elif dataclasses.is_dataclass(obj):
        names = tuple(field.name for field in dataclasses.fields(obj))
    else:
        return None
    for name in names:
        found = non_finite_path(getattr(obj, name), f"{path}.{name}", depth + 1)
        if found:
            return found
    return None


#: msgspec's MessagePack encoding of every Python float (a float64) starts with this byte.
_FLOAT64: Final = 0xCB
_pack: Final = msgspec.msgpack.Encoder().encode
_NO_FLOATS: Final = frozenset({str, int, bool, bytes, type(None), UnsetType, Raw})
#: Struct type -> a function returning all its fields' values (see _field_getter).
_FLOAT_FIELDS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
#: Messages up to this size are scanned for ``null``; above it the MessagePack proof is
#: cheaper (measured on CPython 3.11: equal at about 300 bytes, 0.6x at 1 KiB).
_SCAN_UP_TO: Final = 384
#: Above this size the walk goes first: on a typical result (a tool result with one text
#: block) it costs about as much as the MessagePack proof of 8 to 16 KiB.
_WALK_ABOVE: Final = 8192
_WALK_BUDGET: Final = 64


def _no_fields(_: object) -> tuple[()]:
    return ()


def _field_getter(kind: type) -> Callable[[Any], tuple[Any, ...]]:
    """For a struct type: a function returning the values of all its fields
    (attrgetter: one C call for all of them). All, not only those whose declared type can
    hold a float: structs are not type-checked when built, so a field declared ``str``
    can hold a NaN, which msgspec would write as ``null``."""
    getter = _FLOAT_FIELDS.get(kind)
    if getter is None:
        names = [field.name for field in msgspec.structs.fields(kind)]
        if not names:
            getter = _no_fields
        else:
            # attrgetter returns a bare value for one name: ask for it twice instead.
            getter = operator.attrgetter(*(names * 2 if len(names) == 1 else names))
        if len(_FLOAT_FIELDS) < 1024:
            _FLOAT_FIELDS[kind] = getter
    return getter


def _all_finite(value: Any) -> bool | None:
    """Whether every float in ``value`` is finite; ``None`` when that is not cheap to tell
    (more than _WALK_BUDGET objects, or a type the walk does not know)."""
    stack = [value]
    budget = _WALK_BUDGET
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _NO_FLOATS:
            continue
        if kind is float:
            if not math.isfinite(item):
                return False
            continue
        budget -= 1
        if budget < 0:
            return None
        getter = _FLOAT_FIELDS.get(kind)
        if getter is not None:
            stack.extend(getter(item))
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item.values())
        elif isinstance(item, msgspec.Struct):
            stack.extend(_field_getter(kind)(item))
        else:
            return None
    return True


def _holds_no_float(payload: Any) -> bool:
    """Whether ``payload`` certainly holds no float: its MessagePack encoding has no float64
    marker byte. (The byte can also occur inside strings, binary data or integers: then the
    answer is False and the caller falls back to the exact check.)"""
    try:
        return _FLOAT64 not in _pack(payload)
    except Exception:  # anything MessagePack cannot encode: use the exact check
        return False


def _finite_or_refuse(out: bytes, payload: Any, where: str) -> None:
    """Refuse NaN and infinity, which msgspec has written as ``null`` into ``out``."""
    if len(out) > _WALK_ABOVE:
        verdict = _all_finite(payload)
        if verdict is True:
            return
        if verdict is False:
            _refuse_non_finite(payload, where)
    if len(out) > _SCAN_UP_TO and _holds_no_float(payload):
        return
    # rpartition, not find or `in`: on CPython it takes its argument without parsing an
    # argument tuple (find) or first trying it as an integer (`in`), which for a small
    # message costs more than the search itself; and CPython 3.11's backward search is
    # 2-3x faster than the forward one (partition) on 1-2 KiB (0.22 vs 0.6 us at 1 KiB).
    if out.rpartition(b"null")[1]:
        _refuse_non_finite(payload, where)


_ENCODE_ERRORS: Final = (TypeError, ValueError, OverflowError)  # UnicodeEncodeError: ValueError


def _ends_in_object(out: bytes) -> bool:
    """Whether the envelope's last member (params or result) encoded as a JSON object.

    Its value ends right before the envelope's closing brace, and a JSON value that ends
    in ``}`` is an object. Judged on the output, not on the Python type: a struct with
    ``array_like=True`` is written as an array, a dataclass as an object, and a test of
    the bytes costs less than a type test (this runs for every message).
    """
    return out[-2] == 0x7D  # "}"


def _refuse_non_object(where: str) -> None:
    raise LocalProtocolError(f"{where} must be an object (a dict, a struct or a dataclass)")


def _refuse_non_finite(payload: Any, where: str) -> None:
    path = non_finite_path(payload, where)
    if path is not None:
        raise LocalProtocolError(f"cannot encode {path}: NaN and infinity are not JSON")


def _encode(envelope: msgspec.Struct, payload: Any, where: str) -> bytes:
    """Encode, refusing anything that would not be valid JSON on the wire.

    Raises:
        LocalProtocolError: the payload holds a value JSON cannot represent (NaN, infinity,
            a lone surrogate, an unsupported Python type).
    """
    try:
        out = _ENCODER.encode(envelope)
    except _ENCODE_ERRORS as exc:
        raise LocalProtocolError(f"cannot encode {where} as JSON: {exc}") from exc
    _finite_or_refuse(out, payload, where)
    return out


def encode_request(id: RequestId, method: str, params: Any = UNSET) -> bytes:
    """Encode a request. ``params`` is a struct, a dict, raw JSON object bytes, or UNSET.

    Raises:
        LocalProtocolError: ``params`` is not an object or cannot be encoded.
    """
    out = _encode(_Request(JSONRPC_VERSION, id, method, params), params, "params")
    if params is not UNSET and not _ends_in_object(out):
        _refuse_non_object("params")
    return out


def encode_notification(method: str, params: Any = UNSET) -> bytes:
    """Encode a notification.

    Raises:
        LocalProtocolError: ``params`` is not an object or cannot be encoded.
    """
    out = _encode(_Notification(JSONRPC_VERSION, method, params), params, "params")
    if params is not UNSET and not _ends_in_object(out):
        _refuse_non_object("params")
    return out


def encode_result(id: RequestId, result: Any) -> bytes:
    """Encode a success response; ``result`` must be an object (JSON-RPC 2.0 section 5).

    Raises:
        LocalProtocolError: ``result`` is not an object or cannot be encoded.
    """
    # Inlined _encode: this is the hottest encoding path.
    try:
        out = _encode_json(_ResultResponse("2.0", id, result))
    except _ENCODE_ERRORS as exc:
        raise LocalProtocolError(f"cannot encode result as JSON: {exc}") from exc
    if out[-2] != 0x7D:  # (_ends_in_object, inlined)
        _refuse_non_object("result")
    # (_finite_or_refuse, inlined for the two common sizes: a call costs 10 % of it on 1 KiB)
    if len(out) <= _SCAN_UP_TO:
        if out.rpartition(b"null")[1]:
            _refuse_non_finite(result, "result")
    elif len(out) > _WALK_ABOVE:
        _finite_or_refuse(out, result, "result")
    else:
        try:
            floats = _FLOAT64 in _pack(result)
        except Exception:  # (see _holds_no_float)
            floats = True
        if floats and out.rpartition(b"null")[1]:
            _refuse_non_finite(result, "result")
    return out


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
