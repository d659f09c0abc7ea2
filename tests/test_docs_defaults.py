"""The defaults the README states for ``server.streamable_http_app()`` are the code's: a
README sentence that drifts from the defaults fails here (the sentence is read from the
README itself, so editing either side alone breaks the test)."""

from __future__ import annotations

import re
from pathlib import Path

from mcpkit import Server
from mcpkit.aio import MemoryEventStore

README = Path(__file__).resolve().parent.parent / "README.md"


def _sentence() -> str:
    text = " ".join(README.read_text(encoding="utf-8").split())
    found = re.search(r"Its defaults: (.*?)\. `SSEApp`", text)
    assert found, "the README's sentence on the HTTP app's defaults"
    return found.group(1)


def _stated(pattern: str, sentence: str) -> str:
    found = re.search(pattern, sentence)
    assert found, (pattern, sentence)
    return found.group(1)


def test_readme_states_the_http_app_defaults() -> None:
    stated = _sentence()
    app = Server("defaults").streamable_http_app()
    assert _stated(r"path `([^`]+)`", stated) == app.path
    assert int(_stated(r"([\d,]+) sessions at most", stated).replace(",", "")) == app.max_sessions
    assert "replaces one idle for a minute or more" in stated
    assert app.session_evict_after == 60
    assert int(_stated(r"(\d+) minutes idle timeout", stated)) * 60 == app.session_idle_timeout
    alone = _stated(r"([\d,]+) requests that\s+stand alone", stated).replace(",", "")
    assert int(alone) == app.max_stateless_requests
    assert int(_stated(r"(\d+) MiB bodies", stated)) * 1024 * 1024 == app.max_body_bytes
    # "Host/Origin allowlist of loopback names"
    assert "allowlist of loopback names" in stated
    assert set(app.security.allowed_hosts) == {"localhost", "127.0.0.1", "[::1]"}
    # "an in-memory event store for resumption (bounded ...)"
    assert "in-memory event store" in stated
    assert isinstance(app.event_store, MemoryEventStore)
