"""Values as an older revision can read them: one place for both sides of a session.

mcpkit's wire types are one superset of every revision (docs/design.md section 1). A
member a revision does not define is left out of what is sent to a peer of that revision,
and a content kind it does not know is replaced, so that every message validates against
the negotiated revision's schema. The server's result adapters build on these
(``server/_compat.py``); the client uses them for what it sends and answers.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET

from ._common import Implementation
from ._content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from ._versions import V2025_03_26, V2025_06_18, V2025_11_25

__all__ = ["block_for", "contents_for", "implementation_for"]

_replace = msgspec.structs.replace


def contents_for(version: str, contents: ResourceContents) -> ResourceContents:
    """Resource contents without ``_meta`` before 2025-06-18, which added it."""
    if version >= V2025_06_18 or contents.meta is UNSET:
        return contents
    return _replace(contents, meta=UNSET)


def block_for(version: str, block: ContentBlock) -> ContentBlock:
    """A content block as a peer of ``version`` can read it: audio (2025-03-26) and
    resource links (2025-06-18) become a text saying what was left out; ``_meta`` and
    ``annotations.lastModified`` (2025-06-18) and a link's ``icons`` (2025-11-25) go."""
    if isinstance(block, AudioContent) and version < V2025_03_26:
        # Say what was left out instead of dropping it.
        return TextContent(
            text=f"[audio content ({block.mime_type}) not shown: the client "
            f"speaks protocol {version}]"
        )
    if isinstance(block, ResourceLink) and version < V2025_06_18:
        title = block.title if isinstance(block.title, str) else block.name
        return TextContent(text=f"[resource: {title} <{block.uri}>]")
    if isinstance(block, ResourceLink) and block.icons is not UNSET and version < V2025_11_25:
        block = _replace(block, icons=UNSET)
    if version < V2025_06_18 and block.meta is not UNSET:
        block = _replace(block, meta=UNSET)
    if isinstance(block, EmbeddedResource) and version < V2025_06_18:
        block = _replace(block, resource=contents_for(version, block.resource))
    if isinstance(block, (TextContent, ImageContent, AudioContent, EmbeddedResource)) and (
        block.annotations is not UNSET
        and block.annotations.last_modified is not UNSET
        and version < V2025_06_18
    ):
        block = _replace(block, annotations=_replace(block.annotations, last_modified=UNSET))
    return block


def implementation_for(version: str, info: Implementation) -> Implementation:
    """``serverInfo`` / ``clientInfo`` without members newer than ``version`` (``title``
    arrived in 2025-06-18; ``description``, ``icons`` and ``websiteUrl`` in 2025-11-25)."""
    if version >= V2025_11_25:
        return info
    changes: dict[str, object] = {"description": UNSET, "icons": UNSET, "website_url": UNSET}
    if version < V2025_06_18:
        changes["title"] = UNSET
    return _replace(info, **changes)
