"""The client's answers as the negotiated revision defines them.

A callback writes one answer for every revision (the wire types are a superset); what a
server of an older revision cannot read is adapted here, or refused with -32603 when
adapting would change its meaning, so that every answer validates against the negotiated
revision's schema (``client/sampling.mdx``, ``client/elicitation.mdx``,
``client/roots.mdx`` of each revision).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import msgspec
from msgspec import UNSET

from ..exceptions import RPCError
from ..types import (
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    AudioContent,
    CreateMessageResult,
    ElicitResult,
    ErrorCode,
    ImageContent,
    Root,
    TextContent,
)
from ..types._revisions import block_for

__all__ = ["elicit_answer_for", "roots_for", "sampling_answer_for"]

logger = logging.getLogger("mcpkit.client")
_replace = msgspec.structs.replace


def _refuse(what: str, why: str) -> RPCError:
    logger.error("the %s callback's result cannot be sent: %s", what, why)
    return RPCError(ErrorCode.INTERNAL_ERROR, f"Internal error: the client's {what} result {why}")


def sampling_answer_for(version: str, result: CreateMessageResult) -> CreateMessageResult:
    """A sampling result a server of ``version`` can read: one content block before
    2025-11-25 (a list of one is unwrapped), no audio before 2025-03-26, no ``_meta`` or
    ``lastModified`` on the block before 2025-06-18.

    Raises:
        RPCError: -32603 when the result cannot be expressed in ``version``.
    """
    if version >= V2025_11_25:
        return result
    content = result.content
    if isinstance(content, list):
        if len(content) != 1:
            raise _refuse("sampling", f"has {len(content)} content blocks; {version} allows one")
        content = content[0]
    if not isinstance(content, (TextContent, ImageContent, AudioContent)):
        kind = type(content).__name__
        raise _refuse("sampling", f"holds {kind}, which protocol {version} does not define")
    if isinstance(content, AudioContent) and version < V2025_03_26:
        raise _refuse("sampling", f"holds audio, which protocol {version} does not define")
    return _replace(result, content=block_for(version, content))


def elicit_answer_for(version: str, result: ElicitResult) -> ElicitResult:
    """An elicitation result a server of ``version`` can read: string arrays (multiple
    choice) arrived in 2025-11-25.

    Raises:
        RPCError: -32603 when a value is a list before 2025-11-25.
    """
    if version >= V2025_11_25 or result.content is UNSET:
        return result
    lists = [name for name, value in result.content.items() if isinstance(value, list)]
    if lists:
        raise _refuse(
            "elicitation", f"has list values ({', '.join(lists)}), which {version} does not define"
        )
    return result


def roots_for(version: str, roots: Sequence[Root]) -> list[Root]:
    """Roots without ``_meta`` before 2025-06-18, which added it."""
    if version >= V2025_06_18:
        return list(roots)
    return [root if root.meta is UNSET else _replace(root, meta=UNSET) for root in roots]
