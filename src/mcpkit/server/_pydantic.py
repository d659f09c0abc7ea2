"""What mcpkit does with pydantic's types when the program uses pydantic (mcpkit never
imports it: ``sys.modules`` tells). A parameter or result that needs pydantic (a model, a
pydantic dataclass, a type msgspec cannot describe, or constraints only pydantic reads) is
described and checked by a ``pydantic.TypeAdapter``; everything else by msgspec.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
import warnings
from typing import Any, Final

__all__ = [
    "pydantic_adapter",
    "pydantic_error_type",
    "pydantic_loaded",
    "pydantic_module",
    "uses_pydantic",
]

#: Packages whose ``Annotated`` metadata pydantic honours and msgspec ignores.
_PYDANTIC_METADATA: Final = frozenset({"pydantic", "pydantic_core", "annotated_types"})


def pydantic_module() -> Any:
    """The ``pydantic`` module if the program imported it, else None."""
    return sys.modules.get("pydantic")


def pydantic_loaded() -> bool:
    """Whether the program imported pydantic (mcpkit itself never does)."""
    return pydantic_module() is not None


def uses_pydantic(tp: Any, _seen: set[Any] | None = None) -> bool:
    """Whether ``tp`` mentions a pydantic model or pydantic dataclass anywhere, or carries
    constraints only pydantic reads: ``Annotated[int, Field(ge=0, description=...)]``,
    ``conint(le=5)``, ``PositiveInt`` (a ``FieldInfo`` or an ``annotated_types`` bound,
    which msgspec would skip: the schema and the check would lose them), in the type or in
    the fields of a dataclass, TypedDict or NamedTuple it mentions."""
    pydantic = pydantic_module()
    if pydantic is None:
        return False
    if isinstance(tp, type) and (
        issubclass(tp, pydantic.BaseModel) or hasattr(tp, "__pydantic_validator__")
    ):
        return True
    if typing.get_origin(tp) is typing.Annotated and any(
        type(meta).__module__.partition(".")[0] in _PYDANTIC_METADATA for meta in tp.__metadata__
    ):
        return True
    if _has_fields(tp):
        # A dataclass, TypedDict or NamedTuple whose fields carry such constraints (msgspec
        # would describe and check it without them); each class looked at once.
        seen = _seen if _seen is not None else set()
        if tp in seen:
            return False
        seen.add(tp)
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:  # (NameError, TypeError) msgspec reports the type instead
            return False
        return any(uses_pydantic(hint, seen) for hint in hints.values()) and _adaptable(tp)
    return any(uses_pydantic(arg, _seen) for arg in typing.get_args(tp))


def _adaptable(tp: Any) -> bool:
    """Whether pydantic takes ``tp``; if not (``typing.TypedDict`` before Python 3.12), a
    warning says its fields' constraints go unchecked, and msgspec keeps it."""
    try:
        pydantic_adapter(tp)
    except Exception as exc:  # pydantic's PydanticUserError, TypeError ...
        why = " ".join(str(exc).split("For further information")[0].split())
        warnings.warn(
            f"the pydantic constraints on the fields of {tp.__qualname__} are neither "
            f"published nor checked: {why}",
            UserWarning,
            stacklevel=2,
        )
        return False
    return True


def _has_fields(tp: Any) -> bool:
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp)
        or (issubclass(tp, dict) and hasattr(tp, "__required_keys__"))  # any TypedDict
        or (issubclass(tp, tuple) and hasattr(tp, "_fields"))
    )


def pydantic_adapter(tp: Any) -> Any:
    """A ``pydantic.TypeAdapter`` for ``tp`` (pydantic must already be imported)."""
    return pydantic_module().TypeAdapter(tp)


class _NeverRaised(Exception):
    """Stands in for ``pydantic.ValidationError`` in ``except`` clauses without pydantic."""


def pydantic_error_type() -> type[Exception]:
    """``pydantic.ValidationError``, or an exception nothing raises if pydantic is not loaded."""
    pydantic = pydantic_module()
    error: type[Exception] = pydantic.ValidationError if pydantic else _NeverRaised
    return error
