"""Client APIs. Layer 4: imports aio, protocol and types (and transports to connect); never
:mod:`mcpkit.server`."""

from __future__ import annotations

from ..transports import StdioTransport
from ._cache import ResultCache
from ._callbacks import (
    ClientHandlers,
    ElicitationCallback,
    LogCallback,
    RootsProvider,
    SamplingCallback,
)
from ._client import Client, ClientTransport
from ._modern import Era

__all__ = [
    "Client",
    "ClientHandlers",
    "ClientTransport",
    "ElicitationCallback",
    "Era",
    "LogCallback",
    "ResultCache",
    "RootsProvider",
    "SamplingCallback",
    "StdioTransport",
]
