"""The 2026-07-28 era on the server, spoken raw over an in-memory connection (the stdio
path): per-request ``_meta``, ``server/discover``, ``resultType`` and ``serverInfo`` on
every result, caching hints, log opt-in, removed methods, and both eras on one connection.
2026-07-28 ``basic/index.mdx``, ``basic/versioning.mdx``, ``server/discover.mdx``,
``server/utilities/caching.mdx``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpkit.server import RequestContext, Server
from mcpkit.types import ReadResourceResult, ResourceContents

from ._wire import MODERN, meta, wire_to

pytestmark = pytest.mark.anyio

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def build() -> Server:
    server = Server("modern-test", "2.0", instructions="Be brief.")

    @server.tool()
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    async def chatty(ctx: RequestContext) -> str:
        """Logs at three levels."""
        await ctx.log("debug", "d")
        await ctx.log("info", "i")
        await ctx.log("error", "e")
        return "done"

    @server.tool()
    async def who(ctx: RequestContext) -> dict[str, Any]:
        """What the request declared about its client."""
        info = ctx.client_info
        return {
            "version": ctx.protocol_version,
            "client": None if info is None else [info.name, info.version],
            "capabilities": msgspec.to_builtins(ctx.client_capabilities),
        }

    @server.resource("note://one")
    def one() -> str:
        return "first"

    @server.prompt()
    def hello(name: str) -> str:
        """Greets."""
        return f"Hello {name}"

    return server


async def test_discover() -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call(1, "server/discover", {"_meta": meta()})
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN
    assert set(result["supportedVersions"]) == {
        MODERN,
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    }
    assert result["_meta"][SERVER_INFO] == {"name": "modern-test", "version": "2.0"}
    assert result["instructions"] == "Be brief."
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "private"
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        (None, -32602, "params._meta"),
        ({}, -32602, "params._meta"),
        ({"_meta": "x"}, -32602, "params._meta"),
        ({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}, -32602, "protocolVersion"),
        ({"_meta": meta(version=None)}, -32602, "protocolVersion"),
        (
            {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
            -32602,
            "clientCapabilities",
        ),
        ({"_meta": meta(capabilities={"roots": 5})}, -32602, "clientCapabilities"),
        ({"_meta": meta(log_level="loud")}, -32602, "logLevel"),
        ({"_meta": meta(client_info={"name": 1})}, -32602, "clientInfo"),
        ({"_meta": meta(version="2099-01-01")}, -32022, "2099-01-01"),
        ({"_meta": meta(version="2025-11-25")}, -32022, "2025-11-25"),
    ],
)
async def test_meta_rules(params: dict[str, Any] | None, code: int, words: str) -> None:
    async with wire_to(build()) as wire:
        reply = await wire.call("r-7", "server/discover", params)
        assert reply["id"] == "r-7"
        assert reply["error"]["code"] == code
        assert words in reply["error"]["message"]
        if code == -32022:
            assert reply["error"]["data"]["supported"] == [MODERN]
            assert (
                reply["error"]["data"]["requested"]
                == params["_meta"][  # type: ignore[index]
                    "io.modelcontextprotocol/protocolVersion"
                ]
            )
        # The connection is unharmed.
        assert "result" in await wire.call(2, "server/discover", {"_meta": meta()})


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"],
)
async def test_methods_removed_in_2026_are_not_found(method: str) -> None:
    async with wire_to(build()) as wire:
        params: dict[str, Any] = {"_meta": meta(), "uri": "note://one", "level": "info"}
        reply = await wire.call(9, method, params)
    assert reply["error"]["code"] == -32601
    assert MODERN in reply["error"]["message"]


async def test_results_carry_result_type_server_info_and_cache_hints() -> None:
    async with wire_to(build()) as wire:
        listed = (await wire.call(1, "tools/list", {"_meta": meta()}))["result"]
        called = (
            await wire.call(
                2, "tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": meta()}
            )
        )["result"]
        read = (await wire.call(3, "resources/read", {"uri": "note://one", "_meta": meta()}))[
            "result"
        ]
        prompts = (await wire.call(4, "prompts/list", {"_meta": meta()}))["result"]
        got = (
            await wire.call(
                5, "prompts/get", {"name": "hello", "arguments": {"name": "A"}, "_meta": meta()}
            )
        )["result"]
    for result in (listed, called, read, prompts, got):
        assert result["resultType"] == "complete"
        assert result["_meta"][SERVER_INFO]["name"] == "modern-test"
    for result in (listed, read, prompts):
        assert result["ttlMs"] == 0
        assert result["cacheScope"] == "private"
    for result in (called, got):
        assert "ttlMs" not in result
    assert [tool["name"] for tool in listed["tools"]] == ["echo", "chatty", "who"]
    assert called["content"] == [{"type": "text", "text": "x"}]
    assert read["contents"][0]["text"] == "first"


async def test_cache_hints_are_configurable() -> None:
    server = build()
    server.cache_ttl_ms = 60_000
    server.cache_scope = "public"
    async with wire_to(server) as wire:
        listed = (await wire.call(1, "tools/list", {"_meta": meta()}))["result"]
    assert (listed["ttlMs"], listed["cacheScope"]) == (60_000, "public")


@pytest.mark.parametrize(
    ("level", "expected"),
    [(None, []), ("debug", ["d", "i", "e"]), ("info", ["i", "e"]), ("error", ["e"])],
)
async def test_log_messages_only_when_the_request_opts_in(
    level: str | None, expected: list[str]
) -> None:
    async with wire_to(build()) as wire:
        params = {"name": "chatty", "arguments": {}, "_meta": meta(log_level=level)}
        reply = await wire.call(1, "tools/call", params)
        assert reply["result"]["content"][0]["text"] == "done"
        logs = [
            m["params"]["data"] for m in wire.seen if m.get("method") == "notifications/message"
        ]
    assert logs == expected


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (meta(), {"version": MODERN, "client": None, "capabilities": {}}),
        (
            meta(
                capabilities={"sampling": {}},
                client_info={"name": "c", "version": "9"},
                log_level="info",
            ),
            {"version": MODERN, "client": ["c", "9"], "capabilities": {"sampling": {}}},
        ),
    ],
)
async def test_the_context_tells_what_each_request_declared(
    declared: dict[str, Any], expected: dict[str, Any]
) -> None:
    async with wire_to(build()) as wire:
        params = {"name": "who", "arguments": {}, "_meta": declared}
        for rid in (1, 2):  # (the same declaration twice: nothing is carried over)
            reply = await wire.call(rid, "tools/call", params)
            assert reply["result"]["structuredContent"] == expected, reply


async def test_both_eras_on_one_connection() -> None:
    async with wire_to(build()) as wire:
        # Before initialize: a handshake-era request is refused, a modern one is served.
        refused = await wire.call(1, "tools/list")
        assert refused["error"]["code"] == -32600
        assert "result" in await wire.call(2, "tools/list", {"_meta": meta()})
        init = await wire.call(
            3,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == "2025-11-25"
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        old = (await wire.call(4, "tools/list"))["result"]
        new = (await wire.call(5, "tools/list", {"_meta": meta()}))["result"]
    assert "resultType" not in old
    assert "_meta" not in old
    assert new["resultType"] == "complete"


async def test_modern_era_can_be_turned_off() -> None:
    server = build()
    server.modern_versions = ()
    async with wire_to(server) as wire:
        reply = await wire.call(1, "tools/list", {"_meta": meta()})
        assert reply["error"]["code"] == -32600  # handshake era: initialize first
        reply = await wire.call(2, "server/discover", {"_meta": meta()})
        assert reply["error"]["code"] == -32600


async def test_input_from_the_client_needs_the_capability() -> None:
    server = build()

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        """Samples."""
        result = await ctx.sample("hi")
        return str(result.model)

    async with wire_to(server) as wire:
        params: dict[str, Any] = {"name": "ask", "arguments": {}, "_meta": meta()}
        missing = await wire.call(1, "tools/call", params)
        params["_meta"] = meta(capabilities={"sampling": {}})
        declared = await wire.call(2, "tools/call", params)
        # Never a server-to-client request on this era.
        assert not [m for m in wire.seen if "method" in m and "id" in m]
    assert missing["error"]["code"] == -32021
    assert missing["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    # With the capability the same call asks by an input-required result instead.
    result = declared["result"]
    assert result["resultType"] == "input_required"
    [request] = result["inputRequests"].values()
    assert request["method"] == "sampling/createMessage"
    assert isinstance(result["requestState"], str)


async def test_a_resource_sets_its_own_caching_hints_for_2026_only() -> None:
    server = build()

    @server.resource("test://fresh")
    def fresh() -> ReadResourceResult:
        """Fresh for five seconds, shareable."""
        contents = [ResourceContents(uri="test://fresh", text="x")]
        return ReadResourceResult(contents=contents, ttl_ms=5000, cache_scope="public")

    async with wire_to(server) as wire:
        modern = await wire.call(1, "resources/read", {"uri": "test://fresh", "_meta": meta()})
        assert (modern["result"]["ttlMs"], modern["result"]["cacheScope"]) == (5000, "public")
        await wire.call(
            2,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        )
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        old = (await wire.call(3, "resources/read", {"uri": "test://fresh"}))["result"]
        # Members only 2026-07-28 defines never reach a handshake-era client.
        assert old == {"contents": [{"uri": "test://fresh", "text": "x"}]}
