"""mcpkit: a strict, fast, secure-by-default Python SDK for the Model Context Protocol.

``import mcpkit`` is light: it loads only the version and the exception hierarchy. The rest
is imported on first use (PEP 562), so a client-only program never loads the server, and
nothing loads an HTTP stack until an HTTP transport is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .exceptions import (
    CapabilityError,
    ConnectionClosedError,
    LocalProtocolError,
    MCPError,
    ProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
    ToolError,
    TransportError,
)

if TYPE_CHECKING:
    from .client import Client, StdioTransport
    from .server import LowLevelServer, RequestContext, Server

__all__ = [
    "__version__",
    # lazily imported
    "Client",
    "LowLevelServer",
    "RequestContext",
    "Server",
    "StdioTransport",
    # exceptions
    "CapabilityError",
    "ConnectionClosedError",
    "LocalProtocolError",
    "MCPError",
    "ProtocolError",
    "RPCError",
    "RemoteProtocolError",
    "RequestTimeoutError",
    "ToolError",
    "TransportError",
]

_LAZY = {
    "Client": "mcpkit.client",
    "StdioTransport": "mcpkit.client",
    "LowLevelServer": "mcpkit.server",
    "RequestContext": "mcpkit.server",
    "Server": "mcpkit.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
