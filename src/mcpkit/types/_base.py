"""Base class and helpers shared by every wire struct.

Every MCP message shape is a :class:`WireModel`: a msgspec ``Struct`` that is keyword-only,
uses snake_case attributes with camelCase wire names (``rename="camel"``), and omits fields
that still hold their default when encoded. Optional wire members default to
:data:`msgspec.UNSET`, which keeps "absent" distinct from an explicit ``null``.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["UNSET", "Meta", "UnsetType", "WireModel", "meta_field"]

#: The ``_meta`` member: an open object whose keys follow the spec's ``_meta`` key grammar.
Meta = dict[str, Any]


class WireModel(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of every wire struct: keyword-only, camelCase on the wire, defaults omitted.

    Unknown members are ignored when decoding so that messages from newer revisions still
    decode; the members that matter to the protocol are declared explicitly.
    """


def meta_field() -> Any:
    """Return the field definition of a ``_meta`` member (absent unless set)."""
    return msgspec.field(default=UNSET, name="_meta")
