"""The sans-I/O protocol core: framing, codec, SSE, HTTP rules and the connection state
machines.

Layer 1 of mcpkit. Imports :mod:`mcpkit.types` only: no asyncio, anyio, threads, sockets
or clock (a test enforces it). Every function here is deterministic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._connection import Connection
from ._decode import DecodedMessage, DecodedResponse, DecodeFailure, decode_message, decode_params
from ._empty import EMPTY_TABLE
from ._encode import (
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    non_finite_path,
)
from ._events import (
    BatchReceived,
    CancelReceived,
    ErrorReceived,
    Event,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestReceived,
    ResponseInvalid,
    ResponseReceived,
)
from ._framing import FrameTooLarge, LineBuffer, encode_line
from ._header_params import ParamHeader, annotation_problem, param_headers
from ._http import (
    SESSION_ID_MAX_LENGTH,
    TransportSecurity,
    new_session_id,
    valid_session_id,
    wildcard_bind,
)
from ._http_media import accepts, checked_header_fields, media_type
from ._lifecycle import READY_HANDSHAKES, HandshakeState, ServerHandshake, ready_handshake
from ._limits import DEFAULT_LIMITS, Limits
from ._mcp_headers import (
    MAX_SAFE_INTEGER,
    NAMED_METHODS,
    SENTINEL_PREFIX,
    SENTINEL_SUFFIX,
    decode_header_value,
    encode_header_value,
    header_text,
    headers_for_request,
    needs_encoding,
    request_header_problem,
)
from ._sse import OVERSIZED_HEAD, SSEEvent, SSEParser
from ._sse_encode import encode_comment, encode_event, encode_retry

if TYPE_CHECKING:
    from ._jsonschema import (
        SchemaError,
        SchemaValidationError,
        SchemaValidator,
        compile_schema,
    )
    from ._uri_template import UriTemplate, is_template

__all__ = [
    # connection
    "Connection",
    "DEFAULT_LIMITS",
    "EMPTY_TABLE",
    "Limits",
    # events
    "BatchReceived",
    "CancelReceived",
    "ErrorReceived",
    "Event",
    "MessageRejected",
    "NotificationReceived",
    "ProgressReceived",
    "RequestReceived",
    "ResponseInvalid",
    "ResponseReceived",
    # codec
    "DecodeFailure",
    "DecodedMessage",
    "DecodedResponse",
    "decode_message",
    "decode_params",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "non_finite_path",
    # framing
    "FrameTooLarge",
    "LineBuffer",
    "encode_line",
    # SSE
    "OVERSIZED_HEAD",
    "SSEEvent",
    "SSEParser",
    "encode_comment",
    "encode_retry",
    "encode_event",
    # HTTP rules
    "SESSION_ID_MAX_LENGTH",
    "TransportSecurity",
    "accepts",
    "checked_header_fields",
    "media_type",
    "new_session_id",
    "valid_session_id",
    "wildcard_bind",
    # MCP request headers (2026-07-28, SEP-2243)
    "MAX_SAFE_INTEGER",
    "NAMED_METHODS",
    "ParamHeader",
    "SENTINEL_PREFIX",
    "SENTINEL_SUFFIX",
    "annotation_problem",
    "decode_header_value",
    "encode_header_value",
    "header_text",
    "headers_for_request",
    "needs_encoding",
    "param_headers",
    "request_header_problem",
    # lifecycle
    "READY_HANDSHAKES",
    "HandshakeState",
    "ServerHandshake",
    "ready_handshake",
    # URI templates (RFC 6570)
    "UriTemplate",
    "is_template",
    # JSON Schema validation
    "SchemaError",
    "SchemaValidationError",
    "SchemaValidator",
    "compile_schema",
]

# URI templates and JSON Schema validation load on first use (they compile tables).
_LAZY = {
    "UriTemplate": "._uri_template",
    "is_template": "._uri_template",
    "SchemaError": "._jsonschema",
    "SchemaValidationError": "._jsonschema",
    "SchemaValidator": "._jsonschema",
    "compile_schema": "._jsonschema",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.protocol' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
