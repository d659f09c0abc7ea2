"""``Client.listen``: mcpkit's client reading ``subscriptions/listen`` streams (2026-07-28)
from mcpkit's server, in memory and over Streamable HTTP on 127.0.0.1, asyncio and trio."""

from __future__ import annotations

from typing import Any, Final

import anyio
import pytest

from mcpkit.aio import MemoryNotificationBus
from mcpkit.client import Client
from mcpkit.exceptions import (
    CapabilityError,
    LocalProtocolError,
    RemoteProtocolError,
    RequestTimeoutError,
    RPCError,
)
from mcpkit.server import Server
from mcpkit.testing import connect_memory

from ._fakemodern import FakeServer, Handler, discover_result, fake_client, tool_result
from ._httpserver import running_server

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"


def build() -> Server:
    server = Server("listened", "1.0")

    @server.tool()
    async def change(kind: str) -> str:
        """Announce that a list changed."""
        server.notify_list_changed(kind)  # type: ignore[arg-type]
        return kind

    @server.prompt()
    def hello() -> str:
        """A prompt, so prompts can change."""
        return "hello"

    @server.resource("test://watched")
    def watched() -> str:
        return "watched"

    return server


def subscriptions(server: Server) -> int:
    bus = server.bus
    assert isinstance(bus, MemoryNotificationBus)
    return bus.subscriptions


async def test_listen_delivers_what_was_asked_for_in_order() -> None:
    server = build()
    with anyio.fail_after(LIMIT):
        async with connect_memory(server) as client, client.listen(tools=True) as stream:
            assert client.protocol_version == "2026-07-28"
            assert stream.honoured is not None
            assert stream.honoured.tools_list_changed is True
            assert stream.honoured.prompts_list_changed is not True  # not asked for
            for kind in ("prompts", "tools", "tools"):
                await client.call_tool("change", {"kind": kind})
            first, second = await anext(stream), await anext(stream)
            assert first.method == second.method == "notifications/tools/list_changed"
            assert first.params["_meta"][SUBSCRIPTION_ID] == stream.subscription_id
        # Leaving the block cancelled the request: the server let go of the subscription.
        assert subscriptions(server) == 0


async def test_resource_updates_and_several_streams() -> None:
    server = build()
    with anyio.fail_after(LIMIT):
        async with (
            connect_memory(server) as client,
            client.listen(resource_uris=["test://watched"]) as updates,
            client.listen(prompts=True) as prompts,
        ):
            assert updates.subscription_id != prompts.subscription_id
            await server.notify_resource_updated("test://watched")
            await client.call_tool("change", {"kind": "prompts"})
            update = await anext(updates)
            assert update.method == "notifications/resources/updated"
            assert update.params["uri"] == "test://watched"
            assert (await anext(prompts)).method == "notifications/prompts/list_changed"


async def test_a_graceful_end_stops_the_iteration_with_the_result() -> None:
    server = build()
    with anyio.fail_after(LIMIT):
        async with connect_memory(server) as client, client.listen(tools=True) as stream:
            await client.call_tool("change", {"kind": "tools"})
            server.end_subscriptions()
            seen = [note.method async for note in stream]
            assert seen == ["notifications/tools/list_changed"]
            assert stream.result is not None
            assert stream.result.meta[SUBSCRIPTION_ID] == stream.subscription_id


async def test_the_handshake_era_has_no_listen() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build(), era="handshake") as client:
            with pytest.raises(CapabilityError, match="2026-07-28"):
                async with client.listen(tools=True):
                    pass


async def test_a_server_without_listen_refuses_it() -> None:
    server = build()
    server.modern_versions = ()  # a handshake-only server: the client falls back
    with anyio.fail_after(LIMIT):
        async with connect_memory(server) as client:
            assert client.era == "handshake"
            with pytest.raises(CapabilityError):
                async with client.listen(tools=True):
                    pass


async def test_errors_come_out_as_themselves_not_in_a_group() -> None:
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            client.timeout = 1e-9  # no acknowledgement can arrive in time
            with pytest.raises(RequestTimeoutError, match="not acknowledged"):
                async with client.listen(tools=True):
                    pass
            client.timeout = LIMIT
            # The caller's own exception from the block.
            with pytest.raises(KeyError, match="mine"):
                async with client.listen(tools=True):
                    raise KeyError("mine")


async def test_an_unknown_logging_level_is_refused_at_once_on_2026() -> None:
    # On 2026-07-28 the level travels with every later request: a bogus one would make
    # each of them fail, so it is refused when set.
    with anyio.fail_after(LIMIT):
        async with connect_memory(build()) as client:
            with pytest.raises(LocalProtocolError, match="bogus"):
                await client.set_logging_level("bogus")  # type: ignore[arg-type]
            await client.ping()
            await client.set_logging_level("debug")
            await client.ping()


async def test_listen_over_streamable_http() -> None:
    server = build()
    with running_server(server.streamable_http_app()) as http, anyio.fail_after(LIMIT):
        async with Client(http.url + "/mcp") as client, client.listen(tools=True) as stream:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("change", {"kind": "tools"})
            note = await anext(stream)
            assert note.method == "notifications/tools/list_changed"
            assert note.params["_meta"][SUBSCRIPTION_ID] == stream.subscription_id


# -- servers that break the rules (scripted) ---------------------------------------------


