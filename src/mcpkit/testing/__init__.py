"""Test helpers: connect a client to a server in the same process.

The only module allowed to import both :mod:`mcpkit.server` and :mod:`mcpkit.client`;
nothing else in mcpkit imports it.
"""

from __future__ import annotations

from ._memory import connect_memory

__all__ = ["connect_memory"]
