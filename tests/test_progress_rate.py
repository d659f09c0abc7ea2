"""Progress is rate limited per request ("Both parties SHOULD implement rate limiting to
prevent flooding", basic/utilities/progress.mdx): a burst of PROGRESS_BURST, then at most
``progress_rate`` per second; what is past the bound is dropped (``report_progress``
returns False), except a report that reaches its total, so the client always sees the
end. ``progress_rate=None`` sends everything."""

from __future__ import annotations

import time
from typing import Any, Final

import anyio
import pytest

from mcpkit.aio import PROGRESS_BURST
from mcpkit.exceptions import LocalProtocolError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import ProgressNotificationParams

pytestmark = pytest.mark.anyio

LIMIT: Final = 20.0
REPORTS: Final = 2000


def build(**options: Any) -> tuple[Server, dict[str, Any]]:
    server = Server("progress", "1.0", **options)
    seen: dict[str, Any] = {}

    @server.tool()
    async def busy(ctx: RequestContext, total: bool = True) -> str:
        """Reports progress in a tight loop."""
        started = time.monotonic()
        sent = 0
        for step in range(1, REPORTS + 1):
            sent += await ctx.report_progress(step, REPORTS if total else None)
        seen["elapsed"] = time.monotonic() - started
        seen["sent"] = sent
        return "done"

    return server, seen


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
@pytest.mark.parametrize(("rate", "total"), [(50.0, True), (50.0, False), (1000.0, True)])
async def test_a_tight_loop_is_cut_to_the_rate_and_the_end_still_arrives(
    era: str, rate: float, total: bool
) -> None:
    server, seen = build(progress_rate=rate)
    got: list[ProgressNotificationParams] = []
    with anyio.fail_after(LIMIT):
        async with connect_memory(server, era=era) as client:
            result = await client.call_tool("busy", {"total": total}, on_progress=got.append)
    assert not result.is_error
    # What the tool was told was sent is exactly what arrived.
    assert len(got) == seen["sent"]
    bound = PROGRESS_BURST + seen["elapsed"] * rate + 1
    assert PROGRESS_BURST <= len(got) <= bound
    assert len(got) < REPORTS
    progress = [note.progress for note in got]
    assert progress == sorted(set(progress))
    assert progress[:PROGRESS_BURST] == list(range(1, PROGRESS_BURST + 1))
    if total:
        assert progress[-1] == REPORTS  # reaching the total always goes


async def test_no_bound_sends_every_report() -> None:
    server, seen = build(progress_rate=None)
    got: list[ProgressNotificationParams] = []
    with anyio.fail_after(LIMIT):
        async with connect_memory(server, era="handshake") as client:
            await client.call_tool("busy", {}, on_progress=got.append)
    assert seen["sent"] == len(got) == REPORTS


@pytest.mark.parametrize("rate", [0, -1.0])
def test_the_rate_must_be_positive(rate: float) -> None:
    with pytest.raises(LocalProtocolError, match="progress_rate must be positive"):
        Server("progress", progress_rate=rate)
