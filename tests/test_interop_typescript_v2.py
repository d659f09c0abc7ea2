"""Interop with the MCP TypeScript SDK v2 (``@modelcontextprotocol/client`` and
``@modelcontextprotocol/server`` 2.4.0, pinned in ``tests/interop_ts2/package-lock.json``)
on the 2026-07-28 revision, through real subprocesses:

* the v2 client (``tests/interop_ts2/client.mjs``) drives ``mcpkit run
  examples/everything.py`` over stdio and over Streamable HTTP on 127.0.0.1. With
  ``versionNegotiation: {mode: 'auto'}`` it probes with ``server/discover`` and settles on
  2026-07-28 (no ``initialize``); then every request carries the ``_meta`` envelope and
  every result ``resultType``. Its default mode (``'legacy'``) still runs the handshake.
* raw 2026-07-28 JSON-RPC from Python drives ``tests/interop_ts2/server.mjs`` (``McpServer``
  under ``serveStdio``, and under ``createMcpHandler`` over HTTP on 127.0.0.1), checking
  what mcpkit expects of a 2026 peer: ``server/discover``, ``resultType`` and ``serverInfo``
  on results, the envelope errors, multi round-trip (``input_required``) results, log
  opt-in, request-scoped progress, and over HTTP the header checks and status codes. One
  deviation of the TS server from the spec is pinned by
  :func:`test_ts2_server_ignores_unsupported_version`.

Node and its modules come from the venv (``make test`` installs both), as for the v1 SDK
tests, whose helpers are reused here. Python-side async runs on asyncio and trio; the
HTTP server (uvicorn) on asyncio only.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.abc
import httpx
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from . import test_interop_typescript as v1
from . import test_interop_typescript_http as v1_http
from .test_interop_typescript import ROOT, TIMEOUT, TRICKY_TEXT, Summary, late_progress, text_of

pytestmark = pytest.mark.interop

TS2_DIR: Final = ROOT / "tests" / "interop_ts2"
TS2_CLIENT: Final = TS2_DIR / "client.mjs"
TS2_SERVER: Final = TS2_DIR / "server.mjs"
TS2_PACKAGES: Final = ("@modelcontextprotocol/client", "@modelcontextprotocol/server")
EVERYTHING: Final = ROOT / "examples" / "everything.py"
MODERN: Final = "2026-07-28"
PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
EVERYTHING_INFO: Final = {"name": "mcp-conformance-test-server", "version": "1.0.0"}
MAX_LINE: Final = 1024 * 1024


@pytest.fixture(scope="module")
def node() -> str:
    """Node >= 22 from the venv, with ``tests/interop_ts2/node_modules`` as locked."""
    path = str(v1.venv_node())
    version = subprocess.run(
        [path, "--version"], capture_output=True, text=True, check=True, timeout=TIMEOUT
    ).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= v1.MIN_NODE_MAJOR, version
    lock = json.loads((TS2_DIR / "package-lock.json").read_text(encoding="utf-8"))
    for package in TS2_PACKAGES:
        locked = lock["packages"][f"node_modules/{package}"]["version"]
        manifest = TS2_DIR / "node_modules" / package / "package.json"
        if not manifest.is_file():
            pytest.fail(
                f"{TS2_DIR.relative_to(ROOT)}/node_modules is missing: run `make test` "
                "(it runs `npm ci` there with the venv's Node)"
            )
        installed = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        if installed != locked:
            pytest.fail(f"{package} {installed} installed, the lock says {locked}: run `make test`")
    return path


# -- 1. the v2 client calls mcpkit's servers ------------------------------------------------


async def run_ts2_client(node: str, plan: dict[str, Any], target: list[str]) -> Summary:
    """Run ``client.mjs`` against ``target`` (a command or a URL); its summary, exit 0."""
    with anyio.fail_after(TIMEOUT):
        done = await anyio.run_process(
            [node, str(TS2_CLIENT), json.dumps(plan), *target], cwd=ROOT, check=False
        )
    stderr = done.stderr.decode(errors="replace")
    assert done.stdout, f"client.mjs printed no summary (exit {done.returncode}):\n{stderr}"
    summary = Summary(json.loads(done.stdout))
    assert (done.returncode, summary["failures"]) == (0, []), f"{stderr}\n{summary.dump()}"
    return summary


def stdio_server(backend: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING), "--backend", backend]


def call(name: str, *, progress: bool = False, **arguments: Any) -> dict[str, Any]:
    return {"op": "callTool", "name": name, "arguments": arguments, "progress": progress}


def wants_logs(step: dict[str, Any]) -> dict[str, Any]:
    """The step opting in to log messages: 2026-07-28 has no ``logging/setLevel``, the
    request itself carries ``_meta.logLevel`` (``server/utilities/logging.mdx``)."""
    return {**step, "meta": {LOG_LEVEL: "debug"}}


#: What the v2 client does with mcpkit on 2026-07-28, step by step (see the asserts below).
MODERN_PLAN: Final = [
    {"op": "listTools"},  # 0
    call("echo", text=TRICKY_TEXT),
    call("test_tool_with_progress", progress=True),
    wants_logs(call("test_tool_with_logging")),
    call("test_tool_with_logging"),  # no opt-in: no log messages
    {"op": "readResource", "uri": "test://static-text"},  # 5
    {
        "op": "getPrompt",
        "name": "test_prompt_with_arguments",
        "arguments": {"arg1": "a"},
        "expectError": -32602,
    },
    {**call("no-such-tool"), "expectError": -32602},
    {"op": "readResource", "uri": "test://no-such-resource", "expectError": -32602},
    # Sampling not declared: -32021 naming the capability (basic/patterns/mrtr.mdx).
    {**call("test_missing_capability"), "expectError": -32021},
    # Removed in 2026-07-28: the SDK refuses them itself, nothing is sent.
    {"op": "setLoggingLevel", "level": "debug", "expectSdkError": True},  # 10
    {"op": "ping", "expectSdkError": True},
    # subscriptions/listen: acknowledged with the honoured filter, then closed by the
    # client (notifications/cancelled on stdio, closing the stream over HTTP).
    {"op": "listen", "filter": {"toolsListChanged": True, "promptsListChanged": False}},
    {"op": "discover"},
    call("echo", text="still here"),
    {"op": "listResourceTemplates"},  # 15
    {"op": "listPrompts"},
    {"op": "readResource", "uri": "test://template/7/data"},
    {"op": "readResource", "uri": "test://static-binary"},
    call("test_error_handling"),
    {
        "op": "complete",
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "a"},
    },
]


def check_modern_steps(summary: Summary) -> None:
    """The answers to :data:`MODERN_PLAN`, the same over every transport."""
    steps = summary["steps"]
    assert {"echo", "test_tool_with_progress", "test_missing_capability"} <= {
        tool["name"] for tool in steps[0]["result"]["tools"]
    }
    assert text_of(steps[1]["result"]) == TRICKY_TEXT
    [progress_call] = [
        m
        for m in summary.outbound("tools/call")
        if m["params"]["name"] == ("test_tool_with_progress")
    ]
    token = progress_call["params"]["_meta"]["progressToken"]
    assert text_of(steps[2]["result"]) == f"Progress reported with token {token!r}"
    assert text_of(steps[3]["result"]) == text_of(steps[4]["result"])
    logged = ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert [log["data"] for log in summary["logs"]] == logged  # step 3's only
    [contents] = steps[5]["result"]["contents"]
    assert contents["uri"] == "test://static-text"
    assert steps[6]["error"]["code"] == -32602  # arg2 is required
    assert "Unknown tool" in steps[7]["error"]["message"]
    assert steps[9]["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert (
        steps[10]["error"]["code"]
        == steps[11]["error"]["code"]
        == ("METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION")
    )
    # Acknowledged with the honoured filter (promptsListChanged: false is not a request).
    assert steps[LISTEN]["result"]["honoredFilter"] == {"toolsListChanged": True}
    [listen] = summary.outbound("subscriptions/listen")
    [ack] = [
        m
        for m in summary.inbound()
        if m.get("method") == "notifications/subscriptions/acknowledged"
    ]
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen["id"]}
    assert steps[13]["result"]["supportedVersions"][0] == MODERN
    assert text_of(steps[14]["result"]) == "still here"
    [template] = steps[15]["result"]["resourceTemplates"]
    assert template["uriTemplate"] == "test://template/{id}/data"
    assert "test_prompt_with_arguments" in {p["name"] for p in steps[16]["result"]["prompts"]}
    [data] = steps[17]["result"]["contents"]
    assert json.loads(data["text"])["id"] == "7"
    [blob] = steps[18]["result"]["contents"]
    assert (blob["mimeType"], "blob" in blob) == ("image/png", True)
    assert steps[19]["result"]["isError"] is True
    assert steps[20]["result"]["completion"]["values"] == []


#: The ``subscriptions/listen`` step of :data:`MODERN_PLAN`.
LISTEN: Final = 12
#: The steps of :data:`MODERN_PLAN` answered with a JSON-RPC error.
MODERN_PLAN_ERRORS: Final = 4


def check_modern_wire(summary: Summary, *, errors: int = MODERN_PLAN_ERRORS) -> None:
    """2026-07-28 on every message: no handshake, the envelope on each request, and
    ``resultType`` plus ``serverInfo`` on each result."""
    assert summary["era"] == "modern"
    assert summary["protocolVersion"] == MODERN
    assert summary["serverInfo"] == EVERYTHING_INFO
    discover = summary["discover"]
    assert discover["supportedVersions"][0] == MODERN, discover
    assert {"tools", "resources", "prompts"} <= discover["capabilities"].keys()
    requests = [m for direction, m in summary["wire"] if direction == "out" and "id" in m]
    assert not [m for m in requests if m["method"] in ("initialize", "ping")], summary.dump()
    for request in requests:
        meta = request["params"]["_meta"]
        assert meta[PROTOCOL_VERSION] == MODERN, request
        assert meta[CLIENT_INFO] == {"name": "ts2-interop-client", "version": "2.4.0"}
        assert CLIENT_CAPABILITIES in meta, request
    inbound = summary.inbound()
    assert not [m for m in inbound if "method" in m and "id" in m], "no server-to-client requests"
    results = [m["result"] for m in inbound if "result" in m]
    assert results, summary.dump()
    for result in results:
        assert result["resultType"] == "complete", result
        assert result["_meta"][SERVER_INFO] == EVERYTHING_INFO, result
    assert len([m for m in inbound if "error" in m]) == errors, summary.dump()


def other_client_errors(summary: Summary) -> list[str]:
    """What the SDK reported through ``onerror``, late progress aside."""
    return [error for error in summary["clientErrors"] if late_progress(error) is None]


def check_progress_sent(summary: Summary) -> None:
    """Progress before the response; what the SDK dropped (read in the same chunk as the
    response, as v1 did: typescript-sdk#2580) went to ``onerror``, nothing else did."""
    [request] = [
        m
        for m in summary.outbound("tools/call")
        if m["params"]["name"] == "test_tool_with_progress"
    ]
    token = request["params"]["_meta"]["progressToken"]
    inbound = summary.inbound()
    positions = [
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "notifications/progress" and m["params"]["progressToken"] == token
    ]
    assert all(position < summary.answer_index(request["id"]) for position in positions)
    sent = [(inbound[i]["params"]["progress"], inbound[i]["params"]["total"]) for i in positions]
    assert sent == [(0, 100), (50, 100), (100, 100)]
    delivered = [(u["progress"], u["total"]) for u in summary.step(2)["progressUpdates"]]
    late = [n for n in map(late_progress, summary["clientErrors"]) if n is not None]
    late_sent = [(n["params"]["progress"], n["params"]["total"]) for n in late]
    assert delivered + late_sent == sent


@pytest.mark.parametrize("probe", ["sibling", "in-place"])
@pytest.mark.anyio
async def test_ts2_client_settles_on_2026_over_stdio(
    node: str, anyio_backend: str, probe: str
) -> None:
    plan = {"negotiation": "auto", "probeInPlace": probe == "in-place", "steps": MODERN_PLAN}
    summary = await run_ts2_client(node, plan, stdio_server(anyio_backend))
    check_modern_wire(summary)
    check_modern_steps(summary)
    check_progress_sent(summary)
    assert other_client_errors(summary) == []
    if probe == "in-place":
        # The probe is the first message on the session's own pipe, answered as 2026.
        first_out, first_in = summary["wire"][0][1], summary["wire"][1][1]
        assert first_out["method"] == "server/discover"
        assert first_in["id"] == first_out["id"]
        assert first_in["result"]["resultType"] == "complete"
    else:
        # The SDK probed on a sibling process; this one never saw a discover before work.
        assert summary["wire"][0][1]["method"] == "tools/list"
    assert summary["serverStderr"] == ""
    assert summary["serverExit"] == {"code": 0, "signal": None}


@pytest.mark.anyio
async def test_ts2_client_pinned_to_2026(node: str, anyio_backend: str) -> None:
    plan = {"negotiation": {"pin": MODERN}, "steps": [call("echo", text="pinned")]}
    summary = await run_ts2_client(node, plan, stdio_server(anyio_backend))
    assert (summary["era"], summary["protocolVersion"]) == ("modern", MODERN)
    assert text_of(summary.step(0)["result"]) == "pinned"


@pytest.mark.anyio
async def test_ts2_client_default_mode_keeps_the_handshake(node: str, anyio_backend: str) -> None:
    """Without opting in, the v2 client is a 2025-11-25 client: ``initialize``, ``ping``,
    ``logging/setLevel`` and server-to-client requests, all served by mcpkit."""
    plan = {
        "negotiation": "legacy",
        "client": {"elicitation": {"username": "ada", "email": "a@b.c"}},
        "steps": [
            {"op": "setLoggingLevel", "level": "debug"},
            {"op": "ping"},
            call("test_tool_with_logging"),
            call("test_elicitation", message="Who?"),
        ],
    }
    summary = await run_ts2_client(node, plan, stdio_server(anyio_backend))
    assert (summary["era"], summary["protocolVersion"]) == ("legacy", "2025-11-25")
    assert summary["discover"] is None
    [initialize] = summary.outbound("initialize")
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert summary.outbound("server/discover") == []
    assert len(summary["logs"]) == 3
    assert summary["handled"] == ["elicitation/create"]
    expected = 'User response: action=accept, content={"username":"ada","email":"a@b.c"}'
    assert text_of(summary.step(3)["result"]) == expected
    assert summary["serverExit"] == {"code": 0, "signal": None}


#: The elicitation answer of the MRTR plan: one object filling every form it is asked.
#: The one answer the SDK's client gives to every form of the plan: what each one requires
#: (the server checks answers against their forms).
ELICITED: Final = {
    "name": "ada",
    "ok": True,
    "color": "blue",
    "context": "tests",
    "username": "ada",
    "email": "ada@example.com",
}
ROOTS: Final = [{"uri": "file:///workspace", "name": "workspace"}]
#: (step, the text of its complete result, the client handlers it ran in order).
MRTR_PLAN: Final = [
    (call("test_input_required_result_elicitation"), "Hello, ada!", ["elicitation/create"]),
    (
        call("test_input_required_result_sampling"),
        "Sampling result: sampled: What is the capital of France?",
        ["sampling/createMessage"],
    ),
    (call("test_input_required_result_list_roots"), "Found 1 root(s)", ["roots/list"]),
    (
        call("test_input_required_result_multiple_inputs"),
        "Name: ada; Greeting: sampled: Generate a greeting; Roots: 1",
        ["elicitation/create", "sampling/createMessage", "roots/list"],
    ),
    (
        call("test_input_required_result_multi_round"),
        "Multi-round complete for ada who likes blue",
        ["elicitation/create", "elicitation/create"],
    ),
    (
        call("test_input_required_result_request_state"),
        "state-ok: requestState validated",
        ["elicitation/create"],
    ),
    # The handshake-era tool: the same ctx.elicit, now a round trip.
    (
        call("test_elicitation", message="Who?"),
        "User response: action=accept, content=" + json.dumps(ELICITED, separators=(",", ":")),
        ["elicitation/create"],
    ),
    (
        {"op": "getPrompt", "name": "test_input_required_result_prompt"},
        "Prompt with context: tests",
        ["elicitation/create"],
    ),
]


@pytest.mark.anyio
async def test_ts2_client_fulfils_input_required_results(node: str, anyio_backend: str) -> None:
    """Multi round-trip requests (``basic/patterns/mrtr.mdx``): mcpkit answers with
    ``input_required``, the SDK runs its elicitation/sampling/roots handlers, and retries
    on a fresh id with ``inputResponses`` and the ``requestState`` echoed byte for byte,
    until the result is complete. No server-to-client request ever crosses the pipe."""
    summary = await run_ts2_client(node, MRTR_CLIENT_PLAN, stdio_server(anyio_backend))
    check_mrtr(summary)
    assert summary["serverExit"] == {"code": 0, "signal": None}


MRTR_CLIENT_PLAN: Final = {
    "client": {"elicitation": ELICITED, "sampling": "sampled", "roots": ROOTS},
    "steps": [step for step, _, _ in MRTR_PLAN],
}


def check_mrtr(summary: Summary) -> None:
    """The complete results of :data:`MRTR_PLAN`, the handlers the SDK ran, and every
    retry on the wire: a fresh id, the same request, the answers under the keys asked,
    ``requestState`` echoed byte for byte."""
    assert summary["era"] == "modern"
    for index, (_, text, _) in enumerate(MRTR_PLAN):
        result = summary.step(index)["result"]
        if "messages" in result:
            [message] = result["messages"]
            assert message["content"]["text"] == text
        else:
            assert text_of(result) == text
    assert summary["handled"] == [method for _, _, handled in MRTR_PLAN for method in handled]
    inbound = summary.inbound()
    assert not [m for m in inbound if "method" in m and "id" in m], summary.dump()
    answers = {m["id"]: m["result"] for m in inbound if "result" in m}
    requests = [
        m
        for direction, m in summary["wire"]
        if direction == "out" and "id" in m and m["method"] != "server/discover"
    ]
    ids = [m["id"] for m in requests]
    assert len(ids) == len(set(ids)), "every retry has a fresh id"
    for previous, retry in itertools.pairwise(requests):
        asked = answers[previous["id"]]
        if asked["resultType"] != "input_required":
            assert "inputResponses" not in retry["params"], retry
            continue
        assert retry["method"] == previous["method"]
        assert retry["params"]["name"] == previous["params"]["name"]
        assert retry["params"]["requestState"] == asked["requestState"]
        assert retry["params"]["inputResponses"].keys() == asked["inputRequests"].keys()
        assert retry["params"]["_meta"][PROTOCOL_VERSION] == MODERN
    rounds = [answers[m["id"]]["resultType"] for m in requests]
    assert rounds.count("complete") == len(MRTR_PLAN), rounds
    assert rounds.count("input_required") == len(MRTR_PLAN) + 1, rounds  # multi_round: 2


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("mode", list(v1_http.MODES))
@pytest.mark.anyio
async def test_ts2_client_settles_on_2026_over_http(node: str, mode: str) -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING), "--transport", "http"]
    argv += ["--port", "0", *v1_http.MODES[mode]]
    plan = {"negotiation": "auto", "steps": MODERN_PLAN}
    async with v1_http.child_process(
        argv, "mcpkit run", follow="stderr", stop=v1_http.interrupt
    ) as server:
        with anyio.fail_after(TIMEOUT):
            line = await server.next_line()
        url = line.rsplit(" on ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:"), line
        summary = await run_ts2_client(node, plan, [url])
    assert server.stderr == [line], server.describe()
    check_modern_wire(summary)
    check_modern_steps(summary)
    check_progress_sent(summary)
    assert other_client_errors(summary) == []
    # 2026-07-28 Streamable HTTP: POST only, no session, and the headers mirror the body.
    requests = summary["http"]["requests"]
    assert {r["method"] for r in requests} == {"POST"}, requests
    assert not [r for r in requests if "mcp-session-id" in r["headers"]]
    for request in requests:
        assert request["headers"]["mcp-protocol-version"] == MODERN, request
    calls = [r for r in requests if r["headers"].get("mcp-method") == "tools/call"]
    assert [r["headers"]["mcp-name"] for r in calls][:2] == ["echo", "test_tool_with_progress"]
    # Errors are 400 (invalid params, missing capability); the listen is an SSE stream,
    # which the SDK closes and also cancels with a notification (202).
    statuses = sorted(r["status"] for r in requests if r["status"] != 200)
    assert statuses == [202, 400, 400, 400, 400], [r for r in requests if r["status"] != 200]
    [listen_request] = summary.outbound("subscriptions/listen")
    cancels = [
        m["params"]["requestId"]
        for direction, m in summary["wire"]
        if direction == "out" and m.get("method") == "notifications/cancelled"
    ]
    assert cancels == [listen_request["id"]]
    [listen] = [r for r in requests if r["headers"].get("mcp-method") == "subscriptions/listen"]
    assert listen["contentType"].startswith("text/event-stream"), listen


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("mode", list(v1_http.MODES))
@pytest.mark.anyio
async def test_ts2_client_fulfils_input_required_results_over_http(node: str, mode: str) -> None:
    """The same rounds over Streamable HTTP: each round is its own POST, so they need no
    session (stateless included)."""
    argv = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING), "--transport", "http"]
    argv += ["--port", "0", *v1_http.MODES[mode]]
    async with v1_http.child_process(
        argv, "mcpkit run", follow="stderr", stop=v1_http.interrupt
    ) as server:
        with anyio.fail_after(TIMEOUT):
            line = await server.next_line()
        url = line.rsplit(" on ", 1)[1].strip()
        summary = await run_ts2_client(node, MRTR_CLIENT_PLAN, [url])
    assert server.stderr == [line], server.describe()
    check_mrtr(summary)
    assert summary["clientErrors"] == []


