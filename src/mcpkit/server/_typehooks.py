"""Python types msgspec has no JSON form for that tool signatures still use: file system
paths (``pathlib.Path`` and the other ``PurePath`` classes) and IP addresses, networks and
interfaces (``ipaddress``), which travel as JSON strings, as pydantic's do (schema
``{"type": "string", "format": "path"}``, ``"ipv4"``, ...; JSON Schema treats a format it
does not know as an annotation). One set of msgspec hooks for every conversion a tool's
arguments and results go through."""

from __future__ import annotations

import ipaddress
from pathlib import PurePath
from typing import Any, Final

import msgspec

__all__ = ["JSON_ENCODER", "dec_hook", "enc_hook", "schema_hook"]


#: Each type (and its subclasses) -> the JSON Schema ``format`` of its string form.
_FORMATS: Final[dict[type, str]] = {
    PurePath: "path",
    ipaddress.IPv4Address: "ipv4",
    ipaddress.IPv6Address: "ipv6",
    ipaddress.IPv4Network: "ipv4network",
    ipaddress.IPv6Network: "ipv6network",
    ipaddress.IPv4Interface: "ipv4interface",
    ipaddress.IPv6Interface: "ipv6interface",
}
_STRING_TYPES: Final = tuple(_FORMATS)
#: What msgspec calls a JSON value of each Python type in its errors.
_JSON_KINDS: Final[dict[type, str]] = {
    bool: "bool",
    int: "int",
    float: "float",
    type(None): "null",
    list: "array",
    dict: "object",
}


def _format_of(tp: Any) -> str | None:
    if isinstance(tp, type) and issubclass(tp, _STRING_TYPES):
        return next(f for base, f in _FORMATS.items() if issubclass(tp, base))
    return None


def schema_hook(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a type msgspec does not know (``schema_hook``).

    Raises:
        NotImplementedError: not one of these types (msgspec then says so).
    """
    found = _format_of(tp)
    if found is not None:
        return {"type": "string", "format": found}
    raise NotImplementedError


def dec_hook(tp: type, obj: Any) -> Any:
    """``obj`` (from JSON) as ``tp``, a type msgspec does not know (``dec_hook``).

    Raises:
        TypeError: ``obj`` is not a string (msgspec reports it as invalid).
        ValueError: not a valid address or network (likewise).
        NotImplementedError: not one of these types.
    """
    if _format_of(tp) is None:
        raise NotImplementedError
    if not isinstance(obj, str):  # (in msgspec's words, which the explanation rewrites)
        got = _JSON_KINDS.get(type(obj), type(obj).__name__)
        raise TypeError(f"Expected `str`, got `{got}`")
    try:
        return tp(obj)
    except ValueError:  # (its message quotes the peer's text, at any length)
        raise ValueError(f"not a valid {tp.__name__}") from None


def enc_hook(obj: Any) -> Any:
    """``obj``, of a type msgspec does not know, as something it does (``enc_hook``).

    Raises:
        TypeError: not one of these types (msgspec's own words without a hook).
    """
    if isinstance(obj, _STRING_TYPES):
        return str(obj)
    raise TypeError(f"Encoding objects of type {type(obj).__name__} is unsupported")


#: A JSON encoder that knows these types.
JSON_ENCODER: Final = msgspec.json.Encoder(enc_hook=enc_hook)
