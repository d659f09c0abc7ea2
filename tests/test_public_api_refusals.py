"""Misuse of the public API is refused the way its docstrings say: the documented
exception type, at the call, with the reason (not a library's own exception, not a
silent acceptance that fails later)."""

from __future__ import annotations

import pytest

from mcpkit.exceptions import LocalProtocolError, TransportError
from mcpkit.server import Server
from mcpkit.transports import WebSocketTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    "uri", ["notes://{id", "notes://{}", "notes://{a b}", "notes://id}", "notes://{+}"]
)
def test_an_invalid_resource_template_is_refused(uri: str) -> None:
    server = Server("t", "1")
    with pytest.raises(LocalProtocolError, match="template"):
        server.resource(uri)(lambda: "body")


def test_a_valid_template_and_a_plain_uri_are_taken() -> None:
    server = Server("t", "1")

    @server.resource("notes://{id}")
    def note(id: str) -> str:
        return id

    @server.resource("notes://index")
    def index() -> str:
        return "index"


@pytest.mark.parametrize("option", [{"bogus": 1}, {"path": "no-slash"}, {"max_sessions": 0}])
def test_streamable_http_app_refuses_an_invalid_option(option: dict[str, object]) -> None:
    with pytest.raises(LocalProtocolError):
        Server("t", "1").streamable_http_app(**option)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/ws", "ws://", "ws://127.0.0.1:99999/ws", "not a url"]
)
async def test_a_malformed_websocket_url_is_a_transport_error(url: str) -> None:
    with pytest.raises(TransportError, match="cannot open a WebSocket"):
        async with WebSocketTransport(url).connect():
            pass
