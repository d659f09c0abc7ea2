"""Transports: thin adapters that move framed messages over real I/O.

Layer 3 of mcpkit. Each third-party I/O library is imported only in its transport module.
The Streamable HTTP client is imported on first use (PEP 562), so importing this package
never loads httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..aio import MemoryChannel, memory_channel_pair
from ._stdio import (
    FdChannel,
    claim_stdin,
    claim_stdout,
    note_parent,
    stdio_channel,
    wait_parent_exit,
)
from ._subprocess import ProcessChannel, StdioTransport
from ._uvicorn import SHUTDOWN_HOOK_TIMEOUT, HttpServer, serve_http

if TYPE_CHECKING:
    from ._h1 import HTTP1Transport
    from ._http_client import StreamableHTTPChannel, StreamableHTTPTransport
    from ._sse_client import SSEChannel, SSETransport
    from ._ws_client import WebSocketChannel, WebSocketTransport

__all__ = [
    "SHUTDOWN_HOOK_TIMEOUT",
    "FdChannel",
    "HTTP1Transport",
    "HttpServer",
    "MemoryChannel",
    "ProcessChannel",
    "SSEChannel",
    "SSETransport",
    "StdioTransport",
    "StreamableHTTPChannel",
    "StreamableHTTPTransport",
    "WebSocketChannel",
    "WebSocketTransport",
    "claim_stdin",
    "claim_stdout",
    "note_parent",
    "serve_http",
    "memory_channel_pair",
    "stdio_channel",
    "wait_parent_exit",
]

# The Streamable HTTP client loads httpx: only when it is used.
_LAZY = {
    # The HTTP/1.1 connection layer the HTTP clients put under httpx (httpx, httptools).
    "HTTP1Transport": "._h1",
    "StreamableHTTPChannel": "._http_client",
    "StreamableHTTPTransport": "._http_client",
    # The legacy HTTP+SSE client (httpx) and the WebSocket client (websockets), likewise.
    "SSEChannel": "._sse_client",
    "SSETransport": "._sse_client",
    "WebSocketChannel": "._ws_client",
    "WebSocketTransport": "._ws_client",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.transports' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
