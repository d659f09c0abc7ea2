"""Progress and log messages are rate limited. Progress ("Both parties SHOULD implement
rate limiting to prevent flooding", basic/utilities/progress.mdx): a burst of BURST, then
at most ``progress_rate`` per second per request; what is past the bound is dropped
(``report_progress`` returns False), except a report that reaches its total, so the client
always sees the end. Log messages ("Servers SHOULD rate limit log messages", logging.mdx):
the same per session, ``log_rate``, and a notice of how many were dropped goes before the
next one sent. ``None`` sends everything."""

from __future__ import annotations

import re
import time
from typing import Any, Final

import anyio
import pytest

from mcpkit.aio import BURST
from mcpkit.client import Client
from mcpkit.exceptions import LocalProtocolError, RPCError
from mcpkit.server import RequestContext, Server
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ErrorCode,
    ProgressNotificationParams,
    TextContent,
)

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
    bound = BURST + seen["elapsed"] * rate + 1
    assert BURST <= len(got) <= bound
    assert len(got) < REPORTS
    progress = [note.progress for note in got]
    assert progress == sorted(set(progress))
    assert progress[:BURST] == list(range(1, BURST + 1))
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
    with pytest.raises(LocalProtocolError, match="progress_rate and log_rate must be positive"):
        Server("progress", progress_rate=rate)


# -- log messages ("Servers SHOULD rate limit log messages", logging.mdx "Security") ------

MESSAGES: Final = 500  # (under the client callback queue's bound of 1024, with room)


def build_logging(**options: Any) -> tuple[Server, dict[str, Any]]:
    server = Server("logging", "1.0", **options)
    seen: dict[str, Any] = {}

    @server.tool()
    async def chatty(ctx: RequestContext) -> str:
        """Logs in a tight loop, then once more after the rate has let credit back in."""
        started = time.monotonic()
        seen["sent"] = sum([await ctx.log("info", f"line {n}") for n in range(MESSAGES)])
        seen["elapsed"] = time.monotonic() - started
        return "done"

    return server, seen


NOTICE: Final = re.compile(r"(\d+) log message\(s\) dropped: more than 100 per second")


@pytest.mark.parametrize("rate", [100.0, None])
async def test_log_messages_are_rate_limited_and_the_loss_is_reported(
    rate: float | None,
) -> None:
    server, seen = build_logging(log_rate=rate)
    got: list[Any] = []
    with anyio.fail_after(LIMIT):
        async with connect_memory(server, era="handshake", on_log=got.append) as client:
            await client.set_logging_level("debug")
            await client.call_tool("chatty", {})
            first_call = seen["sent"]
            # Credit comes back with time (the input here, not a synchronisation): the
            # second call's first message goes, after a notice of what was dropped.
            moved_on = time.monotonic() + 0.05
            while time.monotonic() < moved_on:
                await anyio.lowlevel.checkpoint()
            await client.call_tool("chatty", {})
            # Log messages reach on_log through the client's callback runner, which may
            # still be behind the answer: wait (bounded) until all the server sent is in.
            sent = first_call + seen["sent"]
            # (A notice goes right before a message: with the messages, it is in too.)
            while sum(record.logger != "mcpkit" for record in got) < sent:
                await anyio.lowlevel.checkpoint()
    is_notice = [record.logger == "mcpkit" for record in got]
    lines = [record.data for record, notice in zip(got, is_notice, strict=True) if not notice]
    if rate is None:
        assert len(lines) == 2 * MESSAGES
        assert not any(is_notice)
        return
    assert BURST <= first_call <= BURST + seen["elapsed"] * rate + 1
    assert lines[:BURST] == [f"line {n}" for n in range(BURST)]
    assert len(lines) == first_call + seen["sent"] < 2 * MESSAGES
    counts = []
    for index, notice in enumerate(is_notice):
        if notice:
            record = got[index]
            assert record.level == "warning"
            match = NOTICE.fullmatch(record.data)
            assert match is not None, record.data
            counts.append(int(match[1]))
            assert not is_notice[index + 1]  # it goes right before a message
    assert counts, "the loss is reported"
    assert sum(counts) <= 2 * MESSAGES - len(lines)


# -- the server's sampling and elicitation requests, at the client ("Clients SHOULD
# implement rate limiting", client/sampling.mdx and elicitation.mdx "Security") ----------

REQUESTS: Final = 300


def build_asking() -> tuple[Server, dict[str, Any]]:
    server = Server("asking", "1.0")
    seen: dict[str, Any] = {}

    @server.tool()
    async def costly(ctx: RequestContext) -> str:
        """Asks for a sample in a tight loop."""
        started = time.monotonic()
        answered = 0
        refusals: list[tuple[int, str]] = []
        for _ in range(REQUESTS):
            try:
                await ctx.sample("again?", max_tokens=1)
                answered += 1
            except RPCError as exc:
                refusals.append((exc.code, exc.message))
        seen.update(answered=answered, refusals=refusals, elapsed=time.monotonic() - started)
        return "done"

    return server, seen


@pytest.mark.parametrize("rate", [10.0, None])
async def test_the_servers_costly_requests_are_rate_limited(rate: float | None) -> None:
    server, seen = build_asking()
    calls = 0

    async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
        nonlocal calls
        calls += 1
        return CreateMessageResult(role="assistant", content=TextContent(text="."), model="m")

    with anyio.fail_after(LIMIT):
        client = Client(server, sampling=model, era="handshake")
        client.handlers.request_rate = rate
        async with client:
            await client.call_tool("costly", {})
            await client.ping()  # the connection is unharmed
    assert seen["answered"] == calls  # a refused request never reached the callback
    if rate is None:
        assert calls == REQUESTS
        return
    assert BURST <= calls <= BURST + seen["elapsed"] * rate + 1
    assert len(seen["refusals"]) == REQUESTS - calls > 0
    for code, message in seen["refusals"]:
        assert code == ErrorCode.SERVER_BUSY
        assert message.startswith("Too many sampling/createMessage requests: more than 10")
