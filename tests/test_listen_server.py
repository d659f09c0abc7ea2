"""``subscriptions/listen`` on the server, spoken raw over an in-memory connection (the
stdio path): acknowledgment first with the honoured filter, the subscription id on every
message, filters, several listens on one connection, cancellation, graceful closure, the
bounded queue, churn, and handshake-era ``resources/subscribe`` on the same bus.
2026-07-28 ``basic/patterns/subscriptions.mdx`` and ``basic/patterns/cancellation.mdx``."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Final

import anyio
import pytest

from mcpkit.aio import MemoryChannel, MemoryNotificationBus, memory_channel_pair
from mcpkit.server import LowLevelServer, Server

from ._wire import ACK, PROMPTS, SUB, TOOLS, UPDATED, Wire, meta, wire_to

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
RESOURCES: Final = "notifications/resources/list_changed"


def build(**options: Any) -> Server:
    server = Server("listen-test", "1.0", **options)

    @server.tool()
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @server.prompt()
    def hello() -> str:
        """Greets."""
        return "Hello"

    @server.resource("note://one")
    def one() -> str:
        return "first"

    return server


def listen_request(rid: Any, **notifications: Any) -> dict[str, Any]:
    params = {"_meta": meta(), "notifications": notifications}
    return {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}


async def open_listen(wire: Wire, rid: Any, **notifications: Any) -> dict[str, Any]:
    """Send a listen request; return its acknowledgment (the first message for it)."""
    await wire.send(listen_request(rid, **notifications))
    ack = await wire.read()
    assert ack["method"] == ACK
    return ack


FULL: Final = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
    "resourceSubscriptions": ["note://one", "note://two", "note://one"],
}


@pytest.mark.parametrize(
    ("server", "requested", "honoured"),
    [
        ("full", FULL, {**FULL, "resourceSubscriptions": ["note://one", "note://two"]}),
        ("full", {"toolsListChanged": True}, {"toolsListChanged": True}),
        ("full", {"toolsListChanged": False}, {}),
        ("full", {}, {}),
        ("full", {"resourceSubscriptions": []}, {"resourceSubscriptions": []}),
        ("tools only", FULL, {"toolsListChanged": True}),
        ("low level", FULL, {}),
    ],
)
async def test_the_acknowledgment_echoes_the_honoured_subset(
    server: str, requested: dict[str, Any], honoured: dict[str, Any]
) -> None:
    if server == "full":
        target: LowLevelServer = build()
    elif server == "tools only":
        target = Server("tools-only")
        target.tool()(_noop)
    else:
        target = LowLevelServer("bare")
    async with wire_to(target) as wire:
        ack = await open_listen(wire, "L-1", **requested)
    assert ack["params"] == {"_meta": {SUB: "L-1"}, "notifications": honoured}


async def _noop() -> str:
    """Nothing."""
    return ""


async def test_notifications_follow_the_filter_and_carry_the_subscription_id() -> None:
    server = build()
    async with wire_to(server) as wire:
        await open_listen(wire, 1, toolsListChanged=True)
        await open_listen(wire, 2, promptsListChanged=True, resourceSubscriptions=["note://one"])
        server.notify_list_changed("tools")
        server.notify_list_changed("resources")  # nobody asked for it
        server.notify_list_changed("prompts")
        assert await server.notify_resource_updated("note://other") == 0
        assert await server.notify_resource_updated("note://one") == 1
        got = [await wire.read() for _ in range(3)]
    by_listen: dict[Any, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for message in got:
        params = message["params"]
        by_listen[params.pop("_meta")[SUB]].append((message["method"], params))
    assert by_listen == {
        1: [(TOOLS, {})],
        2: [(PROMPTS, {}), (UPDATED, {"uri": "note://one"})],
    }


async def test_graceful_closure_ends_each_listen_with_its_result() -> None:
    server = build()
    async with wire_to(server) as wire:
        await open_listen(wire, "a", toolsListChanged=True)
        server.notify_list_changed("tools")
        server.end_subscriptions()  # what is queued still goes out, then the result
        tools = await wire.read()
        final = await wire.read()
        # The connection still serves, and new listens can open.
        assert "result" in await wire.call(3, "server/discover", {"_meta": meta()})
        await open_listen(wire, "b")
    assert tools == {"jsonrpc": "2.0", "method": TOOLS, "params": {"_meta": {SUB: "a"}}}
    assert final["id"] == "a"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUB] == "a"
    assert final["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == ("listen-test")


async def test_cancellation_ends_the_listen_without_a_response() -> None:
    server = build()
    async with wire_to(server) as wire:
        await open_listen(wire, 5, toolsListChanged=True)
        await open_listen(wire, 6, toolsListChanged=True)
        assert server.bus.subscriptions == 2  # type: ignore[attr-defined]
        cancel = {"requestId": 5, "reason": "done"}
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        # The cancellation is handled before the next request is read.
        await wire.call(7, "server/discover", {"_meta": meta()})
        with anyio.fail_after(LIMIT):
            while server.bus.subscriptions != 1:  # type: ignore[attr-defined]
                await wire.call(8, "server/discover", {"_meta": meta()})
        server.notify_list_changed("tools")
        server.end_subscriptions()
        after = [await wire.read(), await wire.read()]
    assert [m.get("params", m.get("result", {}))["_meta"][SUB] for m in after] == [6, 6]
    assert all(m.get("id") != 5 for m in wire.seen)


async def test_a_listen_with_too_many_resource_uris_is_refused() -> None:
    server = build(max_subscriptions=2)
    async with wire_to(server) as wire:
        uris = ["note://one", "note://two", "note://three"]
        await wire.send(listen_request("many", resourceSubscriptions=uris))
        refused = await wire.read()
        assert refused["id"] == "many"
        assert refused["error"]["code"] == -32602
        assert "Too many subscriptions" in refused["error"]["message"]
        assert server.bus.subscriptions == 0  # type: ignore[attr-defined]
        # Duplicates count once; within the limit it opens.
        await open_listen(wire, "ok", resourceSubscriptions=["note://one", "note://one"])


async def test_a_listener_that_falls_behind_is_cut_off() -> None:
    server = build(bus=MemoryNotificationBus(max_queued=2))
    async with wire_to(server) as wire:
        await open_listen(
            wire, "slow", toolsListChanged=True, promptsListChanged=True, resourcesListChanged=True
        )
        # Identical signals still waiting are one (a burst of tool registrations cut
        # listeners off); three different ones do not fit in two.
        for kind in ("tools", "tools", "prompts", "resources"):  # no checkpoint between
            server.notify_list_changed(kind)
        error = await wire.read()
        assert server.bus.subscriptions == 0  # type: ignore[attr-defined]
        # Listening again works.
        await open_listen(wire, "again", toolsListChanged=True)
    assert error["id"] == "slow"
    assert error["error"]["code"] == -32603  # not the legacy -32000...-32019 range
    assert "listen again" in error["error"]["message"]
    assert error["error"]["data"] == {"maxQueued": 2}


async def test_the_end_of_input_ends_listens_gracefully() -> None:
    """A client closing its side (stdin) gets each open listen's final result."""
    server = build()
    to_server, server_receives = anyio.create_memory_object_stream[bytes](100)
    server_sends, from_server = anyio.create_memory_object_stream[bytes](100)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, MemoryChannel(server_sends, server_receives))
        wire = Wire(MemoryChannel(to_server, from_server))
        await open_listen(wire, 1, toolsListChanged=True)
        await open_listen(wire, 2)
        await to_server.aclose()  # the client's side of the pipe ends; it still reads
        finals = [await wire.read(), await wire.read()]
        await wire.channel.aclose()
    assert {final["id"] for final in finals} == {1, 2}
    assert all(final["result"]["resultType"] == "complete" for final in finals)
    assert server.bus.subscriptions == 0  # type: ignore[attr-defined]


