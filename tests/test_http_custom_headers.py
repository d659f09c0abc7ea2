"""``x-mcp-header`` on the server (SEP-2243): tools with invalid annotations are refused at
registration, and over Streamable HTTP 2026-07-28 (a real socket on 127.0.0.1) each
``Mcp-Param-{Name}`` header is checked against the argument it mirrors: a mismatch, a
missing header, a header without its argument or an undecodable value is HTTP 400 with
-32020, and the tool does not run. Handshake-era requests are not affected.
2026-07-28 ``basic/transports/streamable-http.mdx``, "Custom Headers from Tool Parameters"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.client import Client
from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import headers_for_request
from mcpkit.server import LowLevelServer, RequestContext, Server
from mcpkit.types import ListToolsResult, TextContent, Tool

from ._httpserver import RunningServer, running_server
from ._mcphttp import JSON_HEADERS, initialize, messages_of
from ._wire import MODERN, meta

pytestmark = pytest.mark.anyio

LIMIT: Final = 15.0
SCHEMA: Final = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "scope": {
            "type": "object",
            "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
        },
        "query": {"type": "string"},
    },
    "required": ["region", "query"],
}
TOOL: Final = Tool(name="execute_sql", input_schema=SCHEMA)
#: The arguments each tool call ran with (a rejected call never gets here).
RAN: list[dict[str, Any]] = []


def build() -> Server:
    server = Server("custom-headers", "1.0")

    @server.tool(input_schema=SCHEMA)
    async def execute_sql(**arguments: Any) -> str:
        """Echo the arguments."""
        RAN.append(arguments)
        return json.dumps(arguments, sort_keys=True)

    @server.tool()
    async def plain(text: str) -> str:
        """No annotations: Mcp-Param-* headers are ignored."""
        return text

    return server


def build_low_level() -> LowLevelServer:
    server = LowLevelServer("custom-headers-low", "1.0")

    async def handler(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        RAN.append(arguments)
        return json.dumps(arguments, sort_keys=True)

    server.add_tool(TOOL, handler)
    return server


@pytest.fixture(scope="module", params=["Server", "LowLevelServer"])
def http(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    server = build() if request.param == "Server" else build_low_level()
    with running_server(server.streamable_http_app()) as running:
        yield running


def call_body(rid: int, arguments: dict[str, Any], name: str = "execute_sql") -> str:
    params = {"name": name, "arguments": arguments, "_meta": meta()}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


def client_headers(arguments: dict[str, Any]) -> dict[str, str]:
    """What a conforming client sends, built by mcpkit's own header encoder."""
    mcp = headers_for_request("tools/call", {"name": "execute_sql", "arguments": arguments}, TOOL)
    return {**JSON_HEADERS, "mcp-protocol-version": MODERN, **mcp}


async def post(
    http: RunningServer, content: bytes | str, headers: dict[str, str] | list[tuple[str, str]]
) -> httpx.Response:
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        return await client.post(http.url + "/mcp", content=content, headers=headers)


