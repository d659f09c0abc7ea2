"""What escapes a handler other than an ordinary exception still ends in exactly one answer,
and the server goes on serving: ``sys.exit()`` (argparse calls it on a bad option, and the
model chooses the options), and a ``CancelledError`` that nobody asked for (a handler
awaiting something another party cancelled). The first ended the whole server; the second
left the call without any answer until the client's timeout."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.exceptions import RPCError
from mcpkit.server import Server
from mcpkit.testing import connect_memory
from mcpkit.types import TextContent

from ._httpserver import running_server
from ._mcphttp import RawSession, call

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0

#: Telling a stray CancelledError from a real cancellation needs Task.cancelling()
#: (Python 3.11+). On 3.10 the server cannot tell them apart, and the call is answered
#: when it times out instead (documented in aio/_calls.py); there is nothing to test.
STRAY_NEEDS_3_11 = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="stray cancellation is told apart with Task.cancelling() (3.11+)",
)


def build() -> Server:
    server = Server("escapes", "1.0")

    @server.tool()
    def cli(argv: list[str]) -> str:
        """Run a tiny command line."""
        parser = argparse.ArgumentParser(prog="cli")
        parser.add_argument("--n", type=int, required=True)
        return str(parser.parse_args(argv).n)

    @server.tool()
    async def leave(code: int) -> str:
        """Exit, asynchronously."""
        sys.exit(code)

    @server.tool()
    async def stray() -> str:
        """Await a future that another party cancels."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(future.cancel)
        return await future

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.resource("config://{name}")
    def config(name: str) -> str:
        sys.exit(f"config {name} not found")

    return server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # a stray CancelledError is asyncio's (trio has no such thing)


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("cli", {"argv": ["--n", "x"]}), ("cli", {"argv": []}), ("leave", {"code": 3})],
)
async def test_sys_exit_in_a_tool_is_its_failure(tool: str, arguments: dict[str, Any]) -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            assert "sys.exit" in text_of(result)
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"


async def test_sys_exit_in_a_resource_is_an_internal_error() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            with pytest.raises(RPCError) as raised:
                await client.read_resource("config://db")
            assert raised.value.code == -32603
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"


@STRAY_NEEDS_3_11
async def test_a_stray_cancellation_is_answered_at_once() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build(), timeout=LIMIT) as client:
            with pytest.raises(RPCError) as raised:
                await client.call_tool("stray", {})
            assert raised.value.code == -32603
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"


@STRAY_NEEDS_3_11
@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
async def test_a_stray_cancellation_over_http_is_answered(json_response: bool) -> None:
    """Over HTTP the handler runs in the POST's own task: the POST gets its answer."""
    app = build().streamable_http_app(json_response=json_response)
    with running_server(app) as http, anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=LIMIT) as raw:
            session = RawSession(raw, http.url + "/mcp")
            await session.open()
            response = await session.post(call(2, "stray"))
            assert response.status_code == 200, response.text
            assert '"code":-32603' in response.text.replace(" ", "")
            assert (await session.call(3, "ping"))["result"] == {}
