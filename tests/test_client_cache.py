"""The client's cache of 2026-07-28 results (``server/utilities/caching.mdx``): ``ttlMs``
freshness on an injectable clock (no sleeps), the key (method + result-affecting params),
no caching of multi round-trip traffic, invalidation by notifications, the size bound,
and switching it off."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpkit.client import ResultCache
from mcpkit.exceptions import RemoteProtocolError
from mcpkit.types import TextContent

from ._fakemodern import FakeServer, fake_client, modern

LIMIT = 10.0


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tools(ttl: Any = 1000, **extra: Any) -> Any:
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
            "cacheScope": "public",
            **extra,
        }
        if ttl is not None:
            result["ttlMs"] = ttl
        return result

    return answer


def read(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "resultType": "complete",
        "contents": [{"uri": params["uri"], "text": "body"}],
        "ttlMs": 60_000,
        "cacheScope": "private",
    }


# -- the store itself (synchronous, table-driven) ----------------------------------------


@pytest.mark.parametrize(
    ("ttl", "fresh_for"),
    [
        (1500, 1.5),
        (0, 0.0),
        (-5, 0.0),
        (None, 0.0),
        ("10", 0.0),
        (True, 0.0),
        (1.5, 0.0),
        # Too large for a float (it raised OverflowError into list_tools): a year at most.
        (10**400, 365 * 24 * 3600.0),
    ],
)
def test_ttl_rules(ttl: Any, fresh_for: float) -> None:
    clock = Clock()
    cache = ResultCache(clock=clock)
    key = cache.key("tools/list", {})
    assert key is not None
    cache.put(key, b"{}", ttl, "public")
    if fresh_for == 0.0:
        assert cache.get(key) is None  # absent, negative, zero or invalid: immediately stale
        return
    clock.now += fresh_for - 0.001
    assert cache.get(key) == b"{}"
    clock.now += 0.001  # now == t_received + ttlMs: stale
    assert cache.get(key) is None
    assert len(cache) == 0


@pytest.mark.parametrize(
    ("method", "params", "cacheable"),
    [
        ("tools/list", {}, True),
        ("tools/list", {"cursor": ""}, True),
        ("resources/read", {"uri": "a://b"}, True),
        ("server/discover", {"_meta": {"x": 1}}, True),
        ("tools/call", {"name": "t"}, False),
        ("prompts/get", {"name": "p"}, False),
        ("resources/read", {"uri": "a://b", "requestState": "s"}, False),
        ("resources/read", {"uri": "a://b", "inputResponses": {}}, False),
    ],
)
def test_what_may_be_cached(method: str, params: dict[str, Any], cacheable: bool) -> None:
    assert (ResultCache.key(method, params) is not None) is cacheable


def test_the_key_is_the_method_and_the_params_that_affect_the_result() -> None:
    key = ResultCache.key
    assert key("tools/list", {"cursor": "a", "_meta": {"p": 1}}) == key(
        "tools/list", {"cursor": "a"}
    )
    assert key("tools/list", {"cursor": "a"}) != key("tools/list", {"cursor": "b"})
    assert key("tools/list", {}) != key("tools/list", {"cursor": ""})  # "" is a real cursor
    assert key("prompts/list", {}) != key("tools/list", {})


def test_size_is_bounded_least_recently_used_first() -> None:
    cache = ResultCache(2, clock=Clock())
    a, b, c = (ResultCache.key("resources/read", {"uri": u}) for u in "abc")
    assert a is not None
    assert b is not None
    assert c is not None
    cache.put(a, b"a", 1000, "private", "a")
    cache.put(b, b"b", 1000, "private", "b")
    assert cache.get(a) == b"a"  # a is now the most recently used
    cache.put(c, b"c", 1000, "private", "c")
    assert (cache.get(a), cache.get(b), cache.get(c)) == (b"a", None, b"c")
    with pytest.raises(ValueError, match="max_entries"):
        ResultCache(0)


def test_notifications_invalidate_what_they_name() -> None:
    cache = ResultCache(clock=Clock())
    entries = {
        ("tools/list", None): {},
        ("prompts/list", None): {},
        ("resources/list", None): {},
        ("resources/templates/list", None): {},
        ("resources/read", "a://1"): {"uri": "a://1"},
        ("resources/read", "a://2"): {"uri": "a://2"},
    }

    def fill() -> None:
        for (method, uri), params in entries.items():
            key = cache.key(method, params)
            assert key is not None
            cache.put(key, b"{}", 1000, "public", uri)

    fill()
    cache.invalidate("notifications/tools/list_changed")
    assert len(cache) == 5
    cache.invalidate("notifications/resources/list_changed")
    assert len(cache) == 3
    cache.invalidate("notifications/resources/updated", "a://1")
    assert len(cache) == 2
    cache.invalidate("notifications/message")
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize(
    ("notification", "kept"),
    [
        ("notifications/tools/list_changed", False),
        ("notifications/message", True),
        ("notifications/progress", True),
        ("notifications/prompts/list_changed", True),
        ("notifications/resources/list_changed", True),
        ("notifications/resources/updated", True),
    ],
)
def test_only_what_makes_a_result_stale_stops_it_being_stored(
    notification: str, kept: bool
) -> None:
    """A tools/list answer that was in flight while ``notification`` came: stored unless
    the notification makes tools/list results stale (any notification at all stopped it,
    a log message included)."""
    cache = ResultCache(clock=Clock())
    key = cache.key("tools/list", {})
    assert key is not None
    mark = cache.mark()
    cache.invalidate(notification, "a://1")
    cache.put(key, b"{}", 1000, "public", mark=mark)
    assert (cache.get(key) is not None) is kept


# -- through the client ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_fresh_results_are_served_from_the_cache_until_the_ttl_passes() -> None:
    clock = Clock()
    handler = modern({"tools/list": tools(1000), "resources/read": read})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, cache=ResultCache(clock=clock)) as (client, fake):
            first = await client.list_tools()
            again = await client.list_tools()
            assert again.tools[0].name == first.tools[0].name == "t"
            assert len(fake.calls("tools/list")) == 1
            await client.list_tools(cursor="next")  # another page: another key
            assert len(fake.calls("tools/list")) == 2
            clock.now += 1.0
            await client.list_tools()
            assert len(fake.calls("tools/list")) == 3
            for _ in range(2):
                await client.read_resource("a://1")
            await client.read_resource("a://2")
            assert len(fake.calls("resources/read")) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("ttl", [None, 0, -1])
async def test_no_positive_ttl_means_no_caching(ttl: Any) -> None:
    handler = modern({"tools/list": tools(ttl)})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, cache=ResultCache(clock=Clock())) as (client, fake):
            await client.list_tools()
            await client.list_tools()
    assert len(fake.calls("tools/list")) == 2


@pytest.mark.anyio
async def test_the_cache_can_be_switched_off() -> None:
    handler = modern({"tools/list": tools(60_000)})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, cache=False) as (client, fake):
            assert client.cache is None
            await client.list_tools()
            await client.list_tools()
    assert len(fake.calls("tools/list")) == 2


@pytest.mark.anyio
async def test_multi_round_trip_traffic_is_never_cached() -> None:
    def guarded(params: dict[str, Any]) -> dict[str, Any]:
        if "requestState" not in params:
            return {"resultType": "input_required", "requestState": "s"}
        return read(params)

    handler = modern({"resources/read": guarded})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, cache=ResultCache(clock=Clock())) as (client, fake):
            await client.read_resource("a://1")
            await client.read_resource("a://1")
    # Each read: the input-required answer, then the retry; neither was cached.
    assert len(fake.calls("resources/read")) == 4


@pytest.mark.anyio
async def test_notifications_invalidate_cached_results() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/call":
            # Sent before the answer: the client handles it before the call returns.
            await fake.notify("notifications/tools/list_changed")
            await fake.notify("notifications/resources/updated", {"uri": "a://1"})
            return {"resultType": "complete", "content": [{"type": "text", "text": "x"}]}
        return await modern({"tools/list": tools(60_000), "resources/read": read})(
            fake, method, params
        )

    changes: list[str] = []
    options: dict[str, Any] = {
        "cache": ResultCache(clock=Clock()),
        "on_list_changed": changes.append,
    }
    with anyio.fail_after(LIMIT):
        async with fake_client(handle, **options) as (client, fake):
            await client.list_tools()
            await client.read_resource("a://1")
            await client.read_resource("a://2")
            result = await client.call_tool("poke")
            assert isinstance(result.content[0], TextContent)
            await client.list_tools()
            await client.read_resource("a://1")
            await client.read_resource("a://2")
    assert len(fake.calls("tools/list")) == 2
    reads = [r["params"]["uri"] for r in fake.calls("resources/read")]
    assert reads == ["a://1", "a://2", "a://1"]
    assert changes == ["tools"]


@pytest.mark.anyio
async def test_ping_is_never_answered_from_the_cache() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result = await modern({})(fake, method, params)
        return {**result, "ttlMs": 60_000}

    with anyio.fail_after(LIMIT):
        async with fake_client(handle, cache=ResultCache(clock=Clock())) as (client, fake):
            await client.ping()
            await client.ping()
    assert len(fake.calls("server/discover")) == 3


@pytest.mark.anyio
async def test_an_invalid_result_is_not_cached() -> None:
    """A result that does not decode fails its call and is not kept: the next call asks
    again (the invalid answer was cached first, and every later call failed from the
    cache without asking the server, for as long as its ttlMs)."""
    answers = iter([tools(60_000, tools="oops"), tools(60_000)])

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = next(answers)(params)
        return result

    handler = modern({"tools/list": answer})
    with anyio.fail_after(LIMIT):
        async with fake_client(handler, cache=ResultCache(clock=Clock())) as (client, fake):
            with pytest.raises(RemoteProtocolError, match="invalid result for tools/list"):
                await client.list_tools()
            assert client.cache is not None
            assert len(client.cache) == 0
            assert (await client.list_tools()).tools[0].name == "t"
            await client.list_tools()  # the valid answer is cached
    assert len(fake.calls("tools/list")) == 2


@pytest.mark.anyio
async def test_a_log_message_before_the_answer_does_not_stop_caching() -> None:
    async def handle(fake: FakeServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tools/list":
            # Sent while the request is out: nothing a list result depends on.
            await fake.notify("notifications/message", {"level": "info", "data": "listing"})
            await fake.notify("notifications/prompts/list_changed")
        return await modern({"tools/list": tools(60_000)})(fake, method, params)

    with anyio.fail_after(LIMIT):
        async with fake_client(handle, cache=ResultCache(clock=Clock())) as (client, fake):
            for _ in range(3):
                await client.list_tools()
    assert len(fake.calls("tools/list")) == 1
