"""Argument completion: ``completion/complete`` (``server/utilities/completion.mdx``).

The reference is a tagged union on ``type``: ``ref/prompt`` or ``ref/resource`` (named
``ResourceReference`` before 2025-06-18, ``ResourceTemplateReference`` since; same wire
shape).
"""

from __future__ import annotations

from ._base import UNSET, UnsetType, WireModel
from ._common import RequestParams, Result

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceTemplateReference",
]


class _Reference(WireModel, kw_only=True, tag_field="type"):
    """Base of the completion references (tagged on ``type``)."""


class PromptReference(_Reference, tag="ref/prompt", kw_only=True):
    """Completes an argument of the prompt ``name``."""

    name: str
    title: str | UnsetType = UNSET


class ResourceTemplateReference(_Reference, tag="ref/resource", kw_only=True):
    """Completes a variable of the resource template ``uri`` (an RFC 6570 template)."""

    uri: str


CompletionReference = PromptReference | ResourceTemplateReference


class CompletionArgument(WireModel, kw_only=True):
    """The argument being completed and its partial value."""

    name: str
    value: str


class CompletionContext(WireModel, kw_only=True):
    """Already-resolved arguments that narrow the completion (2025-06-18+)."""

    arguments: dict[str, str] | UnsetType = UNSET


class CompleteRequestParams(RequestParams, kw_only=True):
    """``completion/complete`` params."""

    ref: CompletionReference
    argument: CompletionArgument
    context: CompletionContext | UnsetType = UNSET


class Completion(WireModel, kw_only=True):
    """Completion values (at most 100), the total available and whether more exist."""

    values: list[str]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class CompleteResult(Result, kw_only=True):
    """``completion/complete`` result."""

    completion: Completion
