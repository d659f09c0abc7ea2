"""Transports: thin adapters that move framed messages over real I/O.

Layer 3 of mcpkit. Each third-party I/O library is imported only in its transport module.
"""

from __future__ import annotations

from ..aio import MemoryChannel, memory_channel_pair
from ._stdio import FdChannel, claim_stdout, note_parent, stdio_channel, wait_parent_exit
from ._subprocess import ProcessChannel, StdioTransport

__all__ = [
    "FdChannel",
    "MemoryChannel",
    "ProcessChannel",
    "StdioTransport",
    "claim_stdout",
    "note_parent",
    "memory_channel_pair",
    "stdio_channel",
    "wait_parent_exit",
]
