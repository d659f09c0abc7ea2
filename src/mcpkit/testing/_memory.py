"""An in-memory client/server pair."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from ..aio import memory_channel_pair, single_errors
from ..client import Client
from ..server import LowLevelServer

__all__ = ["connect_memory"]


@asynccontextmanager
async def connect_memory(server: LowLevelServer, **client_options: Any) -> AsyncIterator[Client]:
    """Run ``server`` in this process and yield an initialized :class:`Client` for it.

    ``client_options`` are passed to :class:`Client`. On exit the client closes and the
    server's connection ends. Enter and exit in the same task. An exception from the body
    (or from connecting) propagates as itself, not wrapped in an exception group.
    """
    client_end, server_end = memory_channel_pair()
    with single_errors():
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            try:
                async with Client(client_end, **client_options) as client:
                    yield client
            finally:
                tg.cancel_scope.cancel()
