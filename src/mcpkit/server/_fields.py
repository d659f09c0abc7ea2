"""``pydantic.Field(...)`` as a parameter's default, as FastMCP and the official SDK take it:
``def count(n: int = Field(default=3, ge=1, description="How many."))``.

Without this, Python passed the ``FieldInfo`` itself when the argument was absent, and the
schema and the check knew neither the description nor the bounds.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Final

import msgspec

from ._pydantic import pydantic_module

__all__ = ["FACTORY", "field_defaults", "pydantic_field"]


def pydantic_field(default: Any) -> tuple[Any, Any, Callable[[], Any] | None] | None:
    """For a parameter whose default is ``pydantic.Field(...)`` (FastMCP's and the official
    SDK's way to describe and bound one): ``(field, default, factory)``: the field's
    ``default_factory`` if it has one, else its default, ``inspect.Parameter.empty`` when it
    has neither (the parameter is required). ``None`` for any other default."""
    pydantic = pydantic_module()
    if pydantic is None or not isinstance(default, pydantic.fields.FieldInfo):
        return None
    factory = default.default_factory
    if factory is not None:
        return default, inspect.Parameter.empty, factory
    if default.is_required():
        return default, inspect.Parameter.empty, None
    return default, default.default, None


#: The default of a parameter whose ``Field`` has a ``default_factory``.
FACTORY: Final = msgspec.UNSET


def field_defaults(
    params: list[inspect.Parameter], hints: dict[str, Any]
) -> tuple[list[inspect.Parameter], tuple[tuple[str, Callable[[], Any]], ...]]:
    """Parameters whose default is ``pydantic.Field(...)`` become ``Annotated[T, field]``
    (in ``hints``: pydantic reads its description and bounds) with the field's own default;
    the defaults the function must be given when an argument is absent (Python would pass
    the ``FieldInfo`` itself)."""
    fill: list[tuple[str, Callable[[], Any]]] = []
    out: list[inspect.Parameter] = []
    for param in params:
        found = pydantic_field(param.default)
        if found is None:
            out.append(param)
            continue
        info, default, factory = found
        hints[param.name] = Annotated[hints.get(param.name, Any), info]
        if factory is not None:
            out.append(param.replace(default=FACTORY))
            fill.append((param.name, factory))
            continue
        out.append(param.replace(default=default))
        if default is not inspect.Parameter.empty:
            fill.append((param.name, functools.partial(_same, default)))
    return out, tuple(fill)


def _same(value: Any) -> Any:
    return value
