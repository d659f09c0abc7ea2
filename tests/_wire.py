"""A raw JSON-RPC peer for a server running in memory: send dicts, read dicts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio

from mcpkit.aio import MemoryChannel, memory_channel_pair
from mcpkit.server import LowLevelServer

#: Bound on waiting for one message from the server.
READ_LIMIT: Final = 10.0
MODERN: Final = "2026-07-28"


def meta(
    *,
    version: str | None = MODERN,
    capabilities: dict[str, Any] | None = None,
    log_level: str | None = None,
    client_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A 2026-07-28 request ``_meta`` object."""
    out: dict[str, Any] = {}
    if version is not None:
        out["io.modelcontextprotocol/protocolVersion"] = version
    out["io.modelcontextprotocol/clientCapabilities"] = capabilities or {}
    if client_info is not None:
        out["io.modelcontextprotocol/clientInfo"] = client_info
    if log_level is not None:
        out["io.modelcontextprotocol/logLevel"] = log_level
    return out


class Wire:
    """One connection to a server, spoken in raw messages."""

    def __init__(self, channel: MemoryChannel) -> None:
        self.channel = channel
        self.seen: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        await self.channel.send(json.dumps(message).encode())

    async def read(self) -> dict[str, Any]:
        with anyio.fail_after(READ_LIMIT):
            message: dict[str, Any] = json.loads(await self.channel.receive())
        self.seen.append(message)
        return message

    async def call(self, id: Any, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; return its response, keeping what came before it in ``seen``."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            reply = await self.read()
            if reply.get("id") == id and "method" not in reply:
                return reply


@asynccontextmanager
async def wire_to(server: LowLevelServer) -> AsyncIterator[Wire]:
    """Serve ``server`` on an in-memory connection for the duration of the block."""
    client_end, server_end = memory_channel_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        try:
            yield Wire(client_end)
        finally:
            await client_end.aclose()  # the server sees the end of input and stops
            with anyio.CancelScope(shield=True):
                await server_end.aclose()
            tg.cancel_scope.cancel()


# -- subscriptions/listen (2026-07-28) ---------------------------------------------------

SUB: Final = "io.modelcontextprotocol/subscriptionId"
ACK: Final = "notifications/subscriptions/acknowledged"
TOOLS: Final = "notifications/tools/list_changed"
PROMPTS: Final = "notifications/prompts/list_changed"
UPDATED: Final = "notifications/resources/updated"


def listen_params(**notifications: Any) -> dict[str, Any]:
    """``subscriptions/listen`` params asking for ``notifications``."""
    return {"_meta": meta(), "notifications": notifications}


def call_params(tool: str) -> dict[str, Any]:
    """2026-07-28 ``tools/call`` params of an argument-less tool."""
    return {"_meta": meta(), "name": tool, "arguments": {}}


def subscription_of(message: dict[str, Any]) -> Any:
    """The subscription id a notification carries (``None`` without one)."""
    return message.get("params", {}).get("_meta", {}).get(SUB)
