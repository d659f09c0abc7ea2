"""The in-memory event store's bounds, beyond ``test_eventstore.py``: an event bigger than
a bound, which stream and which session pays for an overflow, the exact boundary of a
resumable ``Last-Event-ID`` (the last evicted event: yes; any before it: no), replay
never crossing streams; and the same through a real Streamable HTTP server on 127.0.0.1
(an evicted ``Last-Event-ID`` is refused with 400, never answered with a replay that has a
hole in it; ``aio/_eventstore.py``, ``server/_http_handlers.py``)."""

from __future__ import annotations

import json
from typing import Final

import anyio
import anyio.to_thread
import httpx
import pytest

from mcpkit.aio import MemoryEventStore, Replay

from ._http_testserver import GATES, build_server
from ._httpserver import RunningServer, running_server
from ._mcphttp import RawSession, call, events

pytestmark = pytest.mark.anyio

OVERHEAD: Final = 272  # bytes charged per event on top of its message
UNIT: Final = OVERHEAD + 36  # charged for an event of 36 bytes
TIMEOUT: Final = 10.0


def ids_of(replay: Replay | None) -> list[str]:
    assert replay is not None
    return [event_id for event_id, _ in replay.events]


# -- the store alone (asyncio and trio) -------------------------------------------------------


async def test_an_event_bigger_than_the_session_bound_is_not_kept() -> None:
    store = MemoryEventStore(max_session_bytes=OVERHEAD + 100, max_total_bytes=100 * UNIT)
    small = await store.append("s", "A", b"x" * 10)
    big = await store.append("s", "A", b"y" * 200)
    assert (small, big) == ("A_1", "A_2")
    # Nothing else is evicted for an event that could not be kept anyway.
    assert (len(store), store.size) == (1, OVERHEAD + 10)
    # The client that saw the big event has missed nothing; one that saw only the small
    # one would miss the big one: refused.
    assert ids_of(await store.replay("s", big)) == []
    assert await store.replay("s", small) is None
    # The stream goes on numbering where it was.
    assert await store.append("s", "A", b"z") == "A_3"
    assert ids_of(await store.replay("s", big)) == ["A_3"]


async def test_an_event_bigger_than_the_total_bound_is_not_kept() -> None:
    store = MemoryEventStore(max_session_bytes=100 * UNIT, max_total_bytes=OVERHEAD + 100)
    other = await store.append("t", "A", b"o" * 10)
    big = await store.append("s", "A", b"y" * 200)
    assert (len(store), store.size) == (1, OVERHEAD + 10)
    assert ids_of(await store.replay("s", big)) == []
    assert await store.replay("t", other) == Replay("A", [])


async def test_the_session_bound_takes_from_the_oldest_stream_first() -> None:
    message = b"m" * 36  # UNIT bytes charged per event
    store = MemoryEventStore(max_session_bytes=5 * UNIT, max_total_bytes=100 * UNIT)
    a = [await store.append("s", "A", message) for _ in range(3)]
    b = [await store.append("s", "B", message) for _ in range(2)]
    assert store.size == 5 * UNIT
    b.append(await store.append("s", "B", message))  # one over: A's oldest goes
    assert store.size == 5 * UNIT
    assert await store.replay("s", a[0]) == Replay("A", [(a[1], message), (a[2], message)])
    b.append(await store.append("s", "B", message))
    b.append(await store.append("s", "B", message))
    # A lost two more (it is now empty); every event of B is still there.
    assert len(store) == 5
    assert await store.replay("s", a[0]) is None
    assert await store.replay("s", a[1]) is None
    assert ids_of(await store.replay("s", a[2])) == []
    assert ids_of(await store.replay("s", b[0])) == b[1:]
    # Only then does B itself pay, oldest first.
    b.append(await store.append("s", "B", message))
    b.append(await store.append("s", "B", message))
    assert (len(store), store.size) == (5, 5 * UNIT)
    assert await store.replay("s", b[0]) is None
    assert ids_of(await store.replay("s", b[1])) == b[2:]


