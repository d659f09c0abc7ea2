"""Tool argument patterns checked by the protocol's engine (RE2), not by msgspec.

``Annotated[str, msgspec.Meta(pattern=...)]`` makes msgspec check the pattern with Python's
backtracking :mod:`re`, whose search can take minutes to hours on a crafted string
(``\\d+\\.\\d+`` on 200,000 digits: 18 s). :func:`strip_patterns` takes the patterns out of
a parameter's type and returns a :data:`Walker` that checks them on the converted value
with :func:`mcpkit.protocol._jsonschema_regex.compile_pattern` (RE2, linear time; the same
ECMA-262 reading as the tool's ``inputSchema`` everywhere else).

Patterns are taken out of ``Annotated`` types and everything built from them with ``list``,
``tuple``, ``set``, ``frozenset``, ``dict``, the ``collections.abc`` containers, ``Optional``
and unions. Patterns on the fields of the server's own classes (msgspec Structs,
dataclasses, attrs classes, TypedDicts, NamedTuples) stay msgspec's: it builds those
objects itself and cannot be told to skip one check, and a stand-in class would hand the
function an object of another type.
"""

from __future__ import annotations

import collections.abc
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Final, TypeAlias, Union

import msgspec

from ..exceptions import LocalProtocolError
from ..protocol._jsonschema_regex import Matcher, compile_pattern, refusal
from ._explain import Segment, pointer, subject

__all__ = ["Walker", "pattern_problems", "strip_patterns"]

#: Checks a converted value at a path; the first problem as ``(path, sentence)``, or None.
Walker: TypeAlias = Callable[[Any, list[Segment], str], "tuple[list[Segment], str] | None"]

_META_FIELDS: Final = (
    "gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "tz", "title",
    "description", "examples", "extra_json_schema", "extra",
)  # fmt: skip
# Containers msgspec converts to these Python types.
_SEQUENCES: Final = {
    list: list, set: set, frozenset: frozenset,
    collections.abc.Sequence: list, collections.abc.MutableSequence: list,
    collections.abc.Collection: list, collections.abc.Set: set,
    collections.abc.MutableSet: set,
}  # fmt: skip
_ANNOTATED: Any = typing.Annotated  # (subscripted with a computed tuple)
_MAPPINGS: Final = {dict, collections.abc.Mapping, collections.abc.MutableMapping}


def strip_patterns(tp: Any, label: str) -> tuple[Any, Walker | None]:
    """``tp`` without the ``pattern`` of its ``msgspec.Meta`` annotations (outside the
    server's own classes), and the walker that checks them instead (None: none found).

    Raises:
        LocalProtocolError: a pattern is malformed, or RE2 cannot run it and Python's
            engine could take too long on it.
    """
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        inner, walker = strip_patterns(args[0], label)
        sources = [m.pattern for m in args[1:] if isinstance(m, msgspec.Meta) and m.pattern]
        metas = [_without_pattern(m) if isinstance(m, msgspec.Meta) else m for m in args[1:]]
        params = (inner, *metas)
        if not sources:
            return (tp, None) if walker is None else (_ANNOTATED[params], walker)
        matchers = [_compile(source, label) for source in sources]
        return _ANNOTATED[params], _string_walker(matchers, walker)
    if origin is Union or origin is types.UnionType:
        parts = [strip_patterns(arg, label) for arg in args]
        walkers = [w for _, w in parts if w is not None]
        if not walkers:
            return tp, None
        return Union[tuple(t for t, _ in parts)], _any_walker(walkers)  # noqa: UP007
    if origin in _SEQUENCES or origin is tuple:
        parts = [strip_patterns(arg, label) if arg is not Ellipsis else (arg, None) for arg in args]
        if all(w is None for _, w in parts):
            return tp, None
        rebuilt = origin[tuple(t for t, _ in parts)]
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            return rebuilt, _tuple_walker([w for _, w in parts])
        return rebuilt, _items_walker(_SEQUENCES.get(origin, tuple), parts[0][1])
    if origin in _MAPPINGS and len(args) == 2:
        (key_tp, key_walker), (value_tp, value_walker) = (strip_patterns(a, label) for a in args)
        if key_walker is None and value_walker is None:
            return tp, None
        return origin[key_tp, value_tp], _mapping_walker(key_walker, value_walker)
    return tp, None


def pattern_problems(
    walkers: tuple[tuple[str, Walker], ...], values: dict[str, Any]
) -> list[tuple[str, str]]:
    """The first pattern problem in each argument of ``values`` (converted), as pointers and
    sentences (``'code' must match the pattern ...``, as msgspec's checks were reported)."""
    problems = []
    for name, walker in walkers:
        if name in values and values[name] is not msgspec.UNSET:
            found = walker(values[name], [name], "the arguments")
            if found is not None:
                problems.append((pointer(found[0]), found[1]))
    return problems


def _without_pattern(meta: msgspec.Meta) -> msgspec.Meta:
    kept = {name: getattr(meta, name) for name in _META_FIELDS}
    return msgspec.Meta(**{name: value for name, value in kept.items() if value is not None})


def _compile(source: str, label: str) -> Matcher:
    try:
        return compile_pattern(source)
    except (re.error, ValueError, OverflowError) as exc:
        raise LocalProtocolError(f"{label!r}: {refusal(source, exc)}") from None


def _string_walker(matchers: list[Matcher], inner: Walker | None) -> Walker:
    def walk(value: Any, path: list[Segment], root: str) -> tuple[list[Segment], str] | None:
        if isinstance(value, str):
            for matcher in matchers:
                source = matcher.source
                if matcher.longest and len(value) > matcher.longest:
                    return path, (
                        f"{subject(path, root)} is too long ({len(value)} characters) to be "
                        f"checked against the pattern {source} (at most {matcher.longest})"
                    )
                if not matcher.search(value):
                    return path, f"{subject(path, root)} must match the pattern {source}"
        return inner(value, path, root) if inner is not None else None

    return walk


def _any_walker(walkers: list[Walker]) -> Walker:
    # Each walker looks only at the Python types its branch converts to, and msgspec allows
    # one branch per type in a union.
    def walk(value: Any, path: list[Segment], root: str) -> tuple[list[Segment], str] | None:
        return next((p for w in walkers if (p := w(value, path, root)) is not None), None)

    return walk


def _items_walker(kind: type, item: Walker | None) -> Walker:
    def walk(value: Any, path: list[Segment], root: str) -> tuple[list[Segment], str] | None:
        if item is None or not isinstance(value, kind):
            return None
        found = (item(v, [*path, i], root) for i, v in enumerate(typing.cast(Any, value)))
        return next((p for p in found if p is not None), None)

    return walk


def _tuple_walker(items: list[Walker | None]) -> Walker:
    def walk(value: Any, path: list[Segment], root: str) -> tuple[list[Segment], str] | None:
        if not isinstance(value, tuple):
            return None
        for i, (v, w) in enumerate(zip(value, items, strict=False)):
            problem = w(v, [*path, i], root) if w is not None else None
            if problem is not None:
                return problem
        return None

    return walk


def _mapping_walker(key: Walker | None, item: Walker | None) -> Walker:
    def walk(value: Any, path: list[Segment], root: str) -> tuple[list[Segment], str] | None:
        if not isinstance(value, dict):
            return None
        for k, v in value.items():
            if key is not None and (problem := key(k, path, root)) is not None:
                return problem[0], f"a key of {problem[1]}"
            if item is not None and (problem := item(v, [*path, k], root)) is not None:
                return problem
        return None

    return walk