#: A call the SDK cancels (its AbortSignal fires at the first progress update) while the
#: tool sleeps, then another call.
CANCEL_PLAN: Final = [
    {**call("sleep", seconds=30), "abortOnProgress": True, "expectSdkError": True},
    call("echo", text="after"),
]


def check_cancelled(summary: Summary, *, over_http: bool) -> None:
    """Cancellation (``basic/utilities/cancellation.mdx``): over stdio the SDK sends
    ``notifications/cancelled`` with the envelope; over HTTP it closes the request's
    stream and sends nothing. Either way mcpkit never answers the request, and its
    progress stops before the next call is answered."""
    [sleep] = [m for m in summary.outbound("tools/call") if m["params"]["name"] == "sleep"]
    [echo] = [m for m in summary.outbound("tools/call") if m["params"]["name"] == "echo"]
    inbound = summary.inbound()
    assert not [m for m in inbound if "method" not in m and m.get("id") == sleep["id"]]
    token = sleep["params"]["_meta"]["progressToken"]
    progress = [
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "notifications/progress" and m["params"]["progressToken"] == token
    ]
    assert progress, "the tool was running when it was cancelled"
    assert max(progress) < summary.answer_index(echo["id"]), summary.dump()
    assert text_of(summary.step(1)["result"]) == "after"
    cancelled = summary.outbound("notifications/cancelled")
    if over_http:
        assert cancelled == []
        return
    [notification] = cancelled
    assert notification["params"]["requestId"] == sleep["id"]
    assert notification["params"]["_meta"][PROTOCOL_VERSION] == MODERN


