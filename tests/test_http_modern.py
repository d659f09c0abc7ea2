"""Streamable HTTP for 2026-07-28, over a real socket on 127.0.0.1: POST only, one request
per POST, no session, JSON unless the handler emits, status codes for the 2026 errors,
``Mcp-Method`` / ``Mcp-Name``, closing the response cancels the request, and an old-era
client served by the same endpoint at the same time.
2026-07-28 ``basic/transports/streamable-http.mdx``."""

from __future__ import annotations

import base64
import gzip
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import RPCError
from mcpkit.server import RequestContext, Server
from mcpkit.types import EmptyResult, ErrorCode, TextContent

from ._http_testserver import hang_until_cancelled
from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, RawSession, initialize, messages_of
from ._wire import MODERN, meta

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0
STARTED = threading.Event()
CANCELLED = threading.Event()


def build() -> Server:
    server = Server("modern-http", "1.0")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def chatty(ctx: RequestContext) -> str:
        """Logs, then answers."""
        await ctx.log("info", "working")
        return "done"

    @server.tool()
    async def wait_forever() -> str:
        """Waits until cancelled."""
        STARTED.set()
        return await hang_until_cancelled(CANCELLED, LIMIT * 2)

    @server.resource("note://one")
    def one() -> str:
        return "first"

    return server


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with running_server(build().streamable_http_app()) as server:
        yield server


