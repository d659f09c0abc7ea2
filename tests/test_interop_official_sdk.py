"""Interop with the official MCP Python SDK (``mcp``, a test-only dependency), over stdio.

Both directions, each through real subprocesses and OS pipes (no network):

* the official client (``mcp.Client`` over ``mcp.stdio_client``) drives
  ``python -m mcpkit run examples/echo.py``;
* mcpkit's :class:`~mcpkit.client.Client` drives ``tests/fixtures/official_echo_server.py``,
  a server written with the official SDK's ``MCPServer``.

The official SDK is anyio-based and its stdio client and session run on trio as well as on
asyncio, so every test runs on both backends (``anyio_backend`` in ``conftest.py``).

On the official client's side, messages are recorded as they cross the transport (see
:func:`tapped_stdio`): its session hands each progress notification to the callback in a
task of its own, so callback timing alone cannot prove what the server sent first; the
recorded order is the order the bytes arrived on the pipe.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, TextIO

import anyio
import mcp_types
import pytest
from mcp import Client as OfficialClient
from mcp import StdioServerParameters, stdio_client
from mcp.client._transport import TransportStreams  # the stream pair `mcp.client.Transport` yields
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from mcpkit.client import Client, StdioTransport
from mcpkit.server import LowLevelServer
from mcpkit.transports import ProcessChannel
from mcpkit.types import CallToolResult, ProgressNotificationParams, TextContent

pytestmark = pytest.mark.interop

ROOT: Final = Path(__file__).resolve().parent.parent
ECHO_EXAMPLE: Final = ROOT / "examples" / "echo.py"
OFFICIAL_SERVER: Final = Path(__file__).resolve().parent / "fixtures" / "official_echo_server.py"

#: The handshake-era revisions; mcpkit's servers speak exactly these for now.
HANDSHAKE_ERA: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: Bound on every test's waits (subprocess start-up included).
TIMEOUT: Final = 30.0
#: Non-ASCII, escapes, an embedded newline (NDJSON framing must escape it) and astral plane.
TRICKY_TEXT: Final = 'héllo, wörld ✓ 🌍\nline two\t"quoted" \\ back\\slash \u2028 end'

Direction = Literal["in", "out"]


# -- helpers: the official client's side ------------------------------------------------


@dataclass
class Wire:
    """Every JSON-RPC message between the official client and the server, in order.

    ``"in"``: server to client, recorded in the order it was read off the server's stdout.
    ``"out"``: client to server, recorded in the order it was written to the server's stdin.
    """

    messages: list[tuple[Direction, mcp_types.JSONRPCMessage]] = field(default_factory=list)
    #: Lines from the server the official client could not parse as JSON-RPC.
    unparsed: list[Exception] = field(default_factory=list)

    def inbound(self) -> list[mcp_types.JSONRPCMessage]:
        return [message for direction, message in self.messages if direction == "in"]

    def outbound_requests(self, method: str) -> list[mcp_types.JSONRPCRequest]:
        return [
            message
            for direction, message in self.messages
            if direction == "out"
            and isinstance(message, mcp_types.JSONRPCRequest)
            and message.method == method
        ]

    def answer_positions(self, request_id: mcp_types.RequestId) -> list[int]:
        """Positions in :meth:`inbound` of the responses (and errors) to ``request_id``."""
        return [
            index
            for index, message in enumerate(self.inbound())
            if isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError)
            and message.id == request_id
        ]

    def answer_index(self, request_id: mcp_types.RequestId) -> int:
        """Position in :meth:`inbound` of the one response (or error) to ``request_id``."""
        positions = self.answer_positions(request_id)
        assert len(positions) == 1, f"request {request_id!r} answered {positions}:\n{self.dump()}"
        return positions[0]

    def dump(self) -> str:
        """The conversation as JSON lines, for assertion messages."""
        return "\n".join(
            f"{'<-' if direction == 'in' else '->'} "
            f"{message.model_dump_json(by_alias=True, exclude_unset=True)}"
            for direction, message in self.messages
        )


@asynccontextmanager
async def tapped_stdio(
    params: StdioServerParameters, wire: Wire, errlog: TextIO
) -> AsyncIterator[TransportStreams]:
    """``mcp.stdio_client`` with both directions recorded into ``wire``.

    A transport for ``mcp.Client`` (any async context manager yielding the stream pair).
    The official session reads its stream one message at a time, so recording in the pump
    that feeds it preserves the order in which messages came off the pipe.
    """
    async with stdio_client(params, errlog=errlog) as (server_out, server_in):
        to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception]()
        session_writes, from_session = anyio.create_memory_object_stream[SessionMessage]()

        async def pump_in() -> None:
            async with to_session:
                async for item in server_out:
                    if isinstance(item, SessionMessage):
                        wire.messages.append(("in", item.message))
                    else:
                        wire.unparsed.append(item)
                    await to_session.send(item)

        async def pump_out() -> None:
            async with from_session:
                async for item in from_session:
                    wire.messages.append(("out", item.message))
                    await server_in.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            try:
                yield session_reads, session_writes
            finally:
                tg.cancel_scope.cancel()
                session_writes.close()
                session_reads.close()


class ProgressRecorder:
    """A progress callback for the official client that can be awaited for a count."""

    def __init__(self) -> None:
        self.updates: list[tuple[float, float | None, str | None]] = []
        self._changed = anyio.Condition()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        async with self._changed:
            self.updates.append((progress, total, message))
            self._changed.notify_all()

    async def wait_for(self, count: int) -> None:
        async with self._changed:
            while len(self.updates) < count:
                await self._changed.wait()


def only_text(result: mcp_types.CallToolResult) -> str:
    """The text of a result that must be exactly one text block."""
    assert result.is_error is not True, result
    assert len(result.content) == 1, result
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent), result
    return block.text


@pytest.fixture(scope="module")
def echo_example_server() -> LowLevelServer:
    """The ``server`` object of ``examples/echo.py``, loaded without serving it."""
    spec = importlib.util.spec_from_file_location("_interop_echo_example", ECHO_EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.server
    assert isinstance(server, LowLevelServer)
    return server


@pytest.fixture
def echo_server_params(echo_server_argv: list[str], anyio_backend: str) -> StdioServerParameters:
    """``mcpkit run examples/echo.py``, serving on the test's backend (trio with trio)."""
    command, *args = echo_server_argv
    return StdioServerParameters(
        command=command, args=[*args, "--backend", anyio_backend], cwd=str(ROOT)
    )


