"""The questions a handler can build (sampling, elicitation, roots) as input requests,
the same in both eras; :class:`~mcpkit.server._asking.Asking` asks them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from msgspec import UNSET

from ..exceptions import RemoteProtocolError
from ..protocol import compile_schema
from ..types import (
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    IncludeContext,
    ListRootsResult,
    ModelPreferences,
    Root,
    SamplingMessage,
    TextContent,
    Tool,
    ToolChoice,
)
from ..types._echo import one_line
from ._inputs import InputRequest, same

if TYPE_CHECKING:
    from ._modern import ModernRequest
    from ._session import ServerSession

__all__ = ["Elicitation", "InputBuilders"]

T = TypeVar("T")


@dataclass(frozen=True)
class Elicitation(Generic[T]):
    """The user's answer to a form-mode elicitation.

    Attributes:
        action: "accept" (``data`` holds the answer), "decline" or "cancel".
        data: the answer converted to the requested type (a dict for a raw schema), or
            ``None`` unless accepted.
    """

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class InputBuilders:
    """Building the questions a handler may ask the client (a part of ``Asking``)."""

    __slots__ = ()

    if TYPE_CHECKING:
        modern: ModernRequest | None

        @property
        def protocol_version(self) -> str | None: ...

    def sampling(
        self,
        messages: str | Sequence[SamplingMessage | str],
        *,
        key: str | None = None,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | None = None,
        include_context: IncludeContext | None = None,
        tools: Sequence[Tool] | None = None,
        tool_choice: ToolChoice | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> InputRequest[CreateMessageResult]:
        """A request for a completion by the client's model, to pass to :meth:`ask`
        (``messages``: plain text for one user message, or a list of messages and texts)."""
        from ._peer import create_message

        if isinstance(messages, str):
            messages = [messages]
        params = CreateMessageRequestParams(
            messages=[
                SamplingMessage(role="user", content=TextContent(text=m))
                if isinstance(m, str)
                else m
                for m in messages
            ],
            max_tokens=max_tokens,
            system_prompt=UNSET if system_prompt is None else system_prompt,
            temperature=UNSET if temperature is None else temperature,
            stop_sequences=UNSET if stop_sequences is None else list(stop_sequences),
            model_preferences=UNSET if model_preferences is None else model_preferences,
            include_context=UNSET if include_context is None else include_context,
            tools=UNSET if tools is None else list(tools),
            tool_choice=UNSET if tool_choice is None else tool_choice,
            metadata=UNSET if metadata is None else dict(metadata),
        )
        with_tools = tools is not None or tool_choice is not None

        def missing(caps: ClientCapabilities) -> tuple[str, Any] | None:
            declared = caps.sampling
            if declared is UNSET:
                return ("sampling", None)
            if with_tools and "tools" not in declared:
                return ("sampling", {"tools": {}})
            if include_context not in (None, "none") and "context" not in declared:
                return ("sampling", {"context": {}})
            return None

        return InputRequest(
            "sampling/createMessage",
            params,
            key,
            missing,
            lambda session, timeout: create_message(session, params, timeout=timeout),
            CreateMessageResult,
            same,
        )

    def elicitation(
        self, message: str, schema: Any, *, key: str | None = None
    ) -> InputRequest[Elicitation[Any]]:
        """A form for the user to fill in, to pass to :meth:`ask` (see :meth:`elicit`)."""
        from ._elicit_schema import answer_as, check_form, form_for, requested_schema
        from ._peer import elicit

        raw = isinstance(schema, Mapping)
        # A typed form is adapted to the client's revision; a raw schema is checked, then
        # sent as given.
        requested = (
            check_form(schema)
            if raw
            else form_for(self.protocol_version or "", requested_schema(schema))
        )
        params = ElicitRequestParams(message=message, requested_schema=requested)
        # "Servers SHOULD validate received data matches the requested schema"
        # (client/elicitation.mdx 2025-06-18 on, "Security Considerations"): a typed form
        # by converting the answer to its type, a raw one against the schema itself.
        validator = compile_schema(dict(requested)) if raw else None

        def finish(result: ElicitResult) -> Elicitation[Any]:
            if result.action != "accept":
                return Elicitation(result.action)
            content = {} if result.content is UNSET else dict(result.content)
            if validator is None:
                return Elicitation("accept", answer_as(content, schema))
            if not validator.is_valid(content):
                detail = "; ".join(e.message for e in validator.errors(content, limit=3))
                raise RemoteProtocolError(
                    "the client's elicitation answer does not match the requested form: "
                    f"{one_line(detail)}"
                )
            return Elicitation("accept", content)

        def missing(caps: ClientCapabilities) -> tuple[str, Any] | None:
            declared = caps.elicitation
            if declared is UNSET:
                return ("elicitation", None)
            # An empty object means form mode only; otherwise form must be listed.
            return ("elicitation", {"form": {}}) if declared and "form" not in declared else None

        return InputRequest(
            "elicitation/create",
            params,
            key,
            missing,
            lambda session, timeout: elicit(session, params, timeout=timeout),
            ElicitResult,
            finish,
        )

    def elicitation_url(
        self, message: str, url: str, *, key: str | None = None, elicitation_id: str | None = None
    ) -> InputRequest[ElicitResult]:
        """A URL to send the user to, to pass to :meth:`ask` (see :meth:`elicit_url`)."""
        import secrets

        from ._peer import elicit

        if self.modern is None:
            elicitation_id = elicitation_id or secrets.token_urlsafe(16)
        params = ElicitRequestParams(
            mode="url",
            message=message,
            url=url,
            # 2026-07-28 URL mode has no id and no completion notification (mrtr.mdx).
            elicitation_id=UNSET if self.modern is not None else elicitation_id or UNSET,
        )

        def missing(caps: ClientCapabilities) -> tuple[str, Any] | None:
            declared = caps.elicitation
            if declared is UNSET or "url" not in declared:
                return ("elicitation", {"url": {}})
            return None

        return InputRequest(
            "elicitation/create",
            params,
            key,
            missing,
            lambda session, timeout: elicit(session, params, timeout=timeout),
            ElicitResult,
            same,
        )

    def roots(self, *, key: str | None = None) -> InputRequest[list[Root]]:
        """A request for the client's roots, to pass to :meth:`ask`."""
        from ._peer import list_roots

        async def push(session: ServerSession, timeout: float | None) -> ListRootsResult:
            return await list_roots(session, timeout=timeout)

        return InputRequest(
            "roots/list",
            UNSET,
            key,
            lambda caps: ("roots", None) if caps.roots is UNSET else None,
            push,
            ListRootsResult,
            lambda result: list(result.roots),
        )