@pytest.mark.anyio
async def test_ts2_client_cancels_over_stdio(node: str, anyio_backend: str) -> None:
    summary = await run_ts2_client(node, {"steps": CANCEL_PLAN}, stdio_server(anyio_backend))
    check_cancelled(summary, over_http=False)
    # Exit status 0 within the SDK's grace period: nothing kept the 30 s sleep running.
    assert summary["serverExit"] == {"code": 0, "signal": None}
    assert summary["serverStderr"] == ""


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_ts2_client_cancels_over_http(node: str) -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", str(EVERYTHING), "--transport", "http"]
    async with v1_http.child_process(
        [*argv, "--port", "0"], "mcpkit run", follow="stderr", stop=v1_http.interrupt
    ) as server:
        with anyio.fail_after(TIMEOUT):
            line = await server.next_line()
        url = line.rsplit(" on ", 1)[1].strip()
        summary = await run_ts2_client(node, {"steps": CANCEL_PLAN}, [url])
    assert server.stderr == [line], server.describe()
    check_cancelled(summary, over_http=True)


# -- 2. raw 2026-07-28 JSON-RPC against the v2 server ---------------------------------------


def envelope(**extra: Any) -> dict[str, Any]:
    return {
        PROTOCOL_VERSION: MODERN,
        CLIENT_INFO: {"name": "raw-python", "version": "0"},
        CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        **extra,
    }