def _pair() -> tuple[MemoryChannel, MemoryChannel]:
    return memory_channel_pair()


async def test_listen_is_a_2026_request() -> None:
    async with wire_to(build()) as wire:
        missing = await wire.call(1, "subscriptions/listen", {"notifications": {}})
        bad = await wire.call(
            2, "subscriptions/listen", {"_meta": meta(), "notifications": {"toolsListChanged": 1}}
        )
    assert missing["error"]["code"] == -32602
    assert bad["error"]["code"] == -32602


async def test_handshake_subscriptions_and_listens_share_the_bus() -> None:
    server = build()
    updates: list[dict[str, Any]] = []
    async with wire_to(server) as old, wire_to(server) as new:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "0"},
        }
        await old.call(1, "initialize", init)
        await old.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await old.call(2, "resources/subscribe", {"uri": "note://one"})
        await open_listen(new, 9, resourceSubscriptions=["note://one"])
        assert server.bus.subscriptions == 2  # type: ignore[attr-defined]
        assert await server.notify_resource_updated("note://one") == 2
        updates.append(await old.read())  # sent before notify_resource_updated returned
        updates.append(await new.read())
        await old.call(3, "resources/unsubscribe", {"uri": "note://one"})
        assert await server.notify_resource_updated("note://one") == 1
        updates.append(await new.read())
        await old.call(4, "resources/subscribe", {"uri": "note://one"})
        assert server.bus.subscriptions == 2  # type: ignore[attr-defined]
    # The handshake-era wire is unchanged: no _meta, no subscription id.
    assert updates[0] == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": "note://one"}}
    assert updates[1]["params"] == {"uri": "note://one", "_meta": {SUB: 9}}
    assert updates[2]["params"] == {"uri": "note://one", "_meta": {SUB: 9}}
    assert server.bus.subscriptions == 0  # type: ignore[attr-defined]