async def test_the_bounds_evict_in_append_order_whatever_the_stream() -> None:
    # A long call's stream started first; its answer, appended last, must outlive the
    # events of a later stream that were appended before it (its client is away and
    # will resume for it).
    message = b"m" * 36  # UNIT bytes charged per event
    store = MemoryEventStore(max_session_bytes=5 * UNIT, max_total_bytes=100 * UNIT)
    early = [await store.append("s", "A", message) for _ in range(2)]
    later = [await store.append("s", "B", message) for _ in range(3)]
    answer = await store.append("s", "A", message)
    assert ids_of(await store.replay("s", early[0])) == [early[1], answer]
    answer2 = await store.append("s", "A", message)
    # Then B's oldest goes, not A's answers.
    answer3 = await store.append("s", "A", message)
    assert ids_of(await store.replay("s", early[1])) == [answer, answer2, answer3]
    assert await store.replay("s", later[0]) is not None  # the last evicted: resumable
    assert ids_of(await store.replay("s", later[1])) == [later[2]]
    assert store.size == 5 * UNIT


async def test_the_total_bound_evicts_in_append_order_across_sessions() -> None:
    message = b"m" * 36
    store = MemoryEventStore(max_session_bytes=100 * UNIT, max_total_bytes=3 * UNIT)
    first = [await store.append("first", "A", message)]
    second = [await store.append("second", "A", message) for _ in range(2)]
    first.append(await store.append("first", "A", message))  # evicts first[0], the oldest
    first.append(await store.append("first", "A", message))  # evicts second[0], not first[1]
    assert ids_of(await store.replay("first", first[0])) == first[1:]
    assert ids_of(await store.replay("second", second[0])) == second[1:]
    assert await store.replay("second", "A_0") is None  # (before the evicted event)
    assert (len(store), store.size) == (3, 3 * UNIT)


async def test_the_session_bound_is_per_session() -> None:
    message = b"m" * 36
    store = MemoryEventStore(max_session_bytes=3 * UNIT, max_total_bytes=100 * UNIT)
    quiet = [await store.append("quiet", "A", message) for _ in range(2)]
    for _ in range(10):
        await store.append("loud", "A", message)
    assert store.size == 2 * UNIT + 3 * UNIT
    assert ids_of(await store.replay("quiet", quiet[0])) == quiet[1:]


async def test_the_total_bound_takes_from_the_oldest_session_and_spares_the_newest() -> None:
    message = b"m" * 36
    store = MemoryEventStore(max_session_bytes=100 * UNIT, max_total_bytes=6 * UNIT)
    first = [await store.append("first", "A", message) for _ in range(2)]
    second = [await store.append("second", "A", message) for _ in range(2)]
    third = [await store.append("third", "A", message) for _ in range(2)]
    assert store.size == 6 * UNIT
    third.append(await store.append("third", "A", message))
    assert store.size == 6 * UNIT
    # first[0] went: resuming after it still misses nothing.
    assert ids_of(await store.replay("first", first[0])) == [first[1]]
    third.append(await store.append("third", "A", message))
    # The first session is empty now; the second and the third are whole.
    assert await store.replay("first", first[0]) is None
    assert ids_of(await store.replay("first", first[1])) == []
    assert ids_of(await store.replay("second", second[0])) == second[1:]
    assert ids_of(await store.replay("third", third[0])) == third[1:]
    third.append(await store.append("third", "A", message))
    third.append(await store.append("third", "A", message))
    # Then the second session pays, never the newest.
    assert await store.replay("second", second[0]) is None
    assert ids_of(await store.replay("second", second[1])) == []
    assert ids_of(await store.replay("third", third[0])) == third[1:]
    assert store.size == 6 * UNIT
    assert len(store) == 6


async def test_resumable_exactly_from_the_last_evicted_event() -> None:
    message = b"m" * 36
    store = MemoryEventStore(max_session_bytes=3 * UNIT, max_total_bytes=100 * UNIT)
    issued = [await store.append("s", "A", message) for _ in range(10)]
    held = issued[-3:]
    for index, event_id in enumerate(issued):
        replay = await store.replay("s", event_id)
        if index < 6:
            assert replay is None, event_id  # a later event is gone: a gap
        else:
            # issued[6] is the last evicted: the client has it and misses none of the rest.
            assert ids_of(replay) == [e for e in held if int(e[2:]) > int(event_id[2:])]


async def test_replay_never_crosses_interleaved_streams() -> None:
    store = MemoryEventStore()
    issued: dict[str, list[tuple[str, bytes | None]]] = {"A": [], "B": [], "C": []}
    for n in range(12):
        stream = "ABC"[n % 3] if n % 4 else "A"
        message = f"{stream}{n}".encode()
        issued[stream].append((await store.append("s", stream, message), message))
    await store.append("other", "A", b"other session")
    for stream, events_ in issued.items():
        for index, (event_id, _) in enumerate(events_):
            replay = await store.replay("s", event_id)
            assert replay == Replay(stream, events_[index + 1 :]), event_id