class RawPeer:
    """One JSON-RPC message per line over a child's stdin/stdout; the messages that
    arrived before each answer are kept per request."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.lines = BufferedByteReceiveStream(process.stdout)
        self.next_id = 0

    async def request(
        self, method: str, params: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Any]]:
        """Send one request; its answer and the notifications that came before it."""
        self.next_id += 1
        request_id = self.next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.stdin.send(json.dumps(message).encode() + b"\n")
        before: list[Any] = []
        with anyio.fail_after(TIMEOUT):
            while True:
                incoming = json.loads(await self.lines.receive_until(b"\n", MAX_LINE))
                assert not ("method" in incoming and "id" in incoming), incoming  # no requests
                if incoming.get("id") == request_id:
                    return incoming, before
                before.append(incoming)


@asynccontextmanager
async def ts2_server(node: str) -> AsyncIterator[RawPeer]:
    process = await anyio.open_process([node, str(TS2_SERVER)], cwd=ROOT)
    try:
        yield RawPeer(process)
        await process.stdin.aclose()  # type: ignore[union-attr]
        with anyio.fail_after(TIMEOUT):
            status = await process.wait()
        assert process.stderr is not None
        stderr = await process.stderr.receive() if status else b""
        assert status == 0, stderr.decode(errors="replace")
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.wait()
            await process.aclose()


def complete(answer: dict[str, Any]) -> dict[str, Any]:
    """The result of ``answer``: complete, naming the TS server, as mcpkit expects."""
    result: dict[str, Any] = answer["result"]
    assert result["resultType"] == "complete", answer
    assert result["_meta"][SERVER_INFO] == {"name": "ts2-interop-server", "version": "2.4.0"}
    return result


@pytest.mark.anyio
async def test_ts2_server_answers_2026_requests(node: str) -> None:
    async with ts2_server(node) as peer:
        answer, _ = await peer.request("server/discover", {"_meta": envelope()})
        discover = complete(answer)
        assert discover["supportedVersions"] == [MODERN]
        assert {"tools", "resources", "prompts", "logging"} <= discover["capabilities"].keys()

        answer, _ = await peer.request("tools/list", {"_meta": envelope()})
        tools = {tool["name"] for tool in complete(answer)["tools"]}
        assert tools == {"echo", "progress", "log", "fail", "confirm"}

        params = {"name": "echo", "arguments": {"text": TRICKY_TEXT}, "_meta": envelope()}
        answer, _ = await peer.request("tools/call", params)
        assert text_of(complete(answer)) == TRICKY_TEXT

        # Request-scoped progress, before the response.
        meta = envelope(progressToken="p-1")
        answer, before = await peer.request(
            "tools/call", {"name": "progress", "arguments": {"steps": 3}, "_meta": meta}
        )
        assert text_of(complete(answer)) == "done"
        assert [n["params"] for n in before] == [
            {"progressToken": "p-1", "progress": step, "total": 3} for step in (1, 2, 3)
        ]

        # Log messages only for a request that opts in (_meta.logLevel).
        for opt_in, expected in ((envelope(), []), (envelope(**{LOG_LEVEL: "info"}), ["hi"])):
            params = {"name": "log", "arguments": {"message": "hi"}, "_meta": opt_in}
            answer, before = await peer.request("tools/call", params)
            assert text_of(complete(answer)) == "logged"
            assert [n["params"]["data"] for n in before] == expected, before

        answer, _ = await peer.request("tools/call", {"name": "fail", "_meta": envelope()})
        assert complete(answer)["isError"] is True

        answer, _ = await peer.request(
            "resources/read", {"uri": "test://greeting", "_meta": envelope()}
        )
        [contents] = complete(answer)["contents"]
        assert contents["text"] == "hello from ts2"

        params = {"name": "greet", "arguments": {"name": "ada"}, "_meta": envelope()}
        answer, _ = await peer.request("prompts/get", params)
        [message] = complete(answer)["messages"]
        assert message["content"]["text"] == "Hello, ada!"


@pytest.mark.anyio
async def test_ts2_server_multi_round_trip(node: str) -> None:
    """``input_required`` (``basic/patterns/mrtr.mdx``): the embedded elicitation, the
    opaque ``requestState``, and the retry with ``inputResponses`` that completes."""
    async with ts2_server(node) as peer:
        call = {"name": "confirm", "arguments": {"env": "prod"}, "_meta": envelope()}
        answer, before = await peer.request("tools/call", call)
        assert before == []
        result = answer["result"]
        assert result["resultType"] == "input_required", answer
        assert "content" not in result
        [(key, embedded)] = result["inputRequests"].items()
        assert (key, embedded["method"]) == ("confirm", "elicitation/create")
        assert embedded["params"]["message"] == "Deploy to prod?"
        assert embedded["params"]["requestedSchema"]["properties"] == {
            "confirm": {"type": "boolean"}
        }
        state = result["requestState"]

        declined = {"confirm": {"action": "decline"}}
        answer, _ = await peer.request(
            "tools/call", {**call, "inputResponses": declined, "requestState": state}
        )
        assert answer["result"]["resultType"] == "input_required"  # asks again

        accepted = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        answer, _ = await peer.request(
            "tools/call", {**call, "inputResponses": accepted, "requestState": state}
        )
        assert text_of(complete(answer)) == "deployed to prod"


#: (method, params, the JSON-RPC error code): what a 2026 server must refuse, and how.
REFUSED: Final[list[tuple[str, dict[str, Any], int]]] = [
    ("tools/call", {"name": "no-such-tool", "_meta": envelope()}, -32602),
    ("resources/read", {"uri": "test://missing", "_meta": envelope()}, -32602),
    ("prompts/get", {"name": "no-such-prompt", "_meta": envelope()}, -32602),
    ("tools/list", {}, -32602),  # no _meta envelope
    ("tools/list", {"_meta": {PROTOCOL_VERSION: MODERN}}, -32602),  # no clientCapabilities
    ("ping", {"_meta": envelope()}, -32601),  # removed in 2026-07-28
    ("logging/setLevel", {"level": "debug", "_meta": envelope()}, -32601),
    (
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-python", "version": "0"},
        },
        -32022,
    ),  # the connection is 2026 now
]


@pytest.mark.anyio
async def test_ts2_server_refuses_what_2026_refuses(node: str) -> None:
    async with ts2_server(node) as peer:
        answer, _ = await peer.request("server/discover", {"_meta": envelope()})
        complete(answer)
        for method, params, code in REFUSED:
            answer, _ = await peer.request(method, params)
            assert answer.get("error", {}).get("code") == code, (method, params, answer)
        answer, _ = await peer.request("tools/list", {"_meta": envelope()})
        complete(answer)  # still serving


@pytest.mark.anyio
async def test_ts2_server_ignores_unsupported_version(node: str) -> None:
    """A deviation of ``@modelcontextprotocol/server`` 2.4.0 from
    ``basic/versioning.mdx`` ("If the server does not implement the requested version
    [...] it MUST respond with an UnsupportedProtocolVersionError"): once ``serveStdio``
    has pinned the connection to 2026-07-28, a request naming another version in its
    ``_meta`` is served as if it named 2026-07-28. As the opening message it is refused
    (-32022, the supported versions listed). mcpkit answers -32022 in both cases."""
    unknown = envelope(**{PROTOCOL_VERSION: "2099-01-01"})
    async with ts2_server(node) as peer:
        answer, _ = await peer.request("tools/list", {"_meta": unknown})
        assert answer["error"]["code"] == -32022, answer
        assert answer["error"]["data"]["supported"] == [MODERN]
        answer, _ = await peer.request("tools/list", {"_meta": envelope()})
        complete(answer)
        answer, _ = await peer.request("tools/list", {"_meta": unknown})
        assert "error" not in answer, "the TS SDK now refuses it: update this test"
        complete(answer)


def test_ts2_dir_is_installed_like_the_others() -> None:
    """``make test`` installs ``tests/interop_ts2`` from its lock file, and ``make clean``
    removes it (the stamp rule is the one of the v1 SDK and the harness)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "TS2_DIR := tests/interop_ts2" in makefile
    assert "$(TS2_STAMP)" in makefile.split("unit:", 1)[1].splitlines()[0]
    assert "$(TS2_DIR)/node_modules" in makefile.split("clean:", 1)[1]
    package = json.loads((TS2_DIR / "package.json").read_text(encoding="utf-8"))
    assert all(not version.startswith(("^", "~")) for version in package["dependencies"].values())
    assert Path(TS2_DIR / "package-lock.json").is_file()


# -- 3. raw 2026-07-28 Streamable HTTP against the v2 server --------------------------------


def http_headers(method: str, params: dict[str, Any], **overrides: str | None) -> dict[str, str]:
    """The headers a 2026-07-28 POST carries (``basic/transports/streamable-http.mdx``),
    derived from the body as a client must, then ``overrides`` (None: left out)."""
    headers: dict[str, str | None] = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": params.get("_meta", {}).get(PROTOCOL_VERSION),
        "mcp-method": method,
        "mcp-name": params.get("name", params.get("uri")),
    }
    headers.update({name.replace("_", "-"): value for name, value in overrides.items()})
    return {name: value for name, value in headers.items() if value is not None}


