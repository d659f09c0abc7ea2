"""The ``mcpkit`` command line. Layer 5.

``mcpkit run FILE.py[:OBJECT]`` serves the server object defined in a Python file (default
object name ``server``) over stdio.
"""

from __future__ import annotations

from ._main import main

__all__ = ["main"]
