"""Server APIs. Layer 4: imports aio, protocol and types (and transports to run); never
:mod:`mcpkit.client`.

:class:`Server` is the decorator API; :class:`LowLevelServer` the handler table it is
built on. The decorator API's modules (signatures, schemas, registries) load on first use,
so a low-level server starts without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._context import Elicitation, RequestContext
from ._inputs import InputRequest
from ._lowlevel import LowLevelServer, ToolHandler, ToolResult
from ._request_state import InMemoryNonceStore, NonceStore, RequestStateSealer
from ._session import ServerSession

if TYPE_CHECKING:
    from ._app import CompletionHandler, Server
    from ._files import DirectoryResources
    from ._results import ResultError
    from ._signature import ArgumentError, FunctionSchema, function_schema
    from ._sse_app import SSEApp
    from ._streamable import StreamableHTTPApp
    from ._ws_app import WebSocketApp

__all__ = [
    "ArgumentError",
    "CompletionHandler",
    "DirectoryResources",
    "Elicitation",
    "FunctionSchema",
    "InMemoryNonceStore",
    "InputRequest",
    "LowLevelServer",
    "NonceStore",
    "RequestContext",
    "RequestStateSealer",
    "ResultError",
    "Server",
    "ServerSession",
    "SSEApp",
    "StreamableHTTPApp",
    "ToolHandler",
    "ToolResult",
    "WebSocketApp",
    "function_schema",
]

_LAZY = {
    "Server": "._app",
    "CompletionHandler": "._app",
    "DirectoryResources": "._files",
    "ResultError": "._results",
    "ArgumentError": "._signature",
    "FunctionSchema": "._signature",
    "function_schema": "._signature",
    "StreamableHTTPApp": "._streamable",
    "SSEApp": "._sse_app",
    "WebSocketApp": "._ws_app",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.server' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
