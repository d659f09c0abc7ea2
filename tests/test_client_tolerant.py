"""Strict by default, tolerant on request: malformed results, `params: null` and
structured content that breaks the tool's outputSchema."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from msgspec import UNSET

from mcpkit.aio import memory_channel_pair
from mcpkit.client import Client
from mcpkit.exceptions import RemoteProtocolError
from mcpkit.server import LowLevelServer, RequestContext
from mcpkit.testing import connect_memory
from mcpkit.types import (
    CallToolRequestParams,
    ListToolsRequestParams,
    LoggingMessageNotificationParams,
)

pytestmark = pytest.mark.anyio


def sloppy_server() -> LowLevelServer:
    server = LowLevelServer("sloppy")

    async def list_tools(ctx: RequestContext, params: ListToolsRequestParams) -> dict[str, Any]:
        return {
            "tools": [
                {"name": "no_schema"},  # inputSchema is required
                {
                    "name": "typed",
                    "inputSchema": {"type": "object"},
                    "outputSchema": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                        "required": ["n"],
                    },
                },
            ]
        }

    async def call_tool(ctx: RequestContext, params: CallToolRequestParams) -> dict[str, Any]:
        if params.name == "typed":
            return {
                "content": [{"type": "text", "text": "{}"}],
                "structuredContent": {"n": "not a number"},
            }
        return {"isError": False}  # content is required

    server.set_request_handler("tools/list", list_tools)
    server.set_request_handler("tools/call", call_tool)
    return server


async def test_strict_refuses_malformed_results() -> None:
    async with connect_memory(sloppy_server()) as client:
        with pytest.raises(RemoteProtocolError, match="tools/list"):
            await client.list_tools()
        with pytest.raises(RemoteProtocolError, match="tools/call"):
            await client.call_tool("no_schema")


async def test_tolerant_repairs_them_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    async with connect_memory(sloppy_server(), tolerant=True) as client:
        tools = await client.list_tools()
        assert tools.tools[0].input_schema == {}
        result = await client.call_tool("no_schema")
        assert result.content == []
        typed = await client.call_tool("typed")
        assert typed.structured_content == {"n": "not a number"}
    assert "tolerated a malformed result" in caplog.text
    assert "does not match its outputSchema" in caplog.text


def nulls_server() -> LowLevelServer:
    """Members sent as ``null`` where the schema has no null: the commonest deviation."""
    server = LowLevelServer("nulls")

    async def list_tools(ctx: RequestContext, params: ListToolsRequestParams) -> dict[str, Any]:
        return {
            "tools": [
                {"name": "a", "description": None, "inputSchema": {"type": "object"}},
                {"name": None, "inputSchema": {"type": "object"}},  # required: made empty
            ],
            "nextCursor": None,
        }

    server.set_request_handler("tools/list", list_tools)
    return server


async def test_tolerant_reads_null_as_absent(caplog: pytest.LogCaptureFixture) -> None:
    async with connect_memory(nulls_server()) as client:
        with pytest.raises(RemoteProtocolError, match="got `null`"):
            await client.list_tools()  # strict by default
    async with connect_memory(nulls_server(), tolerant=True) as client:
        tools = await client.list_tools()
    assert tools.next_cursor is UNSET  # absent: no next page
    assert [(t.name, t.description) for t in tools.tools] == [("a", UNSET), ("", UNSET)]
    assert "tolerated a malformed result for tools/list" in caplog.text


async def test_strict_checks_structured_content_against_the_output_schema() -> None:
    server = sloppy_server()

    async def list_tools(ctx: RequestContext, params: ListToolsRequestParams) -> dict[str, Any]:
        return {
            "tools": [
                {
                    "name": "typed",
                    "inputSchema": {"type": "object"},
                    "outputSchema": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                        "required": ["n"],
                    },
                }
            ]
        }

    server.set_request_handler("tools/list", list_tools)
    async with connect_memory(server) as client:
        await client.list_tools()
        with pytest.raises(RemoteProtocolError, match="'n' must be an integer"):
            await client.call_tool("typed")


@pytest.mark.parametrize(("tolerant", "expected"), [(False, 0), (True, 1)])
async def test_params_null_notification(tolerant: bool, expected: int) -> None:
    """A server that sends ``"params": null``: dropped when strict, delivered when tolerant."""
    got_log = anyio.Event()
    mine, theirs = memory_channel_pair()

    def on_log(record: LoggingMessageNotificationParams) -> None:
        got_log.set()  # it follows the list_changed notification on the wire

    async def fake_server() -> None:
        request = json.loads(await theirs.receive())
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "f", "version": "0"},
        }
        await theirs.send(
            json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        )
        await theirs.receive()  # notifications/initialized
        await theirs.send(
            b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":null}'
        )
        await theirs.send(
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
        )

    changes: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake_server)
        async with Client(
            mine, era="handshake", tolerant=tolerant, on_log=on_log, on_list_changed=changes.append
        ):
            with anyio.fail_after(5):
                await got_log.wait()
    await theirs.aclose()
    assert len(changes) == expected
