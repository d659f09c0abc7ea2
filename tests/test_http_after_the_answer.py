"""What a task a handler left behind sends after the request's answer (a log message, a
notification, a sampling request, through the request's reply route) goes on the
session's GET stream, in SSE mode as in JSON mode. In SSE mode it was written to the
request's ended stream, behind its answer, where no client reads: notifications were
lost without a trace and a sampling request waited out its timeout."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcpkit.client import Client
from mcpkit.server import RequestContext, Server
from mcpkit.types import CreateMessageRequestParams, CreateMessageResult, TextContent

from ._httpserver import RunningServer, running_server

pytestmark = pytest.mark.anyio


def build() -> tuple[Server, dict[str, Any]]:
    server = Server("later")
    state: dict[str, Any] = {}

    @server.tool()
    async def leave_work(ctx: RequestContext) -> str:
        go = state["go"] = asyncio.Event()

        async def afterwards() -> None:
            await go.wait()  # set by the next call: this answer has long been sent
            await ctx.log("error", "after the answer")
            reply = await ctx.sample("hi", max_tokens=5, timeout=10)
            assert isinstance(reply.content, TextContent)
            state["sampled"] = reply.content.text

        state["task"] = asyncio.create_task(afterwards())  # inherits the request's route
        await asyncio.sleep(0)  # (a handler that waits once: in SSE mode, a streamed answer)
        return "answered"

    @server.tool()
    async def release() -> str:
        state["go"].set()
        await state["task"]
        return str(state["sampled"])

    return server, state


async def model(params: CreateMessageRequestParams) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(text="HI"), model="m")


@pytest.fixture(params=[False, True], ids=["sse", "json"])
def http(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    server, _ = build()
    with running_server(server.streamable_http_app(json_response=request.param)) as running:
        yield running


async def test_what_a_handler_leaves_behind_goes_on_the_get_stream(http: RunningServer) -> None:
    logs: list[Any] = []
    logged = anyio.Event()

    def on_log(record: Any) -> None:
        logs.append(record)
        logged.set()

    async with Client(http.url + "/mcp", era="handshake", sampling=model, on_log=on_log) as client:
        await client.set_logging_level("debug")
        assert (await client.call_tool("leave_work")).content[0].text == "answered"  # type: ignore[union-attr]
        with anyio.fail_after(15):
            # The sampling request reached the client (on its GET stream) and was answered;
            # the log message went before it on the same stream.
            assert (await client.call_tool("release")).content[0].text == "HI"  # type: ignore[union-attr]
            await logged.wait()
    assert [record.data for record in logs] == ["after the answer"]