@pytest.fixture
def server_errlog(tmp_path: Path) -> Iterator[TextIO]:
    """A file for the spawned server's stderr (mcpkit logs warnings and errors there)."""
    with (tmp_path / "server-stderr.log").open("w+", encoding="utf-8") as errlog:
        yield errlog


def read_log(errlog: TextIO) -> str:
    errlog.flush()
    errlog.seek(0)
    return errlog.read()


# -- 1. the official client calls mcpkit's stdio server -----------------------------------


@pytest.mark.anyio
async def test_official_client_calls_mcpkit_server(
    echo_server_params: StdioServerParameters,
    echo_example_server: LowLevelServer,
    server_errlog: TextIO,
) -> None:
    wire = Wire()
    recorder = ProgressRecorder()
    with anyio.fail_after(TIMEOUT):
        # mcp 2.3.0's `Client` defaults to mode="auto": it first probes `server/discover`
        # (2026-07-28, per-request versioning) and falls back to `initialize`. mcpkit's
        # servers speak the handshake era (2024-11-05 .. 2025-11-25) only for now, so this
        # test pins the handshake with mode="legacy"; the probe and its fallback are
        # covered by test_official_client_auto_mode_falls_back_to_handshake.
        async with OfficialClient(
            tapped_stdio(echo_server_params, wire, server_errlog), mode="legacy"
        ) as client:
            # The handshake: the official client asks for its latest handshake revision,
            # which mcpkit supports and so must answer with unchanged.
            assert client.protocol_version in HANDSHAKE_ERA
            assert client.protocol_version == LATEST_HANDSHAKE_VERSION
            assert client.server_info is not None
            assert client.server_info.name == "echo"
            assert client.server_info.version == "1.0.0"
            assert client.instructions == echo_example_server.instructions
            assert client.server_capabilities.tools is not None

            # tools/list: names in registration order, input schemas passed through as given.
            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == ["echo", "blob", "sleep"]
            assert listed.next_cursor is None
            declared = {tool.name: tool for tool in echo_example_server.tools}
            for tool in listed.tools:
                assert tool.input_schema == declared[tool.name].input_schema, tool.name
                assert tool.description == declared[tool.name].description, tool.name
            echo_tool = listed.tools[0]
            assert echo_tool.input_schema == {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo back."}},
                "required": ["text"],
                "additionalProperties": False,
            }
            assert echo_tool.annotations is not None
            assert echo_tool.annotations.read_only_hint is True
            assert echo_tool.annotations.idempotent_hint is True

            # tools/call echo and blob.
            assert only_text(await client.call_tool("echo", {"text": "hi"})) == "hi"
            assert only_text(await client.call_tool("echo", {"text": TRICKY_TEXT})) == TRICKY_TEXT
            for size in (0, 1, 65_537, 1_000_000):
                assert only_text(await client.call_tool("blob", {"size": size})) == "x" * size

            # tools/call sleep with a progress callback (0.1 s apart: several notifications).
            seconds = 0.75
            result = await client.call_tool(
                "sleep", {"seconds": seconds}, progress_callback=recorder
            )
            assert only_text(result) == "slept 0.75 s"

            # An unknown tool is a protocol error, -32602, which the official client raises.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("no-such-tool", {"text": "hi"})
            assert refused.value.code == mcp_types.INVALID_PARAMS
            assert "no-such-tool" in refused.value.message

            # The connection is still fine afterwards.
            assert only_text(await client.call_tool("echo", {"text": "still here"})) == (
                "still here"
            )

            # What the server sent for the sleep call, in the order it came off the pipe.
            [sleep_call] = [
                request
                for request in wire.outbound_requests("tools/call")
                if request.params is not None and request.params.get("name") == "sleep"
            ]
            assert sleep_call.params is not None
            token = sleep_call.params["_meta"]["progressToken"]
            inbound = wire.inbound()
            progress_positions = [
                index
                for index, message in enumerate(inbound)
                if isinstance(message, mcp_types.JSONRPCNotification)
                and message.method == "notifications/progress"
                and message.params is not None
                and message.params.get("progressToken") == token
            ]
            answer_position = wire.answer_index(sleep_call.id)
            assert len(progress_positions) >= 3, wire.dump()
            assert all(position < answer_position for position in progress_positions), wire.dump()
            on_wire = [inbound[position] for position in progress_positions]
            sent: list[tuple[float, float | None, str | None]] = []
            for message in on_wire:
                assert isinstance(message, mcp_types.JSONRPCNotification)
                assert message.params is not None
                sent.append(
                    (message.params["progress"], message.params["total"], message.params["message"])
                )
            values = [progress for progress, _, _ in sent]
            assert values == sorted(set(values)), f"progress must strictly increase: {values}"
            assert all(0 < value <= seconds for value in values), values
            assert all(total == seconds and text == "sleeping" for _, total, text in sent), sent

            # Every one of them reached the official client's callback, in that order (it
            # runs callbacks in tasks of their own, so wait for the stragglers).
            await recorder.wait_for(len(sent))
            assert recorder.updates == sent

            # The only error the server answered with is the unknown tool.
            errors = [m for m in inbound if isinstance(m, mcp_types.JSONRPCError)]
            assert [error.error.code for error in errors] == [-32602], wire.dump()
            assert wire.unparsed == []

    assert read_log(server_errlog) == "", "mcpkit logged warnings or errors"