@pytest.mark.parametrize(
    ("arguments", "mirrored"),
    [
        ({"region": "us-west1", "query": "q"}, {"Mcp-Param-Region": "us-west1"}),
        (
            {"region": "Hello, 世界", "query": "q"},
            {"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="},
        ),
        ({"region": " padded ", "query": "q"}, {"Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?="}),
        (
            {"region": "line1\nline2", "query": "q"},
            {"Mcp-Param-Region": "=?base64?bGluZTEKbGluZTI=?="},
        ),
        (
            {"region": "=?base64?literal?=", "query": "q"},
            {"Mcp-Param-Region": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
        ),
        (
            {"region": "r", "priority": 42, "verbose": False, "query": "q"},
            {"Mcp-Param-Region": "r", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false"},
        ),
        (
            {"region": "r", "scope": {"tenant": "acme"}, "query": "q"},
            {"Mcp-Param-Region": "r", "Mcp-Param-Tenant": "acme"},
        ),
    ],
)
async def test_matching_headers_are_accepted(
    http: RunningServer, arguments: dict[str, Any], mirrored: dict[str, str]
) -> None:
    headers = client_headers(arguments)
    assert {k: v for k, v in headers.items() if k.startswith("Mcp-Param-")} == mirrored
    RAN.clear()
    response = await post(http, call_body(7, arguments), headers)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert json.loads(result["content"][0]["text"]) == arguments
    assert [arguments] == RAN


async def test_header_names_are_case_insensitive_and_integers_numeric(http: RunningServer) -> None:
    headers = {
        **client_headers({}),
        "MCP-PARAM-REGION": "us-west1",
        "mcp-param-priority": "42.0",
    }
    response = await post(
        http, call_body(1, {"region": "us-west1", "priority": 42, "query": "q"}), headers
    )
    assert response.status_code == 200, response.text


async def test_a_null_argument_needs_no_header(http: RunningServer) -> None:
    # "Parameter value is null: Server MUST NOT expect the header". The schema says
    # boolean, so the decorated tool reports invalid arguments; either way no -32020.
    arguments = {"region": "r", "verbose": None, "query": "q"}
    response = await post(http, call_body(8, arguments), client_headers(arguments))
    assert response.status_code == 200, response.text
    assert "result" in response.json()


MISMATCHES = [
    ("different value", {"region": "us-west1"}, {"Mcp-Param-Region": "eu-west1"}, "does not match"),
    ("missing header", {"region": "us-west1"}, {}, "Mcp-Param-Region header is required"),
    ("no argument", {}, {"Mcp-Param-Region": "us-west1"}, "arguments.region has no value"),
    ("null argument", {"region": None}, {"Mcp-Param-Region": "x"}, "arguments.region has no value"),
    ("bad padding", {"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVsbG8?="}, "Base64"),
    ("bad alphabet", {"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, "Base64"),
    ("not decoded", {"region": " padded "}, {"Mcp-Param-Region": "padded"}, "does not match"),
    (
        "integer",
        {"region": "r", "priority": 42},
        {"Mcp-Param-Region": "r", "Mcp-Param-Priority": "41"},
        "does not match",
    ),
    (
        "not a number",
        {"region": "r", "priority": 42},
        {"Mcp-Param-Region": "r", "Mcp-Param-Priority": "x"},
        "not a number",
    ),
    (
        "boolean",
        {"region": "r", "verbose": True},
        {"Mcp-Param-Region": "r", "Mcp-Param-Verbose": "TRUE"},
        "does not match",
    ),
    (
        "nested",
        {"region": "r", "scope": {"tenant": "a"}},
        {"Mcp-Param-Region": "r"},
        "arguments.scope.tenant",
    ),
]


@pytest.mark.parametrize(
    ("arguments", "mirrored", "reason"),
    [case[1:] for case in MISMATCHES],
    ids=[case[0] for case in MISMATCHES],
)
async def test_mismatches_are_rejected(
    http: RunningServer, arguments: dict[str, Any], mirrored: dict[str, str], reason: str
) -> None:
    arguments = {**arguments, "query": "q"}
    headers = {**client_headers({}), **mirrored}
    RAN.clear()
    response = await post(http, call_body(9, arguments), headers)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["id"] == 9
    assert answer["error"]["code"] == -32020
    assert answer["error"]["message"].startswith("Header mismatch: ")
    assert reason in answer["error"]["message"]
    assert RAN == []  # the tool never ran


async def test_invalid_characters_are_rejected(http: RunningServer) -> None:
    headers = [*client_headers({}).items(), ("Mcp-Param-Region", "caf\xe9")]
    raw = [(name.encode(), value.encode("latin-1")) for name, value in headers]
    response = await post(http, call_body(3, {"region": "café", "query": "q"}), raw)  # type: ignore[arg-type]
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
    assert "may not carry" in response.json()["error"]["message"]


async def test_a_repeated_header_is_rejected(http: RunningServer) -> None:
    headers = [
        *client_headers({"region": "us-west1", "query": "q"}).items(),
        ("Mcp-Param-Region", "eu-west1"),
    ]
    response = await post(http, call_body(4, {"region": "us-west1", "query": "q"}), headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert "more than one mcp-param-region header" in error["message"]


async def test_unrecognized_param_headers_are_ignored(http: RunningServer) -> None:
    headers = {**client_headers({"region": "r", "query": "q"}), "Mcp-Param-Unknown": "1"}
    response = await post(http, call_body(5, {"region": "r", "query": "q"}), headers)
    assert response.status_code == 200, response.text
    # Another method ignores Mcp-Param-* headers altogether.
    listing = {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"_meta": meta()}}
    )
    response = await post(http, body, {**listing, "Mcp-Param-Region": "x"})
    assert response.status_code == 200, response.text
    tools = response.json()["result"]["tools"]
    schema = next(t["inputSchema"] for t in tools if t["name"] == "execute_sql")
    assert schema == SCHEMA  # the annotations reach clients as given


async def test_handshake_era_requests_are_not_checked(http: RunningServer) -> None:
    url = http.url + "/mcp"
    async with httpx.AsyncClient(timeout=LIMIT) as client:
        init = await client.post(url, content=initialize(), headers=JSON_HEADERS)
        assert init.status_code == 200
        old = {
            **JSON_HEADERS,
            "mcp-session-id": init.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        done = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.post(url, content=done, headers=old)
        arguments = {"region": "us-west1", "query": "q"}
        params = {"name": "execute_sql", "arguments": arguments}
        content = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        # No Mcp-Param-Region, and a wrong one: the 2025-11-25 transport has no such rule.
        for extra in ({}, {"mcp-param-region": "eu-west1"}):
            response = await client.post(url, content=content, headers={**old, **extra})
            assert response.status_code == 200
            [answer] = messages_of(response)
            assert json.loads(answer["result"]["content"][0]["text"]) == arguments


# -- registration -----------------------------------------------------------------------------

INVALID_SCHEMAS = [
    ("empty name", {"v": {"type": "string", "x-mcp-header": ""}}),
    ("space", {"v": {"type": "string", "x-mcp-header": "My Region"}}),
    ("number", {"v": {"type": "number", "x-mcp-header": "Score"}}),
    ("object", {"v": {"type": "object", "x-mcp-header": "Data"}}),
    (
        "duplicate",
        {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"},
        },
    ),
    ("under items", {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}),
]


@pytest.mark.parametrize(
    "properties", [case[1] for case in INVALID_SCHEMAS], ids=[case[0] for case in INVALID_SCHEMAS]
)
def test_invalid_annotations_are_refused_at_registration(properties: dict[str, Any]) -> None:
    input_schema = {"type": "object", "properties": properties}
    server = Server("refuses")

    async def bad(**arguments: Any) -> str:
        return ""

    with pytest.raises(
        LocalProtocolError, match=r"tool 'bad': invalid tool input schema: x-mcp-header"
    ):
        server.tool(input_schema=input_schema)(bad)
    assert "bad" not in server.tool_registry
    assert server.param_headers("bad") == ()

    low = LowLevelServer("refuses")

    async def handler(ctx: RequestContext, arguments: dict[str, Any]) -> list[TextContent]:
        return []

    with pytest.raises(LocalProtocolError, match=r"tool 'bad': invalid tool input schema"):
        low.add_tool(Tool(name="bad", input_schema=input_schema), handler)
    assert low.tools == []


def test_registered_annotations_are_known_to_the_server() -> None:
    server = build()
    assert [p.header for p in server.param_headers("execute_sql")] == [
        "Mcp-Param-Region",
        "Mcp-Param-Priority",
        "Mcp-Param-Verbose",
        "Mcp-Param-Tenant",
    ]
    assert server.param_headers("plain") == ()
    assert server.param_headers("nope") == ()
    server.remove_tool("execute_sql")
    assert server.param_headers("execute_sql") == ()
    assert [p.name for p in build_low_level().param_headers("execute_sql")] == [
        "Region",
        "Priority",
        "Verbose",
        "Tenant",
    ]


async def test_mcpkit_client_mirrors_annotated_arguments(http: RunningServer) -> None:
    # The client learns the tool's definition (listing the tools first if it has to) and
    # sends Mcp-Param-* headers the server accepts: non-ASCII, edge spaces, numbers.
    arguments = {"region": " Zürich ", "priority": 7, "verbose": True, "query": "q"}
    with anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp") as client:
            assert client.protocol_version == MODERN
            result = await client.call_tool("execute_sql", arguments)
            assert result.is_error is not True
            assert result.content == [TextContent(text=json.dumps(arguments, sort_keys=True))]


async def test_mcpkit_client_drops_tools_with_invalid_annotations() -> None:
    bad = {"type": "object", "properties": {"data": {"type": "object", "x-mcp-header": "Data"}}}
    server = LowLevelServer("lists-a-bad-tool", "1.0")

    async def handler(ctx: RequestContext, arguments: dict[str, Any]) -> str:
        return "ok"

    server.add_tool(Tool(name="good", input_schema={"type": "object"}), handler)
    server.add_tool(Tool(name="placeholder", input_schema={"type": "object"}), handler)

    async def list_with_a_bad_one(ctx: RequestContext, params: Any) -> ListToolsResult:
        # A server that does not check its own annotations (mcpkit's refuses such tools).
        return ListToolsResult(tools=[*server.tools, Tool(name="bad", input_schema=bad)])

    server.set_request_handler("tools/list", list_with_a_bad_one)
    with running_server(server.streamable_http_app()) as running, anyio.fail_after(LIMIT):
        async with Client(running.url + "/mcp") as client:
            assert [tool.name async for tool in client.iter_tools()] == ["good", "placeholder"]
            async with Client(running.url + "/mcp", era="handshake") as old:
                # The handshake era has no x-mcp-header: nothing is dropped there.
                assert "bad" in [tool.name async for tool in old.iter_tools()]


@pytest.mark.parametrize("ttl_ms", [0, 60_000], ids=["uncached", "cached"])
async def test_the_client_relists_and_retries_when_a_tool_gained_a_mirrored_header(
    ttl_ms: int,
) -> None:
    """The tool's definition changed after the client listed it: the first call is refused
    (-32020, it did not run), the client lists the tools again, from the server even when
    the list is cached, and retries once (streamable-http.mdx, "Client Behavior": it
    SHOULD)."""
    server = Server("relist", "1.0", cache_ttl_ms=ttl_ms)
    properties: dict[str, Any] = {"region": {"type": "string"}}

    def register(version: str) -> None:
        @server.tool(name="query", input_schema={"type": "object", "properties": properties})
        async def query(**arguments: Any) -> str:
            return f"{version} {arguments['region']}"

    register("v1")
    with running_server(server.streamable_http_app()) as http:
        async with Client(http.url + "/mcp", timeout=LIMIT) as client:
            assert client.era == MODERN
            first = await client.call_tool("query", {"region": "eu"})
            assert first.content[0].text == "v1 eu"  # type: ignore[union-attr]

            def upgrade() -> None:
                server.remove_tool("query")
                properties["region"] = {"type": "string", "x-mcp-header": "Region"}
                register("v2")

            http.call(upgrade)
            second = await client.call_tool("query", {"region": "eu"})
            assert second.content[0].text == "v2 eu"  # type: ignore[union-attr]
