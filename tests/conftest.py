"""Shared fixtures: every async test runs on asyncio and on trio; the scripted fake HTTP peer."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from ._fake_mcp_http import FakeMCPServer
from ._httpserver import running_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per backend."""
    return str(request.param)


def needs_websocket_client(backend: str) -> None:
    """Skip a test of the WebSocket client on trio under Python 3.10: websockets' trio
    client came with websockets 17, which needs Python 3.11."""
    if backend == "trio" and sys.version_info < (3, 11):
        pytest.skip("websockets' trio client needs websockets >= 17, which needs Python 3.11+")


@pytest.fixture
def websocket_client(anyio_backend: str) -> None:
    """:func:`needs_websocket_client` for ``@pytest.mark.usefixtures``."""
    needs_websocket_client(anyio_backend)


@pytest.fixture
def echo_server_argv() -> list[str]:
    """The command that serves ``examples/echo.py`` over stdio with ``mcpkit run``."""
    return [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py")]


def load_module(path: os.PathLike[str], name: str) -> Iterator[ModuleType]:
    """Import the file ``path`` afresh as module ``name`` (its own state, e.g. a server of
    ``examples/``) for the duration of a fixture: ``yield from load_module(...)``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[name]


@pytest.fixture(scope="module")
def scripted_server() -> Iterator[tuple[FakeMCPServer, str]]:
    """The scripted fake Streamable HTTP peer (tests/_fake_mcp_http.py) on 127.0.0.1, one
    per test module, and its endpoint URL."""
    fake = FakeMCPServer()
    with running_server(fake) as server:
        yield fake, server.url + "/mcp"


@pytest.fixture
def scripted_peer(scripted_server: tuple[FakeMCPServer, str]) -> tuple[FakeMCPServer, str]:
    """:func:`scripted_server`, its scripts and records reset for this test."""
    scripted_server[0].reset()
    return scripted_server