@pytest.mark.anyio
async def test_official_client_auto_mode_settles_on_2026(
    echo_server_params: StdioServerParameters, server_errlog: TextIO
) -> None:
    # The official client's default: probe `server/discover`, fall back to `initialize` on
    # any JSON-RPC error. mcpkit serves both eras on one connection, so the probe succeeds,
    # the client never sends `initialize`, and every later request carries its own `_meta`.
    wire = Wire()
    with anyio.fail_after(TIMEOUT):
        async with OfficialClient(tapped_stdio(echo_server_params, wire, server_errlog)) as client:
            assert client.protocol_version == "2026-07-28"
            assert only_text(await client.call_tool("echo", {"text": "auto"})) == "auto"

    [probe] = wire.outbound_requests("server/discover")
    assert wire.outbound_requests("initialize") == []
    probe_answer = wire.inbound()[wire.answer_index(probe.id)]
    assert isinstance(probe_answer, mcp_types.JSONRPCResponse), wire.dump()
    assert "2026-07-28" in probe_answer.result["supportedVersions"]
    assert wire.unparsed == []
    assert read_log(server_errlog) == "", "mcpkit logged warnings or errors"


@pytest.mark.anyio
async def test_official_client_timeout_cancels_mcpkit_handler(
    echo_server_params: StdioServerParameters, server_errlog: TextIO
) -> None:
    # On a read timeout the official client sends `notifications/cancelled`; the spec says
    # the server then stops and sends no response for that request.
    wire = Wire()
    with anyio.fail_after(TIMEOUT):
        async with OfficialClient(
            tapped_stdio(echo_server_params, wire, server_errlog), mode="legacy"
        ) as client:
            with pytest.raises(MCPError) as timed_out:
                await client.call_tool("sleep", {"seconds": 1.0}, read_timeout_seconds=0.3)
            assert timed_out.value.code == mcp_types.REQUEST_TIMEOUT
            # A second, identical call that is not cancelled: its deadline is later than the
            # first one's, so had the server kept sleeping for the first call, that answer
            # would come off the pipe before this one.
            assert only_text(await client.call_tool("sleep", {"seconds": 1.0})) == "slept 1 s"

    first, second = wire.outbound_requests("tools/call")
    cancels = [
        message
        for direction, message in wire.messages
        if direction == "out"
        and isinstance(message, mcp_types.JSONRPCNotification)
        and message.method == "notifications/cancelled"
    ]
    assert [cancel.params and cancel.params["requestId"] for cancel in cancels] == [first.id], (
        wire.dump()
    )
    wire.answer_index(second.id)
    assert wire.answer_positions(first.id) == [], wire.dump()
    assert wire.unparsed == []
    assert read_log(server_errlog) == "", "mcpkit logged warnings or errors"


