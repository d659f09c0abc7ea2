"""Cutting list results into pages with opaque cursors (``server/utilities/pagination.mdx``).

A cursor names the list it belongs to and the offset of its page, base64-encoded: a
server answers only the cursors it could have handed out, so a client cannot page from
an arbitrary offset, nor use one list's cursor on another.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypeVar

import msgspec

from ..exceptions import RPCError

__all__ = ["page_of"]

P = TypeVar("P")


def page_of(
    items: Sequence[P], cursor: str | msgspec.UnsetType, kind: str, page_size: int | None
) -> tuple[list[P], str | None]:
    """The page of ``items`` a cursor names (absent: the first) and the next page's
    cursor (``None`` on the last page); ``kind`` names the list.

    Raises:
        RPCError: -32602 for a cursor this server did not hand out: of another list, not
            in the form it issues, or for an offset it never gives (not a page boundary,
            or past the end).
    """
    start = 0
    if isinstance(cursor, str):
        start = _offset_of(cursor, kind, len(items), page_size)
    if page_size is None:
        return list(items[start:]), None
    end = start + page_size
    return list(items[start:end]), _cursor(kind, end) if end < len(items) else None


def _offset_of(cursor: str, kind: str, count: int, page_size: int | None) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
    except (ValueError, UnicodeError):
        raise RPCError.invalid_params("Invalid cursor") from None
    listed, _, digits = text.rpartition("#")
    offset = int(digits) if digits.isascii() and digits.isdigit() else -1
    if (
        listed != kind
        or _cursor(kind, offset) != cursor  # only the form this server issues
        or not 0 < offset <= count
        or (page_size is not None and offset % page_size)
    ):
        raise RPCError.invalid_params("Invalid cursor")
    return offset


def _cursor(kind: str, offset: int) -> str:
    """The cursor of the page starting at ``offset`` of the list ``kind``."""
    return base64.urlsafe_b64encode(f"{kind}#{offset}".encode("ascii")).decode("ascii")