def no_capabilities() -> dict[str, Any]:
    return envelope(**{CLIENT_CAPABILITIES: {}})


#: (case, method, params, header overrides, HTTP status, JSON-RPC error code or None).
HTTP_CASES: Final[list[tuple[str, str, dict[str, Any], dict[str, str | None], int, int | None]]] = [
    ("discover", "server/discover", {"_meta": envelope()}, {}, 200, None),
    (
        "call",
        "tools/call",
        {"name": "echo", "arguments": {"text": "x"}, "_meta": envelope()},
        {},
        200,
        None,
    ),
    ("read", "resources/read", {"uri": "test://greeting", "_meta": envelope()}, {}, 200, None),
    # A handler's -32602 comes with 200 here (mcpkit answers 400; the spec names no status).
    ("unknown tool", "tools/call", {"name": "nope", "_meta": envelope()}, {}, 200, -32602),
    (
        "unknown resource",
        "resources/read",
        {"uri": "test://nope", "_meta": envelope()},
        {},
        200,
        -32602,
    ),
    ("removed method", "ping", {"_meta": envelope()}, {}, 404, -32601),
    ("no Mcp-Method", "tools/list", {"_meta": envelope()}, {"mcp_method": None}, 400, -32020),
    (
        "Mcp-Method differs",
        "tools/list",
        {"_meta": envelope()},
        {"mcp_method": "tools/call"},
        400,
        -32020,
    ),
    (
        "no Mcp-Name",
        "tools/call",
        {"name": "echo", "_meta": envelope()},
        {"mcp_name": None},
        400,
        -32020,
    ),
    (
        "Mcp-Name differs",
        "tools/call",
        {"name": "echo", "_meta": envelope()},
        {"mcp_name": "x"},
        400,
        -32020,
    ),
    (
        "version header differs",
        "tools/list",
        {"_meta": envelope()},
        {"mcp_protocol_version": "2025-11-25"},
        400,
        -32020,
    ),
    (
        "unsupported version",
        "tools/list",
        {"_meta": envelope(**{PROTOCOL_VERSION: "2099-01-01"})},
        {},
        400,
        -32022,
    ),
    ("no clientCapabilities", "tools/list", {"_meta": {PROTOCOL_VERSION: MODERN}}, {}, 400, -32602),
    (
        "elicitation not declared",
        "tools/call",
        {"name": "confirm", "arguments": {"env": "x"}, "_meta": no_capabilities()},
        {},
        400,
        -32021,
    ),
]


