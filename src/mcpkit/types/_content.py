"""Content blocks: what tools return and prompts contain.

Content blocks are a msgspec tagged union on ``type`` (``text``, ``image``, ``audio``,
``resource_link``, ``resource``), so decoding picks the right struct in one pass.
"""

from __future__ import annotations

import msgspec

from ._base import UNSET, Meta, UnsetType, meta_field
from ._common import Annotations, Icon

__all__ = [
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
]


class _Block(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel", tag_field="type"):
    """Base of the content blocks (tagged on ``type``)."""


class TextContent(_Block, tag="text", kw_only=True):
    """Plain text."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ImageContent(_Block, tag="image", kw_only=True):
    """A base64-encoded image with its MIME type."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class AudioContent(_Block, tag="audio", kw_only=True):
    """Base64-encoded audio with its MIME type (2025-03-26+)."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ResourceLink(_Block, tag="resource_link", kw_only=True):
    """A link to a resource the client may read (2025-06-18+)."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class ResourceContents(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """The contents of a resource: exactly one of ``text`` or ``blob`` (base64).

    The spec names the two shapes ``TextResourceContents`` and ``BlobResourceContents``;
    they differ only in which of the two members is present, so one struct carries both
    and checks that exactly one is set.

    Raises:
        ValueError: neither or both of ``text`` and ``blob`` are set.
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()

    def __post_init__(self) -> None:
        if (self.text is UNSET) == (self.blob is UNSET):
            raise ValueError("resource contents need exactly one of `text` or `blob`")


class EmbeddedResource(_Block, tag="resource", kw_only=True):
    """A resource's contents embedded in a message."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