# -- through the HTTP server ----------------------------------------------------------------

#: A long key makes the held call's log event (~1.1 KB) and answer (~1.1 KB) big next to
#: the priming event (272 bytes): with this bound the priming and log events fit, and once
#: the answer is stored both go (the session's events: 272 + ~1370 + ~1360 bytes).
KEY_LENGTH: Final = 1000
SESSION_BOUND: Final = 2000


async def held_and_dropped(session: RawSession, rid: int, key: str) -> tuple[str, str]:
    """Call ``hold`` and drop the connection after its log event; return the ids of the
    priming and the log event, once the call runs on."""
    async with session.stream(call(rid, "hold", key=key)) as response:
        iterator = aiter(events(response))
        priming = await anext(iterator)
        log = await anext(iterator)
    assert priming.data == b""
    assert json.loads(log.data)["method"] == "notifications/message"
    assert key in json.loads(log.data)["params"]["data"]
    assert priming.id is not None
    assert log.id is not None
    assert await anyio.to_thread.run_sync(GATES.get(f"{key}:started").wait, TIMEOUT)
    return priming.id, log.id


async def wait_events(http: RunningServer, store: MemoryEventStore, count: int) -> None:
    """Poll (on the server's loop) until the store holds ``count`` events (bounded)."""
    with anyio.fail_after(TIMEOUT):
        while True:
            if http.call(lambda: len(store)) == count:
                return
            await anyio.sleep(0.01)


async def resume(session: RawSession, last_event_id: str) -> tuple[int, list[dict[str, object]]]:
    headers = session.headers(accept="text/event-stream", last_event_id=last_event_id)
    headers.pop("content-type", None)
    with anyio.fail_after(TIMEOUT):
        async with session.http.stream("GET", session.url, headers=headers) as response:
            if response.status_code != 200:
                await response.aread()
                return response.status_code, [response.json()]
            return 200, [json.loads(e.data) async for e in events(response) if e.data]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the client; the server has a thread
async def test_http_resume_after_an_evicted_event_is_refused() -> None:
    store = MemoryEventStore(max_session_bytes=SESSION_BOUND)
    app = build_server().streamable_http_app(event_store=store, keepalive=60)
    key = "e" * KEY_LENGTH
    with running_server(app) as http:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            priming_id, log_id = await held_and_dropped(session, 2, key)
            assert http.call(lambda: len(store)) == 2
            GATES.open(key)
            # The answer is stored: the priming and the log event make way for it.
            await wait_events(http, store, 1)
            assert http.call(lambda: store.size) <= SESSION_BOUND
            status, body = await resume(session, priming_id)
            assert status == 400
            error = body[0]["error"]
            assert isinstance(error, dict)
            assert "expired" in error["message"]
            # The log event was the last evicted: resuming after it misses nothing.
            status, replayed = await resume(session, log_id)
            assert status == 200
            assert [m["id"] for m in replayed] == [2]
            result = replayed[0]["result"]
            assert isinstance(result, dict)
            assert result["content"][0]["text"] == f"released {key}"
    GATES.forget(key, f"{key}:started")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the client; the server has a thread
async def test_http_replay_never_crosses_streams_of_one_session() -> None:
    store = MemoryEventStore()
    app = build_server().streamable_http_app(event_store=store, keepalive=60)
    with running_server(app) as http:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            session = RawSession(client, http.url + "/mcp")
            await session.open()
            a_priming, a_log = await held_and_dropped(session, 2, "streams-a")
            b_priming, b_log = await held_and_dropped(session, 3, "streams-b")
            assert a_priming.split("_")[0] != b_priming.split("_")[0]
            GATES.open("streams-b")
            GATES.open("streams-a")
            await wait_events(http, store, 6)
            for last, expected in [
                (a_priming, ["notifications/message", 2]),
                (a_log, [2]),
                (b_priming, ["notifications/message", 3]),
                (b_log, [3]),
            ]:
                status, replayed = await resume(session, last)
                assert status == 200
                assert [m.get("method", m.get("id")) for m in replayed] == expected, last
                key = "streams-a" if last in (a_priming, a_log) else "streams-b"
                assert all(key in json.dumps(m) for m in replayed), replayed
    GATES.forget("streams-a", "streams-a:started", "streams-b", "streams-b:started")
