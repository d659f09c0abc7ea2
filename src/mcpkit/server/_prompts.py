"""Prompts defined by plain Python functions (``server/prompts.mdx``).

A prompt's arguments are the function's parameters (strings on the wire, converted to
the annotated types); required arguments are checked before the function runs. The
function returns text, content blocks, :class:`PromptMessage` s (or dicts of their wire
form, ``{"role": ..., "content": {...}}``), a list of those, or a whole
:class:`GetPromptResult`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET

from ..aio import run_in_worker
from ..exceptions import LocalProtocolError, RPCError
from ..types import (
    AudioContent,
    EmbeddedResource,
    ErrorCode,
    GetPromptResult,
    Icon,
    ImageContent,
    Meta,
    Prompt,
    PromptArgument,
    PromptMessage,
    ResourceLink,
    TextContent,
)
from ..types._echo import one_line, peer_text
from ._callables import refuse_unnamed_lambda
from ._context import RequestContext
from ._signature import ArgumentError, FunctionSchema, function_schema

__all__ = ["PromptRegistry", "to_messages"]

_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


@dataclass
class _Entry:
    prompt: Prompt
    fn: Callable[..., Any]
    schema: FunctionSchema


class PromptRegistry:
    """The prompts of a server, in registration order."""

    def __init__(self) -> None:
        self._prompts: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._prompts)

    def definitions(self) -> list[Prompt]:
        return [entry.prompt for entry in self._prompts.values()]

    def names(self) -> list[str]:
        return list(self._prompts)

    def add(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon] | None = None,
        meta: Meta | None = None,
    ) -> Prompt:
        """Register ``fn`` as a prompt (see :meth:`Server.prompt`).

        Raises:
            LocalProtocolError: the name is taken or the signature cannot be described.
        """
        refuse_unnamed_lambda(fn, name)
        schema = function_schema(fn, name=name, description=description, strict=False)
        arguments = [
            PromptArgument(
                name=p.name,
                description=UNSET if p.description is None else p.description,
                required=p.required,
            )
            for p in schema.parameters
        ]
        prompt = Prompt(
            name=schema.name,
            title=UNSET if title is None else title,
            description=UNSET if schema.description is None else schema.description,
            arguments=arguments or UNSET,
            icons=UNSET if icons is None else list(icons),
            meta=UNSET if meta is None else dict(meta),
        )
        if prompt.name in self._prompts:
            raise LocalProtocolError(f"a prompt named {prompt.name!r} is already registered")
        self._prompts[prompt.name] = _Entry(prompt, fn, schema)
        return prompt

    def remove(self, name: str) -> bool:
        """Unregister a prompt; returns whether it existed."""
        return self._prompts.pop(name, None) is not None

    def arguments_of(self, name: str) -> list[str] | None:
        """The argument names of a prompt, or ``None`` if there is no such prompt."""
        entry = self._prompts.get(name)
        return None if entry is None else [p.name for p in entry.schema.parameters]

    async def get(
        self, ctx: RequestContext, name: str, arguments: Mapping[str, str]
    ) -> GetPromptResult:
        """Render a prompt.

        Raises:
            RPCError: -32602 for an unknown prompt or missing/invalid arguments.
        """
        entry = self._prompts.get(name)
        if entry is None:
            raise RPCError.invalid_params(f"Unknown prompt: {peer_text(name)}")
        missing = [
            p.name for p in entry.schema.parameters if p.required and p.name not in arguments
        ]
        if missing:
            names = ", ".join(repr(m) for m in missing)
            raise RPCError.invalid_params(
                f"Missing required arguments for prompt {peer_text(name)}: {names}"
            )
        try:
            kwargs = entry.schema.bind(arguments)
        except ArgumentError as exc:
            raise RPCError.invalid_params(
                f"Invalid arguments for prompt {peer_text(name)}: {one_line(exc.detail)}"
            ) from None
        if entry.schema.context_param is not None:
            kwargs[entry.schema.context_param] = ctx
        if entry.schema.is_async:
            value = await entry.fn(**kwargs)
        else:
            value = await run_in_worker(functools.partial(entry.fn, **kwargs))
        if isinstance(value, GetPromptResult):
            return value
        description = entry.prompt.description
        return GetPromptResult(messages=to_messages(value), description=description)


def to_messages(value: Any) -> list[PromptMessage]:
    """Turn a prompt function's return value into messages (text and bare content blocks
    become user messages; a dict is read as a message's wire form).

    Raises:
        RPCError: -32603 for a value of another kind, or a dict that is not a message.
    """
    if isinstance(value, PromptMessage):
        return [value]
    if isinstance(value, str):
        return [PromptMessage(role="user", content=TextContent(text=value))]
    if isinstance(value, _BLOCKS):
        return [PromptMessage(role="user", content=value)]
    if isinstance(value, dict):
        try:
            return [msgspec.convert(value, PromptMessage)]
        except msgspec.ValidationError as exc:
            raise _not_messages(f"a dict that is not a prompt message ({exc})") from None
    if isinstance(value, (list, tuple)):
        messages: list[PromptMessage] = []
        for item in value:
            messages.extend(to_messages(item))
        return messages
    raise _not_messages(type(value).__name__)


def _not_messages(what: str) -> RPCError:
    return RPCError(
        ErrorCode.INTERNAL_ERROR,
        f"Internal error: the prompt function returned {what}; it returns text, content, "
        "prompt messages or a GetPromptResult",
    )
