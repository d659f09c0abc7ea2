"""The handshake state machine (basic/lifecycle.mdx), checked over every state x input."""

from __future__ import annotations

import pytest

from mcpkit.exceptions import LocalProtocolError
from mcpkit.protocol import READY_HANDSHAKES, HandshakeState, ServerHandshake, ready_handshake

S = HandshakeState
METHODS = ["initialize", "ping", "tools/list", "tools/call", "acme/op", "logging/setLevel"]


def machine_in(state: HandshakeState) -> ServerHandshake:
    hs = ServerHandshake()
    if state is not S.AWAITING_INITIALIZE:
        hs.initialize_succeeded("2025-11-25")
    if state is S.READY:
        hs.receive_notification("notifications/initialized")
    assert hs.state is state
    return hs


# (state, method) -> accepted?
EXPECTED = {
    (S.AWAITING_INITIALIZE, "initialize"): True,
    (S.AWAITING_INITIALIZE, "ping"): True,
    (S.INITIALIZED, "initialize"): False,
    (S.READY, "initialize"): False,
}


@pytest.mark.parametrize("state", list(S))
@pytest.mark.parametrize("method", METHODS)
def test_request_rules(state: HandshakeState, method: str) -> None:
    accepted = EXPECTED.get((state, method), state is not S.AWAITING_INITIALIZE)
    error = machine_in(state).check_request(method)
    assert (error is None) == accepted
    if error is not None:
        assert error.code == -32600
        assert "initialize" in error.message


@pytest.mark.parametrize(
    ("state", "notification", "delivered", "after"),
    [
        (S.AWAITING_INITIALIZE, "notifications/initialized", False, S.AWAITING_INITIALIZE),
        (S.AWAITING_INITIALIZE, "notifications/roots/list_changed", False, S.AWAITING_INITIALIZE),
        (S.INITIALIZED, "notifications/initialized", False, S.READY),
        (S.INITIALIZED, "notifications/roots/list_changed", True, S.INITIALIZED),
        (S.READY, "notifications/initialized", False, S.READY),
        (S.READY, "acme/event", True, S.READY),
    ],
)
def test_notification_rules(
    state: HandshakeState, notification: str, delivered: bool, after: HandshakeState
) -> None:
    hs = machine_in(state)
    assert hs.receive_notification(notification) is delivered
    assert hs.state is after


def test_version_recorded_and_second_success_refused() -> None:
    assert ServerHandshake().protocol_version is None
    hs = ServerHandshake()
    hs.initialize_succeeded("2024-11-05")
    assert hs.protocol_version == "2024-11-05"
    with pytest.raises(LocalProtocolError):
        hs.initialize_succeeded("2025-11-25")


# -- the shared ready handshakes (a stateless HTTP POST's session uses one) ---------------

NOTIFICATIONS = ["notifications/initialized", "notifications/cancelled", "acme/changed"]


@pytest.mark.parametrize("version", sorted(READY_HANDSHAKES))
def test_no_message_moves_a_shared_ready_handshake(version: str) -> None:
    # What makes sharing one between sessions safe: nothing a session does changes it.
    shared = ready_handshake(version)
    assert shared is READY_HANDSHAKES[version]
    before = vars(shared).copy()
    for method in METHODS:
        error = shared.check_request(method)
        assert (error is None) == (method != "initialize")
    for method in NOTIFICATIONS:
        assert shared.receive_notification(method) == (method != "notifications/initialized")
    with pytest.raises(LocalProtocolError):
        shared.initialize_succeeded(version)
    with pytest.raises(LocalProtocolError):
        shared.assume_ready(version)
    assert vars(shared) == before
    assert (shared.state, shared.protocol_version) == (S.READY, version)


def test_ready_handshake_of_an_unknown_version_is_a_new_one() -> None:
    first, second = ready_handshake("2099-01-01"), ready_handshake("2099-01-01")
    assert first is not second
    assert (first.state, first.protocol_version) == (S.READY, "2099-01-01")