# -- 2. mcpkit's client calls a stdio server written with the official SDK -----------------


def official_server_transport(stderr_lines: list[str]) -> StdioTransport:
    return StdioTransport(
        sys.executable,
        [str(OFFICIAL_SERVER)],
        cwd=ROOT,
        stderr="capture",
        on_stderr=stderr_lines.append,
    )


def assert_no_tracebacks(stderr_lines: list[str]) -> None:
    assert not any("Traceback" in line or "ERROR" in line for line in stderr_lines), "\n".join(
        stderr_lines
    )


def assert_reaped(pid: int) -> None:
    """No zombie is left behind: ``pid`` is no longer a child of this process."""
    if sys.platform == "win32":
        return
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # WNOHANG: never blocks


@pytest.mark.anyio
async def test_mcpkit_client_calls_official_server() -> None:
    stderr_lines: list[str] = []
    events: list[ProgressNotificationParams | CallToolResult] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(official_server_transport(stderr_lines), era="handshake") as client:
            assert client.server_info.name == "official-echo"
            assert client.server_info.version == "2.3.0-interop"
            assert client.protocol_version in HANDSHAKE_ERA
            assert client.instructions == "Echo text back, or count while reporting progress."

            tools = {tool.name: tool async for tool in client.iter_tools()}
            assert set(tools) == {"echo", "count"}
            assert tools["echo"].input_schema["type"] == "object"
            assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
            assert tools["echo"].input_schema["required"] == ["text"]
            assert tools["count"].input_schema["properties"]["steps"]["type"] == "integer"

            for text in ("hi", TRICKY_TEXT):
                result = await client.call_tool("echo", {"text": text})
                assert result.is_error is not True, result
                assert result.content == [TextContent(text=text)]
                # MCPServer derives an output schema from `-> str` and adds structuredContent.
                assert result.structured_content == {"result": text}

            steps = 5
            result = await client.call_tool("count", {"steps": steps}, on_progress=events.append)
            events.append(result)
            assert result.is_error is not True, result
            assert result.content == [TextContent(text=f"counted {steps}")]

            # All progress was delivered, in order, before call_tool returned.
            assert [type(event) for event in events] == [ProgressNotificationParams] * steps + [
                CallToolResult
            ]
            updates = [event for event in events if isinstance(event, ProgressNotificationParams)]
            assert [update.progress for update in updates] == [1, 2, 3, 4, 5]
            assert {update.total for update in updates} == {steps}
            assert [update.message for update in updates] == [f"step {i}" for i in range(1, 6)]
            assert len({update.progress_token for update in updates}) == 1

            await client.ping()

    assert_no_tracebacks(stderr_lines)


@dataclass
class KeepChannel:
    """A client transport that keeps the channel it opens, to read ``pid`` / ``returncode``.

    The channel is opened (entered) and closed by the ``Client`` alone, exactly as with a
    plain :class:`StdioTransport`.
    """

    transport: StdioTransport
    channel: ProcessChannel | None = None

    def connect(self) -> ProcessChannel:
        self.channel = self.transport.connect()
        return self.channel


@pytest.mark.anyio
@pytest.mark.parametrize("version", HANDSHAKE_ERA)
async def test_mcpkit_client_handshake_versions_and_clean_shutdown(version: str) -> None:
    stderr_lines: list[str] = []
    opener = KeepChannel(official_server_transport(stderr_lines))
    with anyio.fail_after(TIMEOUT):
        async with Client(opener, protocol_version=version) as client:
            assert client.protocol_version == version
            result = await client.call_tool("echo", {"text": version})
            assert result.content == [TextContent(text=version)]
            await client.ping()
            channel = opener.channel
            assert channel is not None
            pid = channel.pid
            status_while_connected = channel.returncode
            assert pid is not None
            assert status_while_connected is None
    # Leaving the client closed the channel: stdin closed, and the server exited on its own
    # (0), without needing SIGTERM (-15) or SIGKILL (-9); then it was reaped.
    assert channel.returncode == 0, "\n".join(stderr_lines)
    assert_reaped(pid)
    assert_no_tracebacks(stderr_lines)