async def test_a_listen_answered_without_acknowledgement_ends_at_once() -> None:
    """The final result came first: there is nothing to wait for (the client waited for
    an acknowledgement until its timeout, or for ever without one)."""

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "subscriptions/listen":
            return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: "s"}}
        if method == "server/discover":
            return discover_result()
        raise RPCError(-32601, method)

    with anyio.fail_after(LIMIT):
        async with (
            fake_client(handle, timeout=None) as (client, _),
            client.listen(tools=True) as stream,
        ):
            assert [n async for n in stream] == []


async def test_a_subscription_id_that_is_no_id_is_not_a_listens() -> None:
    """While a listen is open, an object where the id goes (it raised TypeError in the
    client, and the notification was lost): the notification still reaches the
    callbacks, and the stream gets its own."""
    changed: list[str] = []

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "subscriptions/listen":
            listen = fake.calls("subscriptions/listen")[-1]
            await fake.notify(
                "notifications/subscriptions/acknowledged",
                {
                    "_meta": {SUBSCRIPTION_ID: listen["id"]},
                    "notifications": params["notifications"],
                },
            )
            await anyio.sleep_forever()
        if method == "tools/call":
            listen = fake.calls("subscriptions/listen")[-1]
            for sub in ({"bogus": 1}, [1], True, listen["id"]):
                await fake.notify(
                    "notifications/tools/list_changed", {"_meta": {SUBSCRIPTION_ID: sub}}
                )
            return tool_result("sent")
        if method == "server/discover":
            return discover_result()
        raise RPCError(-32601, method)

    with anyio.fail_after(LIMIT):
        async with (
            fake_client(handle, on_list_changed=changed.append) as (client, _),
            client.listen(tools=True) as stream,
        ):
            await client.call_tool("notify", {})
            first = await stream.__anext__()
            assert first.method == "notifications/tools/list_changed"
    assert changed == ["tools"] * 4


def scripted_listen(
    *notes: tuple[str, dict[str, Any]], end: Any = None, stay_open: bool = False
) -> Handler:
    """A server that acknowledges a listen, sends ``notes`` on it, then answers it with
    ``end`` (a complete result by default), or never when ``stay_open``."""

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return discover_result()
        if method != "subscriptions/listen":
            raise RPCError(-32601, method)
        meta = {SUBSCRIPTION_ID: fake.calls("subscriptions/listen")[-1]["id"]}
        await fake.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": meta, "notifications": params["notifications"]},
        )
        for note, extra in notes:
            await fake.notify(note, {"_meta": meta, **extra})
        if stay_open:
            await anyio.sleep_forever()
        if end is not None:
            result: dict[str, Any] = end(meta)
            return result
        return {"resultType": "complete", "_meta": meta}

    return handle


async def test_a_stream_delivers_only_what_it_asked_for() -> None:
    """A server sending what the listen did not ask for (subscriptions.mdx: it MUST NOT):
    the stream drops it (every notification carrying the id was delivered)."""
    handle = scripted_listen(
        ("notifications/resources/updated", {"uri": "a://secret"}),
        ("notifications/prompts/list_changed", {}),
        ("notifications/resources/list_changed", {}),
        ("notifications/bogus/thing", {}),
        ("notifications/message", {"level": "info", "data": "x"}),
        ("notifications/resources/updated", {"uri": "a://1"}),
        ("notifications/tools/list_changed", {}),
    )
    with anyio.fail_after(LIMIT):
        async with (
            fake_client(handle) as (client, _),
            client.listen(tools=True, resource_uris=["a://1"]) as stream,
        ):
            seen = [(n.method, n.params.get("uri")) async for n in stream]
    assert seen == [
        ("notifications/resources/updated", "a://1"),
        ("notifications/tools/list_changed", None),
    ]


@pytest.mark.parametrize(
    ("result_type", "error"),
    [("weird", "unknown resultType 'weird'"), ("input_required", "input-required")],
)
async def test_a_final_result_is_checked_like_any_other(result_type: str, error: str) -> None:
    """The answer ending a stream has a resultType like every 2026-07-28 result: one that
    is unknown, or input_required (which subscriptions/listen may not return), fails the
    stream (both ended it as if gracefully)."""

    def end(meta: dict[str, Any]) -> dict[str, Any]:
        return {"resultType": result_type, "requestState": "s", "_meta": meta}

    handle = scripted_listen(("notifications/tools/list_changed", {}), end=end)
    with anyio.fail_after(LIMIT):
        async with fake_client(handle) as (client, _), client.listen(tools=True) as stream:
            assert (await anext(stream)).method == "notifications/tools/list_changed"
            with pytest.raises(RemoteProtocolError, match=error):
                await anext(stream)
            assert stream.result is None


async def test_a_slow_consumer_holds_a_bounded_number_of_bytes() -> None:
    """Notifications waiting for the consumer are bounded in bytes as well as in number:
    the oldest go (1,024 notifications of 16 MiB each could wait)."""
    count, size = 30, 100_000

    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method != "tools/call":
            return await scripted_listen(stay_open=True)(fake, method, params)
        meta = {SUBSCRIPTION_ID: fake.calls("subscriptions/listen")[-1]["id"]}
        for n in range(count):
            note = {"_meta": meta, "n": n, "pad": "x" * size}
            await fake.notify("notifications/tools/list_changed", note)
        return tool_result("sent")

    with anyio.fail_after(LIMIT):
        async with (
            fake_client(handle) as (client, _),
            client.listen(tools=True, max_queued_bytes=10 * size) as stream,
        ):
            await client.call_tool("flood")  # its answer came after every notification
            kept = [await anext(stream) for _ in range(count - stream.dropped)]
    assert 0 < len(kept) <= 10
    assert [note.params["n"] for note in kept] == list(range(count - len(kept), count))
