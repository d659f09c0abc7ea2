"""JSON-RPC 2.0 vocabulary: ids, the error object and every error code MCP uses.

All JSON-RPC and MCP error codes are defined here and nowhere else (JSON-RPC 2.0 section 5.1;
MCP ``schema.ts`` of each revision; ``basic/index.mdx`` section "Error Codes" of 2026-07-28).
"""

from __future__ import annotations

import enum
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "JSONRPC_VERSION",
    "ErrorCode",
    "ErrorObject",
    "ProgressToken",
    "RequestId",
]

#: The only accepted value of the ``jsonrpc`` member.
JSONRPC_VERSION: Final = "2.0"

#: A request id: a string or an integer, never ``null``, a float or a boolean
#: (JSON-RPC 2.0 section 4; MCP ``RequestId``). Integers of any size round-trip exactly.
RequestId = int | str

#: A progress token: a string or an integer, never a boolean (MCP ``ProgressToken``).
ProgressToken = int | str


class ErrorCode(enum.IntEnum):
    """Every error code mcpkit sends or interprets, in one place."""

    # JSON-RPC 2.0 section 5.1
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    # MCP 2025-11-25 and older: documented for resources, retired in 2026-07-28.
    RESOURCE_NOT_FOUND = -32002
    # MCP 2025-11-25 only (URLElicitationRequiredError), retired in 2026-07-28.
    URL_ELICITATION_REQUIRED = -32042
    # MCP 2026-07-28 (allocated sequentially from -32020).
    HEADER_MISMATCH = -32020
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    # Implementation-defined (JSON-RPC "server error" range): the peer has too many of our
    # requests in flight. Only sent when a configured cap is hit; the data member explains.
    SERVER_BUSY = -32000


class ErrorObject(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The ``error`` member of an error response: ``{code, message, data?}``.

    ``code`` must be an integer and ``message`` a string (JSON-RPC 2.0 section 5.1); ``data``
    is any JSON value and is omitted when unset.
    """

    code: int
    message: str
    data: Any | UnsetType = UNSET
