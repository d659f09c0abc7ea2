"""Prompts: ``prompts/list`` and ``prompts/get`` (``server/prompts.mdx``)."""

from __future__ import annotations

from ._base import UNSET, Meta, UnsetType, WireModel, meta_field
from ._common import Icon, Result, Role
from ._content import ContentBlock
from ._discovery import CacheScope, InputResponseRequestParams

__all__ = [
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(WireModel, kw_only=True):
    """An argument a prompt template accepts."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(WireModel, kw_only=True):
    """A prompt template as listed by ``prompts/list``."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: Meta | UnsetType = meta_field()


class PromptMessage(WireModel, kw_only=True):
    """One message of a prompt: a role and a single content block."""

    role: Role
    content: ContentBlock


class ListPromptsResult(Result, kw_only=True):
    """``prompts/list`` result: one page of prompts (cacheable in 2026-07-28)."""

    prompts: list[Prompt]
    next_cursor: str | UnsetType = UNSET
    ttl_ms: int | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET


class GetPromptRequestParams(InputResponseRequestParams, kw_only=True):
    """``prompts/get`` params: the prompt's name and its string arguments."""

    name: str
    arguments: dict[str, str] | UnsetType = UNSET


class GetPromptResult(Result, kw_only=True):
    """``prompts/get`` result: the rendered messages."""

    messages: list[PromptMessage]
    description: str | UnsetType = UNSET
