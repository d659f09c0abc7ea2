"""Python types to JSON Schema: type hints, ``$defs`` and the optional pydantic bridge.

msgspec describes every type it supports. pydantic types are handled by pydantic
itself, but only when the program already imported pydantic (``sys.modules``): mcpkit never
imports it, so ``import mcpkit.server`` stays light and pydantic stays optional.

All schemas of one document share one ``$defs``. Clients cannot fetch remote references, so
every ``$ref`` points into that ``$defs`` (``#/$defs/Name``), clashing names from different
generators are renamed, and definitions nothing refers to are dropped.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any, Final, Union

import msgspec

from ..exceptions import LocalProtocolError
from ._context import RequestContext
from ._pydantic import pydantic_adapter, pydantic_loaded, uses_pydantic
from ._typehooks import schema_hook

__all__ = [
    "REF_PREFIX",
    "UNION_TYPES",
    "SchemaSet",
    "accepts_none",
    "is_context",
    "meta_keywords",
    "msgspec_schema_error",
    "property_schemas",
    "type_hints",
]

REF_PREFIX: Final = "#/$defs/"
UNION_TYPES: Final = (Union, types.UnionType)
_CONTEXT_NAME: Final = re.compile(r"\bRequestContext\b")


def msgspec_schema_error(tp: Any) -> str | None:
    """Why msgspec cannot generate a JSON Schema for ``tp``, or ``None`` if it can."""
    try:
        msgspec.json.schema(tp, schema_hook=schema_hook)
    except TypeError as exc:
        return " ".join(str(exc).split())
    return None


class SchemaSet:
    """Schemas of several types that end up in one JSON Schema document with one ``$defs``."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def add_msgspec(self, tps: list[Any]) -> list[dict[str, Any]]:
        """Schemas of ``tps``, generated together so shared structs are defined once.

        Raises:
            TypeError: msgspec cannot describe one of the types.
        """
        schemas, defs = msgspec.json.schema_components(
            tps, ref_template=REF_PREFIX + "{name}", schema_hook=schema_hook
        )
        self._merge(defs, list(schemas))
        return list(schemas)

    def add_pydantic(self, tp: Any, *, serialization: bool = False) -> dict[str, Any]:
        """The schema pydantic generates for ``tp``, its ``$defs`` hoisted into this set."""
        mode = "serialization" if serialization else "validation"
        schema = dict(
            pydantic_adapter(tp).json_schema(ref_template=REF_PREFIX + "{model}", mode=mode)
        )
        defs = schema.pop("$defs", {})
        return self._merge(defs, [schema])[0]

    def _merge(self, defs: dict[str, Any], roots: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # A clashing name keeps its meaning only if both definitions are equal and refer to
        # no renamed definition; repeat until no more names need renaming.
        renamed: set[str] = set()
        while True:
            clashing = {
                name
                for name, schema in defs.items()
                if name in self.defs
                and (self.defs[name] != schema or _refs(schema) & renamed)
                and name not in renamed
            }
            if not clashing:
                break
            renamed |= clashing
        mapping: dict[str, str] = {}
        taken = set(self.defs) | set(defs)
        for name in sorted(renamed):
            number = 2
            while f"{name}{number}" in taken:
                number += 1
            mapping[name] = f"{name}{number}"
            taken.add(mapping[name])
        for name, schema in defs.items():
            self.defs[mapping.get(name, name)] = _rename_refs(schema, mapping)
        return [_rename_refs(root, mapping) for root in roots]

    def document(self, root: dict[str, Any]) -> dict[str, Any]:
        """``root`` with the definitions it reaches (directly or not) as ``$defs``."""
        used: set[str] = set()
        pending = _refs(root)
        while pending:
            name = pending.pop()
            if name in self.defs and name not in used:
                used.add(name)
                pending |= _refs(self.defs[name])
        if not used:
            return root
        return {**root, "$defs": {name: self.defs[name] for name in sorted(used)}}

    def inline(self, schema: dict[str, Any]) -> dict[str, Any]:
        """A bare ``{"$ref": ...}`` replaced by the definition it names (other schemas as is)."""
        if set(schema) == {"$ref"} and schema["$ref"].startswith(REF_PREFIX):
            target = self.defs.get(schema["$ref"][len(REF_PREFIX) :])
            if isinstance(target, dict):
                return dict(target)
        return schema


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _refs(node: Any) -> set[str]:
    return {
        item["$ref"][len(REF_PREFIX) :]
        for item in _walk(node)
        if isinstance(item.get("$ref"), str) and item["$ref"].startswith(REF_PREFIX)
    }


def _rename_refs(node: Any, mapping: dict[str, str]) -> Any:
    if not mapping:
        return node
    if isinstance(node, list):
        return [_rename_refs(value, mapping) for value in node]
    if not isinstance(node, dict):
        return node
    out = {key: _rename_refs(value, mapping) for key, value in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX) and ref[len(REF_PREFIX) :] in mapping:
        out["$ref"] = REF_PREFIX + mapping[ref[len(REF_PREFIX) :]]
    return out


_CONSTRAINTS: Final = (
    "gt",
    "ge",
    "lt",
    "le",
    "multiple_of",
    "pattern",
    "min_length",
    "max_length",
    "tz",
)


def meta_keywords(tp: Any) -> dict[str, Any]:
    """The schema keywords (title, description, examples, extra_json_schema) of the
    ``msgspec.Meta`` objects in ``Annotated[T, ...]``, for types pydantic describes (pydantic
    ignores metadata it does not know).

    Raises:
        ValueError: a Meta object has constraints, which pydantic would silently ignore.
    """
    if typing.get_origin(tp) is not Annotated:
        return {}
    extra: dict[str, Any] = {}
    for item in typing.get_args(tp)[1:]:
        if not isinstance(item, msgspec.Meta):
            continue
        constraints = [key for key in _CONSTRAINTS if getattr(item, key) is not None]
        if constraints:
            raise ValueError(
                f"msgspec.Meta constraints ({', '.join(constraints)}) do not apply to pydantic "
                "types; use pydantic.Field instead"
            )
        for key in ("title", "description", "examples"):
            if getattr(item, key) is not None:
                extra[key] = getattr(item, key)
        extra.update(item.extra_json_schema or {})
    return extra


def type_hints(target: Any, signature: inspect.Signature, label: str) -> dict[str, Any]:
    """Resolved type hints of a function (string annotations evaluated, ``Annotated`` kept),
    by parameter name and ``"return"``.

    Raises:
        LocalProtocolError: an annotation names a type that cannot be found.
    """
    owner = target if inspect.isroutine(target) else type(target).__call__
    try:
        return typing.get_type_hints(owner, include_extras=True)
    except Exception:
        pass
    # One annotation failed (often a type defined inside a function, invisible to string
    # annotations under `from __future__ import annotations`): resolve them one by one so
    # the error names the culprit, with the function's closure as extra namespace.
    func = inspect.unwrap(getattr(owner, "__func__", owner))
    globalns = getattr(func, "__globals__", {})
    try:
        localns = dict(inspect.getclosurevars(func).nonlocals)
    except (TypeError, ValueError):
        localns = {}
    annotations = {n: p.annotation for n, p in signature.parameters.items()}
    annotations["return"] = signature.return_annotation
    hints: dict[str, Any] = {}
    for pname, annotation in annotations.items():
        if annotation is inspect.Parameter.empty:
            continue
        if not isinstance(annotation, str):
            hints[pname] = annotation
            continue
        stub = _Stub()
        stub.__annotations__ = {"x": annotation}
        try:
            hints[pname] = typing.get_type_hints(stub, globalns, localns, include_extras=True)["x"]
        except Exception as exc:
            if pname != "return" and _CONTEXT_NAME.search(annotation):
                hints[pname] = RequestContext  # e.g. imported only under TYPE_CHECKING
                continue
            where = "the return annotation" if pname == "return" else f"parameter {pname!r}"
            hint = (
                " (the function is defined inside another function, whose local names string "
                "annotations cannot see)"
                if "<locals>" in getattr(func, "__qualname__", "")
                else ""
            )
            raise LocalProtocolError(
                f"{label!r}: cannot resolve the type {annotation!r} of {where}{hint}: {exc}. "
                "Define the types a tool uses at module level."
            ) from None
    return hints


class _Stub:
    """Carries one annotation for ``typing.get_type_hints``."""


def is_context(tp: Any) -> bool:
    """Whether a type hint asks for the request context (``RequestContext``, optionally
    ``| None`` or ``Annotated``)."""
    if tp is None:
        return False
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if isinstance(tp, type) and issubclass(tp, RequestContext):
        return True
    if typing.get_origin(tp) in UNION_TYPES:
        rest = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        return len(rest) == 1 and is_context(rest[0])
    return False


def accepts_none(tp: Any) -> bool:
    """Whether ``None`` is a valid value of the type hint ``tp``."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if tp in (Any, None, type(None), object):
        return True
    if typing.get_origin(tp) in UNION_TYPES:
        return any(accepts_none(arg) for arg in typing.get_args(tp))
    return typing.get_origin(tp) is typing.Literal and None in typing.get_args(tp)


def property_schemas(
    label: str, types: dict[str, Any], adapters: dict[str, Any], schemas: SchemaSet
) -> dict[str, dict[str, Any]]:
    """The schema of every parameter type; fills ``adapters`` for the ones pydantic handles:
    those mentioning a pydantic type, and (when pydantic is loaded) those msgspec cannot
    describe."""
    by_pydantic = {name for name, tp in types.items() if uses_pydantic(tp)}
    if pydantic_loaded():
        by_pydantic |= {name for name, tp in types.items() if msgspec_schema_error(tp) is not None}
    plain = {name: tp for name, tp in types.items() if name not in by_pydantic}
    try:
        props = dict(zip(plain, schemas.add_msgspec(list(plain.values())), strict=True))
    except TypeError as exc:
        culprit = next((n for n, tp in plain.items() if msgspec_schema_error(tp) is not None), None)
        tp = types.get(culprit or "")
        why = msgspec_schema_error(tp) if culprit else str(exc)
        raise LocalProtocolError(
            f"{label!r}: parameter {culprit!r} has type {tp!r}, which has no JSON Schema: {why}"
        ) from None
    for pname in [name for name in types if name in by_pydantic]:
        tp = types[pname]
        try:
            extra = meta_keywords(tp)
            adapters[pname] = pydantic_adapter(tp)
            props[pname] = {**schemas.add_pydantic(tp), **extra}
        except Exception as exc:
            raise LocalProtocolError(
                f"{label!r}: parameter {pname!r} has type {tp!r}, which neither msgspec nor "
                f"pydantic can validate: {' '.join(str(exc).split())}"
            ) from None
    return {name: props[name] for name in types}