class Demux:
    """Reads one connection and files each message under its listen (the response's id,
    or the notification's subscription id)."""

    def __init__(self, channel: MemoryChannel) -> None:
        self.channel = channel
        self.by_listen: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        self._changed = anyio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        await self.channel.send(json.dumps(message).encode())

    async def run(self) -> None:
        while True:
            message = json.loads(await self.channel.receive())
            key = message["id"] if "id" in message else message["params"]["_meta"][SUB]
            self.by_listen[key].append(message)
            self.poke()

    def poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, key: Any, count: int, stop: anyio.Event | None = None) -> None:
        with anyio.fail_after(LIMIT):
            while len(self.by_listen[key]) < count and not (stop and stop.is_set()):
                await self._changed.wait()


async def test_churn_delivers_each_notification_once_in_order_and_leaks_nothing() -> None:
    """Listeners open and close on several connections while notifications fire: every
    listener open throughout gets all of them once, in order; one that opened or closed
    meanwhile gets an unbroken run of them; every subscription is gone at the end."""
    server = build()
    count, churners, rounds = 120, 4, 6
    uris = [f"note://item/{n}" for n in range(count)]
    steady_ids = ["steady-0", "steady-1"]
    published = anyio.Event()
    pairs = [_pair() for _ in range(churners + 1)]
    demuxes = [Demux(client) for client, _ in pairs]
    steady = demuxes[0]

    async def churn(demux: Demux, index: int) -> None:
        for round_ in range(rounds):
            rid = f"churn-{index}-{round_}"
            await demux.send(listen_request(rid, resourceSubscriptions=uris))
            await demux.until(rid, 1)
            await demux.until(rid, 2, stop=published)  # one notification, if any come
            cancel = {"requestId": rid}
            await demux.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
            )

    with anyio.fail_after(LIMIT * 3):
        async with anyio.create_task_group() as tg:
            for (_, server_end), demux in zip(pairs, demuxes, strict=True):
                tg.start_soon(server.serve, server_end)
                tg.start_soon(demux.run)
            for rid in steady_ids:
                await steady.send(listen_request(rid, resourceSubscriptions=uris))
                await steady.until(rid, 1)
            async with anyio.create_task_group() as churning:
                for index, demux in enumerate(demuxes[1:]):
                    churning.start_soon(churn, demux, index)
                for uri in uris:
                    await server.notify_resource_updated(uri)
                    await anyio.lowlevel.checkpoint()
                published.set()
                for demux in demuxes:
                    demux.poke()
            server.end_subscriptions()
            for rid in steady_ids:
                await steady.until(rid, count + 2)  # ack, every notification, the result
            tg.cancel_scope.cancel()
    for client, server_end in pairs:
        await client.aclose()
        await server_end.aclose()
    for rid in steady_ids:
        messages = steady.by_listen[rid]
        assert messages[0]["method"] == ACK
        assert [m["params"]["uri"] for m in messages[1:-1]] == uris
        assert messages[-1]["result"]["_meta"][SUB] == rid
    for demux in demuxes[1:]:
        assert len(demux.by_listen) == rounds
        for messages in demux.by_listen.values():
            assert messages[0]["method"] == ACK
            assert all("method" in m for m in messages)  # cancelled: never a response
            got = [m["params"]["uri"] for m in messages[1:]]
            if got:
                start = uris.index(got[0])
                assert got == uris[start : start + len(got)]
    assert server.bus.subscriptions == 0  # type: ignore[attr-defined]
    assert all(not session.listens for session in server.sessions)
