"""A request refused by DNS-rebinding protection is reported in the server's log, with
the setting that would allow it, once per refused value and for a bounded number of them.

Behind a reverse proxy or on a public name every request is refused (421 or 403) until the
operator lists the name; before, only the client heard why. Driven in process on all three
HTTP apps (Streamable HTTP, HTTP+SSE), each with its own policy.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import anyio
import httpx
import pytest

from mcpkit.server import Server, SSEApp

from ._mcphttp import ACCEPT_BOTH

pytestmark = pytest.mark.anyio

LIMIT: Final = 10.0
PING: Final = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "mcpkit.server.http" and r.levelno == logging.WARNING
    ]


def apps() -> dict[str, Any]:
    server = Server("guarded", "1.0")
    return {
        "streamable": (server.streamable_http_app(), "POST", "/mcp"),
        "sse": (SSEApp(server), "GET", "/sse"),
    }


async def send(app: Any, method: str, path: str, **headers: str) -> int:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, timeout=LIMIT) as client:
        base = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        response = await client.request(
            method, "http://127.0.0.1" + path, content=PING, headers={**base, **headers}
        )
        return response.status_code


@pytest.mark.parametrize("kind", ["streamable", "sse"])
async def test_a_refused_host_is_logged_once_with_the_setting(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.server.http")
    app, method, path = apps()[kind]
    with anyio.fail_after(LIMIT):
        for _ in range(3):
            assert await send(app, method, path, host="api.example.com") == 421
    [line] = warnings_of(caplog)
    assert "refused a request with host 'api.example.com'" in line
    assert "allowed: localhost, 127.0.0.1, [::1]" in line
    assert "allowed_hosts=[...]" in line
    assert "--allow-host" in line
    # An allowed request logs nothing; a refused Origin is reported the same way.
    caplog.clear()
    with anyio.fail_after(LIMIT):
        # (a POST: on the SSE app's stream path that is a quick 405, not a stream)
        assert await send(app, "POST", path, host="127.0.0.1") not in (403, 421)
        assert await send(app, method, path, origin="https://evil.example.com") == 403
        assert await send(app, method, path, origin="https://evil.example.com") == 403
    [line] = warnings_of(caplog)
    assert "refused a request with origin 'https://evil.example.com'" in line
    assert "allowed_origins=[...]" in line
    assert "--allow-origin" in line


async def test_a_scan_of_many_hosts_logs_a_bounded_number_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.server.http")
    app, method, path = apps()["streamable"]
    with anyio.fail_after(LIMIT):
        for i in range(app.security.report_limit + 20):
            assert await send(app, method, path, host=f"h{i}.example.com") == 421
    lines = warnings_of(caplog)
    assert len(lines) == app.security.report_limit == 32
    assert lines[-1].endswith("; further refusals are not logged")
    assert not any(line.endswith("not logged") for line in lines[:-1])
    # Another app (another policy) still reports its own.
    caplog.clear()
    other, method, path = apps()["streamable"]
    with anyio.fail_after(LIMIT):
        assert await send(other, method, path, host="h0.example.com") == 421
    assert len(warnings_of(caplog)) == 1
