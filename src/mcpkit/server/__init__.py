"""Server APIs. Layer 4: imports aio, protocol and types (and transports to run); never
:mod:`mcpkit.client`.

:class:`Server` is the decorator API; :class:`LowLevelServer` the handler table it is
built on.
"""

from __future__ import annotations

from ._app import CompletionHandler, Server
from ._context import Elicitation, RequestContext
from ._files import DirectoryResources
from ._lowlevel import LowLevelServer, ToolHandler, ToolResult
from ._results import ResultError
from ._session import ServerSession
from ._signature import ArgumentError, FunctionSchema, function_schema

__all__ = [
    "ArgumentError",
    "CompletionHandler",
    "DirectoryResources",
    "Elicitation",
    "FunctionSchema",
    "LowLevelServer",
    "RequestContext",
    "ResultError",
    "Server",
    "ServerSession",
    "ToolHandler",
    "ToolResult",
    "function_schema",
]
