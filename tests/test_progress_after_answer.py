"""A request's context that outlives its answer (kept by a background task) sends no
progress: not for its own request ("a sender never emits progress after its response"),
and not, through a reused id, for a later request of the peer (it was sent under the new
request's token, and pushed that request's own progress out of order)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit.server import RequestContext, Server

from ._wire import wire_to

pytestmark = pytest.mark.anyio


def build(kept: list[RequestContext], release: anyio.Event) -> Server:
    server = Server("late", "1.0")

    @server.tool()
    async def keep(ctx: RequestContext) -> str:
        """Keeps its context and answers at once."""
        kept.append(ctx)
        return "answered"

    @server.tool()
    async def wait(ctx: RequestContext) -> str:
        """Reports progress, waits, reports again."""
        await ctx.report_progress(1, 3)
        await release.wait()
        await ctx.report_progress(2, 3)
        return "done"

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_kept_context_sends_no_progress_after_its_answer() -> None:
    kept: list[RequestContext] = []
    release = anyio.Event()
    async with wire_to(build(kept, release)) as wire:
        init: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        await wire.call(0, "initialize", init)
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first = {"name": "keep", "arguments": {}, "_meta": {"progressToken": "first"}}
        assert (await wire.call(7, "tools/call", first))["result"]["content"][0][
            "text"
        ] == "answered"
        # Its own request is answered: nothing more for it.
        assert await kept[0].report_progress(5) is False

        # The peer reuses id 7 (allowed once answered) for a request with another token.
        second = {"name": "wait", "arguments": {}, "_meta": {"progressToken": "second"}}
        await wire.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": second})
        note = await wire.read()
        assert note["params"] == {"progressToken": "second", "progress": 1, "total": 3}
        assert await kept[0].report_progress(999) is False  # not under "second"
        release.set()
        rest = [await wire.read(), await wire.read()]
    assert rest[0]["params"]["progress"] == 2  # still increasing: the old one sent nothing
    assert rest[1]["result"]["content"][0]["text"] == "done"
