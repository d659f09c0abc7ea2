"""The three stdio servers under comparison and how to start them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

__all__ = ["ECHO_TEXT", "ROOT", "SERVERS", "expected_result_bytes"]

ROOT: Final = Path(__file__).resolve().parent.parent
_PY: Final = sys.executable

#: name -> command line (run with the repository root as working directory).
SERVERS: Final[dict[str, list[str]]] = {
    "mcpkit": [_PY, "-m", "mcpkit", "run", "examples/echo.py"],
    "mcp": [_PY, str(ROOT / "bench" / "official_echo_server.py")],
    "bare": [_PY, str(ROOT / "bench" / "bare_echo_server.py")],
}

#: The text every benchmark call echoes (the bare server answers it without reading it).
ECHO_TEXT: Final = "hello, world"


def expected_result_bytes(server: str) -> bytes | None:
    """What every result of ``server`` must contain; the bare floor answers a fixed text
    without reading the request, so only its success and id are checked."""
    return b'"' + ECHO_TEXT.encode() + b'"' if server != "bare" else None
