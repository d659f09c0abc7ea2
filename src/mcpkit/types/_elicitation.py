"""Elicitation: ``elicitation/create`` and ``notifications/elicitation/complete``
(``client/elicitation.mdx``, 2025-06-18+).

The spec splits the params into ``ElicitRequestFormParams`` (``mode`` absent or ``"form"``,
``requestedSchema``) and ``ElicitRequestURLParams`` (``mode: "url"``, ``url``, and in
2025-11-25 ``elicitationId``). One struct carries both modes and checks the members each
mode requires. ``requested_schema`` is a JSON Schema object kept exactly as given.
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import UNSET, UnsetType
from ._common import NotificationParams, RequestParams, Result

__all__ = [
    "ElicitAction",
    "ElicitContentValue",
    "ElicitRequestParams",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "ElicitationMode",
]

ElicitationMode = Literal["form", "url"]
#: The user's answer: submitted (``accept``), refused (``decline``) or dismissed (``cancel``).
ElicitAction = Literal["accept", "decline", "cancel"]
#: A submitted form value; ``list[str]`` (multi-select) is 2025-11-25+.
ElicitContentValue = str | int | float | bool | list[str]


class ElicitRequestParams(RequestParams, kw_only=True):
    """``elicitation/create`` params, form mode or URL mode.

    Raises:
        ValueError: URL mode without ``url``, or form mode (``mode`` absent or ``"form"``)
            without ``requested_schema``.
    """

    message: str
    mode: ElicitationMode | UnsetType = UNSET
    requested_schema: dict[str, Any] | UnsetType = UNSET
    url: str | UnsetType = UNSET
    elicitation_id: str | UnsetType = UNSET
    task: dict[str, Any] | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.mode == "url":
            if self.url is UNSET:
                raise ValueError("URL-mode elicitation needs `url`")
        elif self.requested_schema is UNSET:
            raise ValueError("form-mode elicitation needs `requestedSchema`")


class ElicitResult(Result, kw_only=True):
    """``elicitation/create`` result; ``content`` only when a form was accepted."""

    action: ElicitAction
    content: dict[str, ElicitContentValue] | UnsetType = UNSET


class ElicitationCompleteNotificationParams(NotificationParams, kw_only=True):
    """``notifications/elicitation/complete``: a URL-mode elicitation finished
    (2025-11-25 only)."""

    elicitation_id: str
