"""Tolerant decoding for a client that talks to imperfect servers.

Strict decoding refuses a result that lacks a required member. In tolerant mode the
result is decoded again with the missing members filled with empty values of their type
(``[]``, ``{}``, ``""``, ``0``, ``False`` or an empty object), ``null`` where the type takes
none read as absent (or as empty, for a required member), numbers and strings coerced
where msgspec's lax conversion allows, and a warning logged — so one sloppy server does
not make a whole client unusable.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi
from msgspec import Raw

from ..exceptions import RemoteProtocolError
from ..types._echo import one_line

__all__ = ["decode_result", "lenient_decode"]

logger = logging.getLogger("mcpkit.client")
T = TypeVar("T")
_MAX_DEPTH = 32


def _empty(info: mi.Type, depth: int) -> Any:
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return []
    if isinstance(info, mi.DictType):
        return {}
    if isinstance(info, mi.StrType):
        return ""
    if isinstance(info, mi.IntType | mi.FloatType):
        return 0
    if isinstance(info, mi.BoolType):
        return False
    if isinstance(info, mi.StructType | mi.DataclassType | mi.TypedDictType):
        return _fill({}, info, depth + 1)
    if isinstance(info, mi.UnionType):
        for member in info.types:
            if not isinstance(member, mi.NoneType):
                return _empty(member, depth)
    if isinstance(info, mi.LiteralType) and info.values:
        return info.values[0]
    return None


def _takes_none(info: mi.Type) -> bool:
    if isinstance(info, mi.NoneType | mi.AnyType):
        return True
    return isinstance(info, mi.UnionType) and any(_takes_none(m) for m in info.types)


def _fill(value: Any, info: mi.Type, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        return value
    if isinstance(info, mi.StructType | mi.DataclassType | mi.TypedDictType):
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for field in info.fields:
            key = field.encode_name
            if key in out and out[key] is None and not _takes_none(field.type):
                # "nextCursor": null and the like, the commonest deviation: absent.
                if field.required:
                    out[key] = _empty(field.type, depth)
                else:
                    del out[key]
            elif key in out:
                out[key] = _fill(out[key], field.type, depth + 1)
            elif field.required:
                out[key] = _empty(field.type, depth)
        return out
    if isinstance(info, mi.ListType) and isinstance(value, list):
        return [_fill(item, info.item_type, depth + 1) for item in value]
    return value


def lenient_decode(raw: Raw, result_type: type[T], method: str) -> T:
    """Decode ``raw`` into ``result_type``, repairing what real servers commonly get wrong.

    Raises:
        msgspec.ValidationError: the result is wrong beyond repair.
    """
    data = msgspec.json.decode(raw)
    repaired = _fill(data, mi.type_info(result_type))
    value = msgspec.convert(repaired, result_type, strict=False)
    logger.warning("tolerated a malformed result for %s from the server", method)
    return value


def decode_result(raw: bytes, result_type: type[T], method: str, *, tolerant: bool) -> T:
    """Decode a result into ``result_type``; ``tolerant``: repaired where it can be
    (:func:`lenient_decode`).

    Raises:
        RemoteProtocolError: the result does not match ``result_type`` (beyond repair).
    """
    try:
        return msgspec.json.decode(raw, type=result_type)
    except msgspec.ValidationError as exc:
        try:
            if not tolerant:
                raise
            return lenient_decode(Raw(raw), result_type, method)
        except msgspec.ValidationError:
            raise RemoteProtocolError(
                f"invalid result for {method}: {one_line(str(exc))}"
            ) from None
