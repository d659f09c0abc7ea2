"""An in-memory client/server pair."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ..client import Client
from ..server import LowLevelServer

__all__ = ["connect_memory"]


@asynccontextmanager
async def connect_memory(server: LowLevelServer, **client_options: Any) -> AsyncIterator[Client]:
    """Run ``server`` in this process and yield an initialized :class:`Client` for it
    (the same as ``async with Client(server, **client_options)``).

    ``client_options`` are passed to :class:`Client`. On exit the client closes and the
    server's connection ends. Enter and exit in the same task. An exception from the body
    (or from connecting) propagates as itself, not wrapped in an exception group.
    """
    async with Client(server, **client_options) as client:
        yield client
