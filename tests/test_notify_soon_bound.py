"""Notifications queued from synchronous code (``Endpoint.notify_soon``: forwarded log
records, list changes) are bounded for a peer that reads slower than they are made: past
10,000 queued (or 16 MiB) the rest is dropped with one warning, instead of growing
without limit (3,000 records of 100 KB took 480 MB; ``aio/_endpoint.py``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.types import Tool

from ._wire import wire_to

pytestmark = pytest.mark.anyio

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def flooding() -> LowLevelServer:
    # (No log rate limit: the queue's own bound is what is tested.)
    server = LowLevelServer("flood", log_rate=None)

    async def flood(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        for n in range(arguments["count"]):  # no checkpoint: nothing is sent meanwhile
            ctx.session.log_soon("info", "x" * arguments["size"] + str(n))
        return "done"

    server.add_tool(Tool(name="flood", input_schema={"type": "object"}), flood)
    return server


@pytest.mark.parametrize(
    ("count", "size", "kept"),
    [(15_000, 10, 10_000), (400, 100_000, 167), (300, 10, 300)],
    ids=["by count", "by bytes", "within"],
)
async def test_queued_notifications_are_bounded(
    count: int, size: int, kept: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.aio")
    async with wire_to(flooding()) as wire:
        await wire.call(1, "initialize", INIT)
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        args = {"count": count, "size": size}
        answer = await wire.call(2, "tools/call", {"name": "flood", "arguments": args})
        assert answer["result"]["content"][0]["text"] == "done"
        logs = [m for m in wire.seen if m.get("method") == "notifications/message"]
        while len(logs) < kept:  # what was queued arrives, in order, after the answer too
            message = await wire.read()
            assert message["method"] == "notifications/message"
            logs.append(message)
        # The connection goes on serving (and nothing more was queued).
        assert "result" in await wire.call(3, "ping")
    logs = [m for m in wire.seen if m.get("method") == "notifications/message"]
    assert [int(m["params"]["data"][size:]) for m in logs] == list(range(kept))
    dropping = [r for r in caplog.records if "dropping" in r.getMessage()]
    assert len(dropping) == (0 if kept == count else 1)
