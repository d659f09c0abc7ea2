"""Protocol revisions and the version negotiation rule.

MCP revisions are date strings. The handshake era (2024-11-05 ... 2025-11-25) negotiates one
version per connection in ``initialize`` (``basic/lifecycle.mdx`` section "Version
Negotiation"); 2026-07-28 carries the version on every request instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = [
    "ALL_VERSIONS",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "V2024_11_05",
    "V2025_03_26",
    "V2025_06_18",
    "V2025_11_25",
    "V2026_07_28",
    "negotiate_version",
]

V2024_11_05: Final = "2024-11-05"
V2025_03_26: Final = "2025-03-26"
V2025_06_18: Final = "2025-06-18"
V2025_11_25: Final = "2025-11-25"
V2026_07_28: Final = "2026-07-28"

#: Revisions negotiated with ``initialize``, oldest first.
HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
#: Every revision mcpkit knows, oldest first.
ALL_VERSIONS: Final[tuple[str, ...]] = (*HANDSHAKE_VERSIONS, V2026_07_28)
LATEST_HANDSHAKE_VERSION: Final = V2025_11_25


def negotiate_version(requested: str, supported: Sequence[str]) -> str:
    """Choose the version a server answers ``initialize`` with.

    The server answers with the requested version when it supports it, otherwise with the
    latest version it supports (``basic/lifecycle.mdx``, "Version Negotiation"). The client
    then decides whether it can speak the answer.

    Raises:
        ValueError: ``supported`` is empty.
    """
    if not supported:
        raise ValueError("a server must support at least one protocol version")
    if requested in supported:
        return requested
    return max(supported)
