"""Server APIs. Layer 4: imports aio, protocol and types (and transports to run); never
:mod:`mcpkit.client`."""

from __future__ import annotations

from ._context import RequestContext
from ._lowlevel import LowLevelServer, ToolHandler, ToolResult
from ._session import ServerSession

__all__ = ["LowLevelServer", "RequestContext", "ServerSession", "ToolHandler", "ToolResult"]