def headers_for(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    out = {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    out.update(extra)
    return out


def body(rid: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    message["params"] = {"_meta": meta(), **(params or {})}
    return json.dumps(message).encode()


FUTURE: Final = "2099-01-01"
FUTURE_HEADER: Final = {"mcp-protocol-version": FUTURE}
OLD_HEADER: Final = {"mcp-protocol-version": "2025-11-25"}


def without(*names: str) -> dict[str, str]:
    """The headers of a ``tools/list`` POST without ``names``."""
    return {k: v for k, v in headers_for("tools/list").items() if k not in names}


def body_with_meta(rid: Any, method: str, meta_: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": meta_}}
    return json.dumps(message).encode()


async def post(http: RunningServer, content: bytes, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        return await client.post(http.url + "/mcp", content=content, headers=headers)


async def test_json_answer_without_session(http: RunningServer) -> None:
    response = await post(
        http,
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        headers_for("tools/call", "echo"),
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    answer = response.json()
    assert answer["id"] == 1
    assert answer["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert answer["result"]["resultType"] == "complete"


async def test_sse_only_when_the_handler_emits(http: RunningServer) -> None:
    params = {"name": "chatty", "arguments": {}, "_meta": meta(log_level="info")}
    content = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    response = await post(http, content.encode(), headers_for("tools/call", "chatty"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    assert b"id:" not in response.content  # no event ids: 2026 has no resumption
    messages = messages_of(response)
    assert [m.get("method") for m in messages] == ["notifications/message", None]
    assert messages[-1]["result"]["content"][0]["text"] == "done"
    # Without logLevel the same tool answers with plain JSON.
    response = await post(
        http,
        body(3, "tools/call", {"name": "chatty", "arguments": {}}),
        headers_for("tools/call", "chatty"),
    )
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    ("content", "headers", "status", "code"),
    [
        (body(1, "nope/nothing"), headers_for("nope/nothing"), 404, -32601),
        (body(1, "ping"), headers_for("ping"), 404, -32601),
        (body(1, "initialize"), headers_for("initialize"), 404, -32601),
        (body(1, "logging/setLevel"), headers_for("logging/setLevel"), 404, -32601),
        (
            body(1, "server/discover"),
            headers_for("server/discover", **{"mcp-protocol-version": "2099-01-01"}),
            400,
            -32020,
        ),
        (
            json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
            ).encode(),
            headers_for("server/discover"),
            400,
            -32602,
        ),
        (body(1, "tools/list"), headers_for("tools/call"), 400, -32020),
        (body(1, "tools/list"), {**headers_for("x"), "mcp-method": ""}, 400, -32020),
        (
            body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers_for("tools/call"),
            400,
            -32020,
        ),
        (
            body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers_for("tools/call", "ekko"),
            400,
            -32020,
        ),
        (
            body(1, "resources/read", {"uri": "note://missing"}),
            headers_for("resources/read", "note://missing"),
            400,
            -32602,
        ),
        # "Every POST request to the MCP endpoint MUST include an MCP-Protocol-Version
        # header" (it was served without one); with no Mcp-Method either, the body alone
        # tells the era (it was taken for a handshake-era POST without a session).
        (body(1, "tools/list"), without("mcp-protocol-version"), 400, -32020),
        (body(1, "tools/list"), without("mcp-protocol-version", "mcp-method"), 400, -32020),
        # A handshake-era header on a 2026 body: the header MUST match _meta (it was
        # served as a handshake-era request, or refused for want of a session).
        (body(1, "tools/list"), headers_for("tools/list", **OLD_HEADER), 400, -32020),
        # An unsupported version is said first, whatever else _meta lacks (a later
        # revision's client must learn what is served; it got -32602).
        (
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
            headers_for("tools/list", **FUTURE_HEADER),
            400,
            -32022,
        ),
        (
            body_with_meta(1, "tools/list", {"io.modelcontextprotocol/protocolVersion": FUTURE}),
            headers_for("tools/list", **FUTURE_HEADER),
            400,
            -32022,
        ),
    ],
)
async def test_error_statuses(
    http: RunningServer, content: bytes, headers: dict[str, str], status: int, code: int
) -> None:
    # Twice: the second POST goes through what the server remembers of the first (its
    # header values passed, the verdict on its MCP headers).
    for _ in range(2):
        response = await post(http, content, headers)
        assert response.status_code == status, response.text
        answer = response.json()
        assert answer["id"] == 1
        assert answer["error"]["code"] == code


async def test_a_compressed_body_is_415(http: RunningServer) -> None:
    content = body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    headers = {**headers_for("tools/call", "echo"), "content-encoding": "gzip"}
    response = await post(http, gzip.compress(content), headers)
    assert response.status_code == 415
    assert response.headers["accept-encoding"] == "identity"
    assert "send the body uncompressed" in response.json()["error"]["message"]


async def test_unsupported_version_lists_the_supported(http: RunningServer) -> None:
    params = {"_meta": meta(version="2099-01-01")}
    content = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": params})
    response = await post(
        http,
        content.encode(),
        headers_for("server/discover", **{"mcp-protocol-version": "2099-01-01"}),
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


async def test_mcp_name_sentinel_is_decoded(http: RunningServer) -> None:
    name = "=?base64?" + base64.b64encode(b"note://one").decode() + "?="
    response = await post(
        http,
        body(1, "resources/read", {"uri": "note://one"}),
        headers_for("resources/read", name),
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["contents"][0]["text"] == "first"


async def test_whitespace_around_mcp_header_values_is_not_part_of_them() -> None:
    # RFC 9110 section 5.5: leading and trailing whitespace is not part of a field value.
    # Called directly, not over a socket: uvicorn before 0.55 (the last for Python 3.10)
    # passed trailing whitespace on; httpx's own client refuses to send it.
    headers = headers_for("\ttools/call ", " echo\t")
    content = body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    transport = httpx.ASGITransport(app=build().streamable_http_app())
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            response = await client.post("/mcp", content=content, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_are_not_allowed(http: RunningServer, method: str) -> None:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        response = await client.request(
            method,
            http.url + "/mcp",
            headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN},
        )
    assert response.status_code == 405


async def test_notification_is_accepted(http: RunningServer) -> None:
    content = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    )
    response = await post(http, content.encode(), headers_for("notifications/cancelled"))
    assert response.status_code == 202


async def test_closing_the_response_cancels_the_request(http: RunningServer) -> None:
    STARTED.clear()
    CANCELLED.clear()
    with anyio.fail_after(LIMIT):
        async with httpx.AsyncClient(timeout=LIMIT) as client:
            request = client.build_request(
                "POST",
                http.url + "/mcp",
                content=body(1, "tools/call", {"name": "wait_forever", "arguments": {}}),
                headers=headers_for("tools/call", "wait_forever"),
            )
            response_task: list[Any] = []

            async def call() -> None:
                response_task.append(await client.send(request, stream=True))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.to_thread.run_sync(STARTED.wait, LIMIT)
                tg.cancel_scope.cancel()  # the client gives up: the connection closes
        assert await anyio.to_thread.run_sync(CANCELLED.wait, LIMIT)


async def test_both_eras_at_once(http: RunningServer) -> None:
    url = http.url + "/mcp"
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        init = await client.post(url, content=initialize(), headers=JSON_HEADERS)
        session = init.headers["mcp-session-id"]
        old = {**JSON_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        await client.post(
            url,
            content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers=old,
        )
        results: dict[str, Any] = {}

        async def old_call(n: int) -> None:
            content = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": f"old{n}"}},
                }
            )
            response = await client.post(url, content=content, headers=old)
            results[f"old{n}"] = messages_of(response)[-1]["result"]

        async def new_call(n: int) -> None:
            response = await client.post(
                url,
                content=body(n, "tools/call", {"name": "echo", "arguments": {"text": f"new{n}"}}),
                headers=headers_for("tools/call", "echo"),
            )
            results[f"new{n}"] = response.json()["result"]

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(old_call, n)
                tg.start_soon(new_call, n)
    for n in range(5):
        assert results[f"old{n}"]["content"][0]["text"] == f"old{n}"
        assert "resultType" not in results[f"old{n}"]
        assert results[f"new{n}"]["content"][0]["text"] == f"new{n}"
        assert results[f"new{n}"]["resultType"] == "complete"


async def test_server_without_the_modern_era_keeps_the_old_rules() -> None:
    server = build()
    server.modern_versions = ()
    with running_server(server.streamable_http_app()) as http:
        response = await post(http, body(1, "tools/list"), headers_for("tools/list"))
    assert response.status_code == 400  # an unsupported MCP-Protocol-Version


async def test_a_stateless_endpoint_refuses_a_2026_body_under_an_old_header() -> None:
    with running_server(build().streamable_http_app(stateless=True)) as http:
        response = await post(
            http,
            body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
            headers_for("tools/call", "echo", **OLD_HEADER),
        )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32020


@pytest.mark.parametrize("method", ["subscriptions/listen", "server/discover"])
async def test_a_handshake_session_has_no_2026_only_methods(
    http: RunningServer, method: str
) -> None:
    """The routes are shared by both eras, but a 2025-11-25 session has neither method:
    -32601 (subscriptions/listen was served, with 2026 semantics, on a legacy stream)."""
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open("2025-11-25")
        params = (
            {"notifications": {"toolsListChanged": True}} if method != "server/discover" else {}
        )
        response = await session.post(
            json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).encode()
        )
        assert response.status_code == 200, response.text
        [answer] = messages_of(response)
        assert answer["error"]["code"] == -32601, answer
        assert (await session.call(8, "ping"))["result"] == {}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
async def test_a_2026_request_in_a_handshake_session_without_the_header_is_refused(
    http: RunningServer, version: str
) -> None:
    """Without the header, a handshake-era session's POST is of the session's revision; a
    2026-07-28 body there gets -32020, as without a session or with the header (it was
    served, answered with members the session's revision does not define)."""
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        session = RawSession(client, http.url + "/mcp")
        await session.open(version)
        headers = {k: v for k, v in session.headers().items() if k != "mcp-protocol-version"}
        response = await client.post(session.url, content=body(7, "tools/list"), headers=headers)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == -32020
        assert "header is required" in error["message"]
        assert (await session.call(8, "ping"))["result"] == {}  # the session goes on


async def test_the_client_takes_a_2026_error_status_as_the_answer(
    http: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    # 400 with -32602 and 404 with -32601 are how 2026-07-28 answers these errors: the
    # caller gets the error, the connection goes on, and nothing is logged as a fault.
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    with anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp", era="2026-07-28") as client:
            with pytest.raises(RPCError) as unknown_tool:
                await client.call_tool("nope", {})
            with pytest.raises(RPCError) as unknown_resource:
                await client.read_resource("note://none")
            with pytest.raises(RPCError) as unknown_method:
                await client.request("acme/nothing", {}, EmptyResult)
            still = (await client.call_tool("echo", {"text": "still here"})).content[0]
            assert isinstance(still, TextContent)
            assert still.text == "still here"
    assert unknown_tool.value.code == unknown_resource.value.code == ErrorCode.INVALID_PARAMS
    assert unknown_method.value.code == ErrorCode.METHOD_NOT_FOUND
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
