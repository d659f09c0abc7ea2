"""Roots: ``roots/list`` (``client/roots.mdx``).

The client exposes filesystem roots to the server. In the handshake era the server sends
``roots/list``; in 2026-07-28 it is an input request of a multi round-trip request.
"""

from __future__ import annotations

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field
from ._common import Result

__all__ = ["ListRootsResult", "Root"]


class Root(WireModel, kw_only=True):
    """A root directory or file the server may operate on (``uri`` is a ``file://`` URI)."""

    uri: str
    name: str | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ListRootsResult(Result, kw_only=True):
    """``roots/list`` result."""

    roots: list[Root]
