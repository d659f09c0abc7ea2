"""Records a handler logs through ``Server.forward_logging`` reach the client before the
handler's answer, as ``ctx.log`` messages do. They are queued from synchronous code
(``notify_soon``) and sent by a background task: an async tool that logged and returned
at once had its answer overtake its records, which arrived after ``call_tool`` returned,
and on a 2026-07-28 HTTP request (whose only stream ends with the answer) never.

On 2026-07-28 a request opts in to log messages with its own ``logLevel``: forwarded
records went out without it, and below the level it asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, Final

import pytest

from mcpkit.client import Client
from mcpkit.server import Server
from mcpkit.testing import connect_memory

from ._httpserver import RunningServer, running_server

pytestmark = pytest.mark.anyio

LOGGER: Final = "tests.forwarded.order"


def build() -> Server:
    server = Server("logs")

    @server.tool()
    async def chatty(n: int) -> str:
        log = logging.getLogger(LOGGER)
        for i in range(n):
            log.warning("record %d", i)
        return "done"

    return server


@pytest.fixture
def server() -> Iterator[Server]:
    server = build()
    log = logging.getLogger(LOGGER)
    handler = server.forward_logging(log)
    try:
        yield server
    finally:
        log.removeHandler(handler)


@pytest.fixture
def http(server: Server) -> Iterator[RunningServer]:
    with running_server(server.streamable_http_app()) as running:
        yield running


def texts(records: list[Any]) -> list[str]:
    return [record.data for record in records]


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_records_arrive_before_the_answer_in_memory(server: Server, era: str) -> None:
    records: list[Any] = []
    async with connect_memory(server, era=era, on_log=records.append) as client:
        await client.set_logging_level("warning")  # (2026-07-28: sent with each request)
        for n in (1, 3, 50):
            records.clear()
            await client.call_tool("chatty", {"n": n})
            assert texts(records) == [f"record {i}" for i in range(n)]


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_records_arrive_before_the_answer_over_http(
    server: Server, http: RunningServer, era: str
) -> None:
    records: list[Any] = []
    async with Client(http.url + "/mcp", era=era, on_log=records.append) as client:  # type: ignore[arg-type]
        await client.set_logging_level("warning")
        for n in (1, 3):
            records.clear()
            await client.call_tool("chatty", {"n": n})
            assert texts(records) == [f"record {i}" for i in range(n)]


@pytest.mark.parametrize(("level", "expected"), [(None, 0), ("error", 0), ("warning", 2)])
async def test_a_2026_request_gets_forwarded_records_only_at_the_level_it_asked_for(
    server: Server, level: str | None, expected: int
) -> None:
    records: list[Any] = []
    async with connect_memory(server, era="2026-07-28", on_log=records.append) as client:
        if level is not None:
            await client.set_logging_level(level)  # type: ignore[arg-type]
        await client.call_tool("chatty", {"n": 2})
        await client.ping()  # (anything sent late would arrive before this answer)
    assert len(records) == expected
