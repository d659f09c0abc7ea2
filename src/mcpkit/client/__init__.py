"""Client APIs. Layer 4: imports aio, protocol and types (and transports to connect); never
:mod:`mcpkit.server`."""

from __future__ import annotations

from ..transports import StdioTransport
from ._client import Client, ClientTransport, LogCallback

__all__ = ["Client", "ClientTransport", "LogCallback", "StdioTransport"]
