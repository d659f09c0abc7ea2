"""Connections share nothing: the tables a connection fills only once it sends requests
(or answers a batch) are its own from their first write (until then, one read-only empty
table stands in for them: a connection is made per stateless HTTP POST)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpkit.protocol import EMPTY_TABLE, Connection, ResponseReceived


def _response(rid: int | str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()


def test_requests_of_one_connection_are_unknown_to_another() -> None:
    first, second = Connection(), Connection()
    rid, _ = first.send_request("ping", progress=True)
    assert first.pending_ids == [rid]
    assert second.pending_ids == []
    # The answer is the first connection's alone; the second never heard of the id.
    assert isinstance(first.receive_message(_response(rid)), ResponseReceived)
    late = second.receive_message(_response(rid))
    assert not isinstance(late, ResponseReceived)
    assert second.pending_ids == []
    assert first.pending_ids == []


def test_batch_answers_held_by_one_connection_are_not_another_s() -> None:
    first, second = Connection(), Connection()
    first.allow_batches = second.allow_batches = True
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
    first.receive_message(batch)
    assert first.send_result(1, {}) is None  # held until its batch is complete
    # Id 1 is still in flight for the first connection's peer, not for the second's.
    assert second.receive_message(b'{"jsonrpc":"2.0","id":1,"method":"ping"}').method == "ping"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "write",
    [
        lambda t: t.__setitem__(1, 2),
        lambda t: t.setdefault(1, 2),
        lambda t: t.update({1: 2}),
        lambda t: t.__delitem__(1),
        lambda t: t.clear(),
    ],
)
def test_the_shared_empty_table_refuses_writes(write: Any) -> None:
    with pytest.raises(TypeError, match="read-only"):
        write(EMPTY_TABLE)
    assert EMPTY_TABLE == {}
    assert EMPTY_TABLE.pop(1, None) is None  # reading (pop with a default) works
