"""The HTTP headers of a 2026-07-28 request, client side.

2026-07-28 ``basic/transports/streamable-http.mdx``: every POST carries
``MCP-Protocol-Version`` (equal to ``_meta["io.modelcontextprotocol/protocolVersion"]``)
and ``Mcp-Method``; ``tools/call``, ``resources/read`` and ``prompts/get`` also carry
``Mcp-Name`` ("Standard Request Headers"), encoded by
:func:`mcpkit.protocol.headers_for_request`. ``Mcp-Param-*`` headers from ``x-mcp-header``
tool annotations need the called tool's definition and are not sent here.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ..protocol import headers_for_request
from ..types import META_PROTOCOL_VERSION

__all__ = ["modern_headers"]


class _Request(msgspec.Struct):
    method: Any = None
    params: Any = None


_REQUEST: Final = msgspec.json.Decoder(_Request)


def modern_headers(message: bytes) -> dict[str, str] | None:
    """The 2026-07-28 headers for ``message``, or ``None`` when it is not a request that
    names a protocol version in its ``_meta`` (a handshake-era message).

    Raises:
        LocalProtocolError: a method name that cannot travel in ``Mcp-Method``.
    """
    try:
        request = _REQUEST.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # not one request object (e.g. a batch): not a 2026-07-28 message
    params = request.params
    if not isinstance(request.method, str) or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        return None
    return {"MCP-Protocol-Version": version, **headers_for_request(request.method, params)}
