"""A scripted 2026-07-28 server for client tests, in memory: every request is recorded and
answered by a handler (a result object, or an :class:`RPCError` raised), and a handler may
send notifications first (the client handles them before it sees the answer)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from mcpkit.aio import MemoryChannel, memory_channel_pair, single_errors
from mcpkit.client import Client
from mcpkit.exceptions import RPCError
from mcpkit.types import UNSET

MODERN: Final = "2026-07-28"
SERVER_INFO: Final = {"name": "fake-modern", "version": "9.9"}
Handler = Callable[["FakeServer", str, dict[str, Any]], Awaitable[dict[str, Any]]]


def discover_result(**extra: Any) -> dict[str, Any]:
    """A complete ``server/discover`` result offering 2026-07-28."""
    return {
        "resultType": "complete",
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        **extra,
    }


def tool_result(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


@dataclass
class FakeServer:
    """The server end: ``requests`` holds every request received (id, method, params)."""

    channel: MemoryChannel
    handler: Handler
    requests: list[dict[str, Any]] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)

    def calls(self, method: str) -> list[dict[str, Any]]:
        """The requests for ``method``, in order."""
        return [r for r in self.requests if r["method"] == method]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.channel.send(json.dumps(message).encode())

    async def serve(self) -> None:
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    data = await self.channel.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    tg.cancel_scope.cancel()
                    return
                message = json.loads(data)
                if "id" not in message:
                    self.notifications.append(message)
                    continue
                self.requests.append(message)
                tg.start_soon(self._answer, message)

    async def _answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = await self.handler(
                self, message["method"], message.get("params") or {}
            )
        except RPCError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not UNSET:
                error["data"] = exc.data
            reply["error"] = error
        await self.channel.send(json.dumps(reply).encode())


@asynccontextmanager
async def fake_client(handler: Handler, **options: Any) -> AsyncIterator[tuple[Client, FakeServer]]:
    """A :class:`Client` connected to a :class:`FakeServer` running ``handler``."""
    client_end, server_end = memory_channel_pair()
    fake = FakeServer(server_end, handler)
    try:
        with single_errors():
            async with anyio.create_task_group() as tg:
                tg.start_soon(fake.serve)
                try:
                    async with Client(client_end, **options) as client:
                        yield client, fake
                finally:
                    tg.cancel_scope.cancel()
    finally:
        await server_end.aclose()
        await client_end.aclose()


def modern(
    routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]],
) -> Handler:
    """A handler answering ``server/discover`` and the methods in ``routes``; any other
    method gets -32601."""

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in routes:
            return routes[method](params)
        if method == "server/discover":
            return discover_result()
        raise RPCError(-32601, f"Method not found: {method}")

    return handle
