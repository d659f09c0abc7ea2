"""Shared fixtures: every async test runs on asyncio and on trio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per backend."""
    return str(request.param)


@pytest.fixture
def echo_server_argv() -> list[str]:
    """The command that serves ``examples/echo.py`` over stdio with ``mcpkit run``."""
    return [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "echo.py")]
