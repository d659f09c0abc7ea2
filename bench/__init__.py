"""mcpkit's benchmark suite: ``python -m bench [codec|stdio|startup|profile] [--quick]``.

Side-by-side measurements of mcpkit, a bare msgspec/NDJSON floor, and the official MCP
Python SDK (``mcp``), reported as ratios. See ``bench/README.md``.
"""

from __future__ import annotations
