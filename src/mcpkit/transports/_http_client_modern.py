"""The HTTP headers of a 2026-07-28 request, client side.

2026-07-28 ``basic/transports/streamable-http.mdx``: every POST carries
``MCP-Protocol-Version`` (equal to ``_meta["io.modelcontextprotocol/protocolVersion"]``)
and ``Mcp-Method``; ``tools/call``, ``resources/read`` and ``prompts/get`` also carry
``Mcp-Name`` (``params.name`` or ``params.uri``), Base64-encoded in the
``=?base64?...?=`` sentinel form when the value is not a plain header-safe ASCII string
("Value Encoding"). ``Mcp-Param-*`` headers from ``x-mcp-header`` tool annotations are not
sent here.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import msgspec

from ..types import META_PROTOCOL_VERSION

__all__ = ["encode_header_value", "modern_headers"]

_NAMED: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class _Params(msgspec.Struct):
    meta: Any = msgspec.field(default=None, name="_meta")
    name: Any = None
    uri: Any = None


class _Request(msgspec.Struct):
    method: Any = None
    id: Any = None
    params: _Params | None = None


_REQUEST: Final = msgspec.json.Decoder(_Request)


def encode_header_value(value: str) -> str:
    """``value`` as a header value: as-is when it is visible ASCII and spaces without
    leading or trailing whitespace (and does not look like the sentinel), else
    ``=?base64?<Base64 of its UTF-8>?=``."""
    safe = (
        value == value.strip(" \t")
        and all(0x20 <= ord(char) <= 0x7E for char in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if safe:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def modern_headers(message: bytes) -> dict[str, str] | None:
    """The 2026-07-28 headers for ``message``, or ``None`` when it is not a request that
    names a protocol version in its ``_meta`` (a handshake-era message)."""
    try:
        request = _REQUEST.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    params = request.params
    if not isinstance(request.method, str) or params is None or not isinstance(params.meta, dict):
        return None
    version = params.meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        return None
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": request.method}
    member = _NAMED.get(request.method)
    target = getattr(params, member) if member is not None else None
    if isinstance(target, str):
        headers["Mcp-Name"] = encode_header_value(target)
    return headers
