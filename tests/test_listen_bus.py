"""The notification bus (``mcpkit.aio``): topics, order, bounded queues and the overflow
policy, graceful end and close; and the public interface it promises (a Redis bus slots in
behind the same Protocols)."""

from __future__ import annotations

import anyio
import pytest

from mcpkit.aio import BusMessage, MemoryNotificationBus, NotificationBus, Subscription
from mcpkit.exceptions import LocalProtocolError, SubscriptionOverflowError

pytestmark = pytest.mark.anyio

LIMIT = 5.0


def message(topic: str, n: int = 0) -> BusMessage:
    return BusMessage(topic, f"notifications/{topic}", {"n": n})


def drain(subscription: Subscription) -> list[int]:
    out = []
    while (item := subscription.receive_nowait()) is not None:
        out.append(item.params["n"])
    return out


def test_the_memory_bus_implements_the_interface() -> None:
    bus = MemoryNotificationBus()
    assert isinstance(bus, NotificationBus)
    assert isinstance(bus.subscribe(["a"]), Subscription)


@pytest.mark.parametrize(
    ("topics", "published", "received"),
    [
        (["a"], ["a", "b", "a"], [0, 2]),
        (["a", "b"], ["a", "b", "c"], [0, 1]),
        ([], ["a", "b"], []),
        (["c"], ["a", "b"], []),
    ],
)
def test_topics_select_and_order_is_kept(
    topics: list[str], published: list[str], received: list[int]
) -> None:
    bus = MemoryNotificationBus()
    subscription = bus.subscribe(topics)
    for n, topic in enumerate(published):
        bus.publish(message(topic, n))
    assert drain(subscription) == received


def test_publish_counts_the_subscribers_it_reached() -> None:
    bus = MemoryNotificationBus()
    first, second = bus.subscribe(["a"]), bus.subscribe(["a", "b"])
    assert bus.publish(message("a")) == 2
    assert bus.publish(message("b")) == 1
    assert bus.publish(message("z")) == 0
    first.close()
    assert bus.publish(message("a")) == 1
    assert bus.subscriptions == 1
    second.close()
    second.close()  # idempotent
    assert bus.subscriptions == 0


def test_update_changes_the_topics() -> None:
    bus = MemoryNotificationBus()
    subscription = bus.subscribe(["a"])
    subscription.update(["b"])
    bus.publish(message("a", 1))
    bus.publish(message("b", 2))
    assert subscription.topics == frozenset({"b"})
    assert drain(subscription) == [2]


def test_a_signal_still_waiting_is_not_queued_again() -> None:
    """A burst of identical change signals (a plugin reload) costs one queue slot: the
    subscriber learns the same thing once (it was cut off after max_queued of them)."""
    bus = MemoryNotificationBus(max_queued=3)
    subscription = bus.subscribe(["a"])
    for _ in range(1000):
        bus.publish(message("a", 7))
    bus.publish(message("a", 8))
    bus.publish(message("a", 7))  # still waiting: not again
    assert drain(subscription) == [7, 8]
    bus.publish(message("a", 7))  # delivered since: a new signal
    assert drain(subscription) == [7]


def test_overflow_cuts_the_subscriber_off_and_frees_its_queue() -> None:
    bus = MemoryNotificationBus(max_queued=3)
    slow, fast = bus.subscribe(["a"]), bus.subscribe(["a"], max_queued=10)
    for n in range(4):
        bus.publish(message("a", n))
    # The fourth did not fit: the slow subscriber is cut off, what it had queued dropped.
    with pytest.raises(SubscriptionOverflowError):
        slow.receive_nowait()
    assert bus.subscriptions == 1
    assert bus.publish(message("a", 4)) == 1
    with pytest.raises(SubscriptionOverflowError):
        slow.receive_nowait()  # stays cut off
    assert drain(fast) == [0, 1, 2, 3, 4]


def test_end_delivers_what_is_queued_then_end_of_stream() -> None:
    bus = MemoryNotificationBus()
    subscription = bus.subscribe(["a"])
    bus.publish(message("a", 1))
    subscription.end()
    bus.publish(message("a", 2))  # after the end: not delivered
    first = subscription.receive_nowait()
    assert first is not None
    assert first.params == {"n": 1}
    with pytest.raises(anyio.EndOfStream):
        subscription.receive_nowait()
    assert bus.subscriptions == 0


def test_close_drops_the_queue() -> None:
    bus = MemoryNotificationBus()
    subscription = bus.subscribe(["a"])
    bus.publish(message("a", 1))
    subscription.close()
    with pytest.raises(anyio.ClosedResourceError):
        subscription.receive_nowait()


@pytest.mark.parametrize("bound", [0, -1])
def test_bounds_must_be_positive(bound: int) -> None:
    with pytest.raises(LocalProtocolError):
        MemoryNotificationBus(max_queued=bound)
    with pytest.raises(LocalProtocolError):
        MemoryNotificationBus().subscribe(["a"], max_queued=bound)


async def test_receive_waits_for_a_publication() -> None:
    bus = MemoryNotificationBus()
    subscription = bus.subscribe(["a"])
    got: list[int] = []
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:

            async def receiver() -> None:
                while len(got) < 3:
                    received = await subscription.receive()
                    got.append(received.params["n"])

            tg.start_soon(receiver)
            for n in range(3):
                await anyio.lowlevel.checkpoint()
                bus.publish(message("a", n))
    assert got == [0, 1, 2]


@pytest.mark.parametrize("how", ["end", "close", "overflow"])
async def test_a_waiting_receiver_is_woken_by_the_end(how: str) -> None:
    bus = MemoryNotificationBus(max_queued=1)
    subscription = bus.subscribe(["a"])
    outcome: list[type[BaseException]] = []
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:

            async def receiver() -> None:
                await subscription.wait()
                try:
                    while True:
                        if subscription.receive_nowait() is None:
                            await subscription.wait()
                except Exception as exc:
                    outcome.append(type(exc))

            tg.start_soon(receiver)
            await anyio.wait_all_tasks_blocked()
            if how == "end":
                subscription.end()
            elif how == "close":
                subscription.close()
            else:
                bus.publish(message("a", 0))
                bus.publish(message("a", 1))
    expected = {
        "end": anyio.EndOfStream,
        "close": anyio.ClosedResourceError,
        "overflow": SubscriptionOverflowError,
    }
    assert outcome == [expected[how]]
