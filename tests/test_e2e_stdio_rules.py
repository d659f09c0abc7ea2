"""End to end: `mcpkit run examples/echo.py` as a real subprocess, spoken to in raw bytes.

Every JSON-RPC and lifecycle rule is checked on the wire.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from ._rawstdio import INIT_PARAMS, RawStdioServer
from .conftest import EXAMPLES

pytestmark = pytest.mark.anyio

ECHO = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py")]


ServerFactory = Callable[..., RawStdioServer]


@pytest.fixture
def server(anyio_backend: str) -> ServerFactory:
    """Start the echo server on the same backend the test runs on (asyncio or trio)."""

    def make(*extra: str) -> RawStdioServer:
        return RawStdioServer([*ECHO, "--backend", anyio_backend, *extra])

    return make


async def test_full_session_round_trip(server: ServerFactory) -> None:
    async with server() as s:
        reply = await s.initialize()
        assert reply["id"] == "init"
        result = reply["result"]
        assert result["protocolVersion"] == "2025-11-25"
        assert result["serverInfo"] == {"name": "echo", "version": "1.0.0"}
        assert result["capabilities"] == {"logging": {}, "tools": {}}
        assert "instructions" in result
        tools = await s.request(1, "tools/list")
        assert [t["name"] for t in tools["result"]["tools"]] == ["echo", "blob", "sleep"]
        call = await s.request(2, "tools/call", {"name": "echo", "arguments": {"text": "héllo ✓"}})
        assert call == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "héllo ✓"}]},
        }
        blob = await s.request("b", "tools/call", {"name": "blob", "arguments": {"size": 100_000}})
        assert len(blob["result"]["content"][0]["text"]) == 100_000
        assert await s.close_stdin_and_wait() == 0


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_version_negotiation_keeps_a_supported_version(
    version: str, server: ServerFactory
) -> None:
    async with server() as s:
        assert (await s.initialize(version))["result"]["protocolVersion"] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "draft"])
async def test_unsupported_version_gets_the_latest(version: str, server: ServerFactory) -> None:
    async with server() as s:
        assert (await s.initialize(version))["result"]["protocolVersion"] == "2025-11-25"


async def test_requests_before_initialize_fail_and_connection_survives(
    server: ServerFactory,
) -> None:
    async with server() as s:
        assert (await s.request(1, "ping"))["result"] == {}
        early = await s.request(2, "tools/list")
        assert early["id"] == 2
        assert early["error"]["code"] == -32600
        assert (await s.initialize())["result"]["protocolVersion"] == "2025-11-25"
        assert "result" in await s.request(3, "tools/list")


async def test_second_initialize_is_refused(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        again = await s.request(9, "initialize", INIT_PARAMS)
        assert again["error"]["code"] == -32600
        assert again["id"] == 9
        await s.assert_silent()


async def test_invalid_initialize_params(server: ServerFactory) -> None:
    async with server() as s:
        bad = await s.request(1, "initialize", {"protocolVersion": 5})
        assert bad["error"]["code"] == -32602
        assert (await s.initialize())["result"]["protocolVersion"] == "2025-11-25"


# (raw line, expected error code, expected id)
BAD_LINES: list[tuple[bytes, int, Any]] = [
    (b"{not json", -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700, None),
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}', -32700, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"), -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}', -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\\ud800"}}', -32700, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}', -32600, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', -32600, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":"x"}', -32600, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":7}', -32600, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[]}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/frobnicate"}', -32601, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"Tools/List"}', -32601, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"rpc.discover"}', -32601, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call"}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"!!"}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"m","params":{"_meta":{"progressToken":true}}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":5}}', -32602, 4),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":null}}', -32602, 4),
    (b"[]", -32600, None),
    (b'"just a string"', -32600, None),
]


async def test_every_bad_line_gets_its_error_and_reading_goes_on(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        for line, code, rid in BAD_LINES:
            await s.write(line + b"\n")
            reply = await s.receive()
            assert reply["jsonrpc"] == "2.0", line
            assert reply["error"]["code"] == code, (line, reply)
            assert "id" in reply, line
            assert reply["id"] == rid, (line, reply)
            assert isinstance(reply["error"]["message"], str)
            assert reply["error"]["message"]
        await s.assert_silent()


async def test_notifications_are_never_answered(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        for line in [
            b'{"jsonrpc":"2.0","method":"notifications/unknown"}',
            b'{"jsonrpc":"2.0","method":"x","params":[1]}',
            b'{"jsonrpc":"2.0","method":"x","params":"s"}',
            b'{"jsonrpc":"1.0","method":"x"}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":404}}',
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
            b'{"jsonrpc":"2.0","id":12345,"result":{}}',
            b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        ]:
            await s.write(line + b"\n")
        await s.assert_silent()


async def test_framing_blank_lines_crlf_and_big_ids(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.write(b"\n\r\n   \n")
        await s.write(b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}\r\n')
        assert await s.read_line() == b'{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}'
        await s.write(b'{"jsonrpc":"2.0","id":1000000000000000000000000000000,"method":"ping"}\n')
        assert (
            await s.read_line()
            == b'{"jsonrpc":"2.0","id":1000000000000000000000000000000,"result":{}}'
        )
        await s.write(b'{"jsonrpc":"2.0","id":"1","method":"ping"}\n')
        assert await s.read_line() == b'{"jsonrpc":"2.0","id":"1","result":{}}'


async def test_overlong_line_is_a_parse_error_and_reading_goes_on(server: ServerFactory) -> None:
    async with server("--max-message-bytes", "1000") as s:
        await s.initialize()
        text = "x" * 2000
        await s.send(
            id=1, method="tools/call", params={"name": "echo", "arguments": {"text": text}}
        )
        reply = await s.receive()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32700
        ok = await s.request(2, "tools/call", {"name": "echo", "arguments": {"text": "small"}})
        assert ok["result"]["content"][0]["text"] == "small"


async def test_blob_result_exceeding_nothing_is_exact(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        reply = await s.request(1, "tools/call", {"name": "blob", "arguments": {"size": 3_000_000}})
        assert len(reply["result"]["content"][0]["text"]) == 3_000_000


async def test_duplicate_in_flight_id_then_first_completes(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.send(
            id=7, method="tools/call", params={"name": "sleep", "arguments": {"seconds": 0.3}}
        )
        await s.send(id=7, method="ping")
        dup = await s.receive()
        assert dup["id"] == 7
        assert dup["error"]["code"] == -32600
        done = await s.receive()
        assert done["id"] == 7
        assert done["result"]["content"][0]["text"] == "slept 0.3 s"


async def test_cancel_stops_the_tool_and_no_response_is_sent(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.send(
            id="slow", method="tools/call", params={"name": "sleep", "arguments": {"seconds": 30}}
        )
        await s.send(
            method="notifications/cancelled", params={"requestId": "slow", "reason": "test"}
        )
        await s.assert_silent()
        # The cancelled work really ends: its id is soon free again (until the handler has
        # unwound, reusing it is refused as a duplicate rather than risking a mix-up).
        with anyio.fail_after(5):
            while "result" not in (again := await s.request("slow", "ping")):
                assert again["error"]["code"] == -32600


async def test_progress_notifications_precede_the_result_and_increase(
    server: ServerFactory,
) -> None:
    async with server() as s:
        await s.initialize()
        await s.send(
            id=1,
            method="tools/call",
            params={
                "name": "sleep",
                "arguments": {"seconds": 0.45},
                "_meta": {"progressToken": "tok"},
            },
        )
        progress: list[float] = []
        while True:
            message = await s.receive()
            if message.get("method") == "notifications/progress":
                assert message["params"]["progressToken"] == "tok"
                assert message["params"]["total"] == 0.45
                progress.append(message["params"]["progress"])
                continue
            assert message["id"] == 1
            break
        assert len(progress) >= 3
        assert progress == sorted(progress)
        assert len(set(progress)) == len(progress)
        await s.assert_silent()


async def test_no_progress_without_a_token(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        reply = await s.request(1, "tools/call", {"name": "sleep", "arguments": {"seconds": 0.25}})
        assert reply["id"] == 1


async def test_tool_errors_are_results_not_protocol_errors(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        reply = await s.request(1, "tools/call", {"name": "blob", "arguments": {"size": "big"}})
        assert reply["result"]["isError"] is True
        assert "size" in reply["result"]["content"][0]["text"]


async def test_logging_set_level(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        assert (await s.request(1, "logging/setLevel", {"level": "debug"}))["result"] == {}


async def test_exit_when_stdin_closes(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.send(
            id=1, method="tools/call", params={"name": "sleep", "arguments": {"seconds": 60}}
        )
        assert await s.close_stdin_and_wait() == 0


async def test_requests_written_before_eof_are_still_answered(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.send(
            id=1, method="tools/call", params={"name": "sleep", "arguments": {"seconds": 0.3}}
        )
        await s.send(
            id=2, method="tools/call", params={"name": "echo", "arguments": {"text": "last"}}
        )
        assert s.process is not None
        assert s.process.stdin is not None
        await s.process.stdin.aclose()
        answers = {(await s.receive())["id"], (await s.receive())["id"]}
        assert answers == {1, 2}
        assert await s.close_stdin_and_wait() == 0


async def test_exit_without_initialize(server: ServerFactory) -> None:
    async with server() as s:
        assert await s.close_stdin_and_wait() == 0


async def test_only_protocol_messages_on_stdout(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize()
        await s.request(1, "tools/list")
        await s.request(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        await s.close_stdin_and_wait()
    for line in s.received:
        decoded = json.loads(line)
        assert decoded["jsonrpc"] == "2.0"


async def test_batches_on_2025_03_26(server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize("2025-03-26")
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {
                "jsonrpc": "2.0",
                "id": "t",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "b"}},
            },
            {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}},
            {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        ]
        await s.write(json.dumps(batch).encode() + b"\n")
        reply = json.loads(await s.read_line())
        assert isinstance(reply, list)
        by_id = {str(r["id"]): r for r in reply}
        assert set(by_id) == {"1", "t", "9", "None"}
        assert by_id["1"]["result"] == {}
        assert by_id["t"]["result"]["content"][0]["text"] == "b"
        assert by_id["9"]["error"]["code"] == -32600  # initialize is never batched
        assert by_id["None"]["error"]["code"] == -32600
        # A batch of notifications only is not answered at all.
        await s.write(b'[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]\n')
        await s.write(b"[]\n")
        assert (await s.receive())["error"]["code"] == -32600
        await s.assert_silent()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
async def test_batches_refused_on_other_revisions(version: str, server: ServerFactory) -> None:
    async with server() as s:
        await s.initialize(version)
        await s.write(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n')
        reply = await s.receive()
        assert reply["error"]["code"] == -32600
        assert reply["id"] is None
