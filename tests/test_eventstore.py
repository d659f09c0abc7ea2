"""The in-memory event store: bounded per session and in all, oldest first out, replay
after an evicted event refused (never a replay with a hole), never crossing streams or
sessions. Table-driven cases plus a property test over random operation sequences."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.aio import EventStore, MemoryEventStore
from mcpkit.exceptions import LocalProtocolError

OVERHEAD = 272  # bytes charged per event on top of its message (documented in the store)
UNIT = OVERHEAD + 36  # charged for an event of 36 bytes


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def test_it_is_an_event_store() -> None:
    assert isinstance(MemoryEventStore(), EventStore)


@pytest.mark.parametrize(
    "bounds", [{"max_session_bytes": 0}, {"max_total_bytes": 0}, {"max_session_bytes": -1}]
)
def test_bounds_must_be_positive(bounds: dict[str, int]) -> None:
    with pytest.raises(LocalProtocolError):
        MemoryEventStore(**bounds)


def test_stream_ids_with_the_separator_are_refused() -> None:
    async def main() -> None:
        with pytest.raises(LocalProtocolError):
            await MemoryEventStore().append("s", "a_b", b"{}")

    run(main)


def test_replay_is_per_stream_and_per_session() -> None:
    async def main() -> None:
        store = MemoryEventStore()
        first = await store.append("s1", "A", None)  # priming event
        a1 = await store.append("s1", "A", b"a1")
        await store.append("s1", "B", b"b1")
        await store.append("s2", "A", b"other session")
        a2 = await store.append("s1", "A", b"a2")
        replay = await store.replay("s1", first)
        assert replay is not None
        assert replay.stream_id == "A"
        assert replay.events == [(a1, b"a1"), (a2, b"a2")]
        assert (await store.replay("s1", a2)).events == []  # type: ignore[union-attr]
        # The same event id means nothing in another session.
        assert await store.replay("s3", a1) is None
        # Ids never issued, or not ids at all.
        # (Superscript digits pass str.isdigit() but not int(): a header decoded as
        # Latin-1 can carry them; they once raised ValueError, a 500.)
        for bogus in [
            "A_99",
            "A_",
            "A",
            "_1",
            "C_1",
            "A_-1",
            "A_" + "9" * 19,
            "",
            "A_\xb2",
            "A_1\xb3",
        ]:
            assert await store.replay("s1", bogus) is None, bogus

    run(main)


def test_the_session_bound_evicts_oldest_first_and_refuses_a_gap() -> None:
    async def main() -> None:
        message = b"x" * 36  # UNIT bytes charged per event
        store = MemoryEventStore(max_session_bytes=3 * UNIT, max_total_bytes=100 * UNIT)
        ids = [await store.append("s", "A", message) for _ in range(5)]
        assert len(store) == 3
        assert store.size == 3 * UNIT
        # Resuming after an evicted event would skip events: refused.
        assert await store.replay("s", ids[0]) is None
        # Resuming after the last evicted one leaves no gap.
        replay = await store.replay("s", ids[1])
        assert replay is not None
        assert [event_id for event_id, _ in replay.events] == ids[2:]

    run(main)


def test_the_total_bound_evicts_the_oldest_session_first() -> None:
    async def main() -> None:
        message = b"x" * 36  # UNIT bytes charged per event
        store = MemoryEventStore(max_session_bytes=100 * UNIT, max_total_bytes=4 * UNIT)
        prime = await store.append("old", "A", None)  # 64 bytes
        m1, _, _ = [await store.append("old", "A", message) for _ in range(3)]
        n1 = await store.append("new", "A", message)
        await store.append("new", "A", message)
        # 564 bytes were stored: the old session's first two events went.
        assert store.size == 4 * UNIT
        assert len(store) == 4
        assert await store.replay("old", prime) is None  # m1 is gone: a gap
        assert len((await store.replay("old", m1)).events) == 2  # type: ignore[union-attr]
        assert len((await store.replay("new", n1)).events) == 1  # type: ignore[union-attr]

    run(main)


def test_closing_frees_everything() -> None:
    async def main() -> None:
        store = MemoryEventStore()
        await store.append("s", "A", b"1")
        b = await store.append("s", "B", b"2")
        await store.close_stream("s", "A")
        assert store.size == OVERHEAD + 1
        assert len(store) == 1
        await store.close_session("s")
        assert store.size == 0
        assert len(store) == 0
        assert await store.replay("s", b) is None
        await store.close_stream("s", "B")  # unknown now: nothing happens
        await store.close_session("s")

    run(main)


# -- property: random appends and closes against a model ---------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.sampled_from(["s1", "s2", "s3"]),
            st.sampled_from(["A", "B"]),
            st.one_of(st.none(), st.binary(max_size=80)),
        ),
        st.tuples(st.just("close_stream"), st.sampled_from(["s1", "s2"]), st.just("A"), st.none()),
        st.tuples(st.just("close_session"), st.sampled_from(["s1", "s2"]), st.just(""), st.none()),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(
    ops=operations,
    session_bound=st.integers(OVERHEAD, OVERHEAD + 536),
    total_bound=st.integers(OVERHEAD, OVERHEAD + 1136),
)
def test_bounds_hold_and_replays_are_exact_suffixes(
    ops: list[tuple[str, str, str, bytes | None]], session_bound: int, total_bound: int
) -> None:
    async def main() -> None:
        store = MemoryEventStore(max_session_bytes=session_bound, max_total_bytes=total_bound)
        # The model: every event appended to each (session, stream), in order.
        issued: dict[tuple[str, str], list[tuple[str, bytes | None]]] = {}
        for op, session, stream, message in ops:
            if op == "append":
                event_id = await store.append(session, stream, message)
                before = issued.setdefault((session, stream), [])
                before.append((event_id, message))
                cost = OVERHEAD + len(message or b"")
                if len(before) > 1 and cost <= min(session_bound, total_bound):
                    # Oldest first: the event just appended is kept (a resumption from
                    # the one before it replays it) unless it alone is over a bound.
                    assert await store.replay(session, before[-2][0]) is not None
            elif op == "close_stream":
                await store.close_stream(session, stream)
                issued.pop((session, stream), None)
            else:
                await store.close_session(session)
                for key in [key for key in issued if key[0] == session]:
                    del issued[key]
            assert store.size <= total_bound
        for (session, stream), events in issued.items():
            for index, (event_id, _) in enumerate(events):
                replay = await store.replay(session, event_id)
                if replay is None:
                    continue  # evicted past it: refused, never a gap
                assert replay.stream_id == stream
                # Exactly what followed it on that stream, in order.
                assert replay.events == events[index + 1 :]
                # And the same id is nothing in another session.
                for other in ("s1", "s2", "s3"):
                    if other != session and (other, stream) not in issued:
                        assert await store.replay(other, event_id) is None

    run(main)


def test_closed_streams_leave_no_bookkeeping_behind() -> None:
    # The eviction order remembers every event; entries of closed streams must be let go
    # even while the session lives on (one stream held open) and nothing is evicted.
    async def cycles(store: MemoryEventStore, count: int, start: int) -> None:
        for n in range(start, start + count):
            await store.append("s", f"p{n}", b"answer")
            await store.close_stream("s", f"p{n}")

    async def main() -> None:
        store = MemoryEventStore()
        await store.append("s", "0", b"held")
        await cycles(store, 1_000, 0)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await cycles(store, 20_000, 1_000)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert (len(store), store.size) == (1, OVERHEAD + 4)
        # 20,000 leftover entries would hold well over 1 MiB (a stream object each).
        assert grown < 64 * 1024, grown

    run(main)


@pytest.mark.parametrize("streams", [1, 50])
def test_the_charge_per_event_is_what_keeping_it_costs(streams: int) -> None:
    # The bounds are stated in bytes of memory: each event's charge must not fall short
    # of what the store really holds for it (its message, fresh as a server's are, and
    # the bookkeeping), or small events would take a multiple of the bounds.
    count = 5_000

    async def fill(store: MemoryEventStore) -> None:
        for n in range(count):
            await store.append("s", f"st{n % streams}", b"%010d" % n)

    store = MemoryEventStore(max_session_bytes=1 << 40, max_total_bytes=1 << 40)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        anyio.run(fill, store)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(store) == count
    assert held <= store.size <= 1.5 * held, (held / count, store.size / count)