@asynccontextmanager
async def ts2_http_server(node: str) -> AsyncIterator[str]:
    """``server.mjs --http`` on 127.0.0.1; the endpoint's URL. Ends with its stdin."""
    argv = [node, str(TS2_SERVER), "--http"]
    async with v1_http.child_process(
        argv, "server.mjs --http", follow="stdout", stop=v1_http.end_stdin
    ) as child:
        with anyio.fail_after(TIMEOUT):
            event = json.loads(await child.next_line())
        assert event["event"] == "listening", event
        yield f"http://127.0.0.1:{event['port']}/mcp"
    assert child.exit_status == 0, child.describe()


def sse_messages(body: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (its ``data:`` lines, one per event here)."""
    return [
        json.loads(line.removeprefix("data:").strip())
        for line in body.splitlines()
        if line.startswith("data:")
    ]


@pytest.mark.anyio
async def test_ts2_http_server_statuses_and_errors(node: str) -> None:
    async with ts2_http_server(node) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:
        for index, (case, method, params, overrides, status, code) in enumerate(HTTP_CASES):
            body = {"jsonrpc": "2.0", "id": index, "method": method, "params": params}
            headers = http_headers(method, params, **overrides)
            with anyio.fail_after(TIMEOUT):
                response = await http.post(url, json=body, headers=headers)
            assert (response.status_code, response.headers["content-type"]) == (
                status,
                "application/json",
            ), (case, response.text)
            answer = response.json()
            if code is None:
                complete(answer)
            else:
                assert answer["error"]["code"] == code, (case, answer)
        for verb in ("GET", "DELETE"):  # 2026-07-28: POST only
            with anyio.fail_after(TIMEOUT):
                response = await http.request(verb, url, headers={"accept": "text/event-stream"})
            assert response.status_code == 405, verb


@pytest.mark.anyio
async def test_ts2_http_server_streams_and_round_trips(node: str) -> None:
    """Progress upgrades the answer to an SSE stream scoped to the request (notifications,
    then the response); a multi round trip is two independent POSTs."""
    async with ts2_http_server(node) as url, httpx.AsyncClient(timeout=TIMEOUT) as http:

        async def post(params: dict[str, Any], method: str = "tools/call") -> httpx.Response:
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            with anyio.fail_after(TIMEOUT):
                return await http.post(url, json=body, headers=http_headers(method, params))

        meta = envelope(progressToken="p-1")
        response = await post({"name": "progress", "arguments": {"steps": 2}, "_meta": meta})
        assert response.headers["content-type"].startswith("text/event-stream"), response.text
        *notifications, answer = sse_messages(response.text)
        assert [n["params"]["progress"] for n in notifications] == [1, 2]
        assert text_of(complete(answer)) == "done"

        call = {"name": "confirm", "arguments": {"env": "prod"}, "_meta": envelope()}
        asked = (await post(call)).json()["result"]
        assert asked["resultType"] == "input_required"
        accepted = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        retry = {**call, "inputResponses": accepted, "requestState": asked["requestState"]}
        assert text_of(complete((await post(retry)).json())) == "deployed to prod"
