"""From a plain Python function to a tool: input schema, output schema, validated arguments.

:func:`function_schema` reads a function's signature, type hints and docstring once, at
registration, and builds everything a call needs: a msgspec struct that validates and
converts the arguments in one C pass, and the JSON Schema (2020-12) a client shows the model.

Arguments are validated *before* the function runs; a failure is a tool execution error
naming each field and its problem (``server/tools.mdx`` 2025-11-25, "Error Handling").
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import msgspec
from msgspec import UNSET

from ..exceptions import LocalProtocolError, MCPError
from ..types._echo import peer_text
from ._argpatterns import pattern_problems, strip_patterns
from ._argvalues import UniqueItems, has_integral_float, integral_where_needed, pydantic_validate
from ._callables import callable_kind, registered_name
from ._docstrings import parse_docstring
from ._explain import explain_msgspec, explain_pydantic, json_kind, pointer
from ._fields import FACTORY, field_defaults
from ._pydantic import pydantic_error_type
from ._results import ResultError, Structurer, is_content_sequence, output_for
from ._typehooks import dec_hook, enc_hook
from ._typeschema import SchemaSet, accepts_none, is_context, property_schemas, type_hints

__all__ = [
    "ArgumentError",
    "FunctionSchema",
    "ParameterInfo",
    "ResultError",
    "function_schema",
]

_astuple = msgspec.structs.astuple


class ArgumentError(MCPError, ValueError):
    """Arguments do not match the function's parameters.

    ``str(exc)`` reads ``Invalid arguments: 'age' must be an integer, got a string; missing
    required argument 'name'`` and is meant for the model (a tool execution error).

    Attributes:
        errors: one ``(JSON pointer, sentence)`` pair per problem; the pointer is ``""`` when
            the arguments as a whole are wrong (not an object).
    """

    def __init__(self, errors: Iterable[tuple[str, str]]) -> None:
        self.errors = list(errors)
        super().__init__("Invalid arguments: " + self.detail)

    @property
    def detail(self) -> str:
        """The problems alone (``'age' must be an integer, got a string``), for a message
        that names what the arguments were for."""
        return "; ".join(text for _, text in self.errors)


@dataclass(frozen=True)
class ParameterInfo:
    """One parameter as clients see it (the context parameter is never one).

    Attributes:
        name: the argument name.
        description: from ``Annotated[..., msgspec.Meta(description=...)]`` or the docstring.
        required: the parameter has no default.
        default: the default value, ``inspect.Parameter.empty`` when required.
        annotation: the resolved type hint (``Any`` when there is none).
        schema: the property's JSON Schema; its ``$ref`` s point into the input schema's
            ``$defs``.
    """

    name: str
    description: str | None
    required: bool
    default: Any
    annotation: Any
    schema: dict[str, Any]


@dataclass(frozen=True)
class FunctionSchema:
    """Everything derived from a function's signature: see :func:`function_schema`."""

    name: str
    description: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wraps_result: bool
    #: The return annotation is a sequence of content blocks.
    returns_content: bool
    context_param: str | None
    is_async: bool
    parameters: tuple[ParameterInfo, ...]
    _binder: _Binder = field(repr=False, compare=False)
    _structurer: Structurer | None = field(repr=False, compare=False)
    #: Defaults to pass for absent arguments: those of ``pydantic.Field`` defaults.
    _fill: tuple[tuple[str, Callable[[], Any]], ...] = field(default=(), repr=False, compare=False)

    @functools.cached_property
    def parameter_names(self) -> frozenset[str]:
        """The names the function takes as arguments (its context parameter aside)."""
        return frozenset(p.name for p in self.parameters)

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``arguments`` and convert them to the parameters' types.

        Returns the keyword arguments for the function, without the context parameter and
        without absent optional parameters (so the function's own defaults apply).

        Raises:
            ArgumentError: with every problem found: missing and unexpected arguments, and
                the first problem inside each argument.
        """
        bound = self._binder.bind(arguments)
        for name, default in self._fill:
            if name not in bound:
                bound[name] = default()
        return bound

    def structure(self, value: Any) -> Any:
        """Convert a return value to JSON-able ``structuredContent``, checking it against the
        return annotation; wrapped as ``{"result": ...}`` when :attr:`wraps_result`.

        Raises:
            ResultError: the value does not match the return annotation.
            LocalProtocolError: the function has no output schema (unstructured return).
        """
        if self._structurer is None:
            raise LocalProtocolError(f"{self.name!r} returns unstructured content, not data")
        return self._structurer.structure(value)


class _Binder:
    """Validates arguments: one msgspec conversion when they are right, a full report when not."""

    __slots__ = (
        "_names",
        "_pydantic",
        "_pydantic_error",
        "_schema",
        "_strict",
        "_struct",
        "_types",
        "_unique",
        "_walkers",
    )

    def __init__(
        self,
        label: str,
        types: dict[str, Any],
        adapters: dict[str, Any],
        required: set[str],
        schema: dict[str, Any],
        strict: bool,
    ) -> None:
        # msgspec would check patterns with Python's backtracking re: RE2 checks them.
        stripped = {n: strip_patterns(tp, label) for n, tp in types.items() if n not in adapters}
        types = {n: stripped[n][0] if n in stripped else tp for n, tp in types.items()}
        self._walkers = tuple((n, w) for n, (_, w) in stripped.items() if w is not None)
        # Internal attribute names are a0, a1 ... so no argument name can clash with anything
        # on the struct; `name=` maps them to the argument names on the wire. Optional
        # arguments default to UNSET so that the function's own defaults apply.
        fields: list[tuple[str, Any, Any]] = [
            (
                f"a{i}",
                Any if name in adapters else tp,
                msgspec.field(name=name)
                if name in required
                else msgspec.field(default=UNSET, name=name),
            )
            for i, (name, tp) in enumerate(types.items())
        ]
        self._struct: Any = msgspec.defstruct(
            f"{label}_arguments", fields, kw_only=True, forbid_unknown_fields=True
        )
        self._names = tuple(types)
        self._types = types
        self._unique = UniqueItems.for_schema(schema)
        self._pydantic = tuple(adapters.items())
        self._pydantic_error = pydantic_error_type()
        self._schema = schema
        self._strict = strict

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentError(
                    [("", f"the arguments must be an object, got {json_kind(arguments)}")]
                )
            arguments = dict(arguments)
        try:
            struct = msgspec.convert(
                arguments, self._struct, strict=self._strict, str_keys=True, dec_hook=dec_hook
            )
        except msgspec.ValidationError:
            # JSON Schema's "integer" includes 3.0, which some clients send: try again.
            if not has_integral_float(arguments):
                raise ArgumentError(self._explain(arguments)) from None
            whole = integral_where_needed(
                arguments, self._types, self._strict, dict(self._pydantic)
            )
            try:
                struct = msgspec.convert(
                    whole, self._struct, strict=self._strict, str_keys=True, dec_hook=dec_hook
                )
            except msgspec.ValidationError:
                raise ArgumentError(self._explain(whole)) from None
        values = _astuple(struct)
        if self._walkers:
            problems = pattern_problems(self._walkers, dict(zip(self._names, values, strict=True)))
            if problems:
                raise ArgumentError(problems)
        if self._unique is not None:
            repeated = self._unique.problems(arguments)
            if repeated:
                raise ArgumentError(repeated)
        kwargs = {name: v for name, v in zip(self._names, values, strict=True) if v is not UNSET}
        for name, adapter in self._pydantic:
            if name in kwargs:
                try:
                    kwargs[name] = self._validate(adapter, kwargs[name])
                except self._pydantic_error:
                    raise ArgumentError(self._explain(arguments)) from None
        return kwargs

    def _validate(self, adapter: Any, value: Any) -> Any:
        return pydantic_validate(adapter, value, self._strict, self._pydantic_error)

    def _explain(self, arguments: dict[str, Any]) -> list[tuple[str, str]]:
        # msgspec stops at the first problem; check each argument on its own to report all.
        adapters = dict(self._pydantic)
        errors: list[tuple[str, str]] = []
        for name, value in arguments.items():
            if name not in self._types:
                errors.append((pointer([name]), f"unexpected argument {peer_text(name)}"))
            elif name in adapters:
                try:
                    self._validate(adapters[name], value)
                except self._pydantic_error as exc:
                    problems = explain_pydantic(exc, base=[name], root="the arguments")
                    errors.extend((pointer(path), text) for path, text in problems)
            else:
                tp = self._types[name]
                try:
                    converted = msgspec.convert(
                        value, tp, strict=self._strict, str_keys=True, dec_hook=dec_hook
                    )
                    errors.extend(pattern_problems(self._walkers, {name: converted}))
                except msgspec.ValidationError as exc:
                    path, text = explain_msgspec(
                        exc,
                        value,
                        tp,
                        strict=self._strict,
                        base=[name],
                        schema=self._schema,
                        root="the arguments",
                    )
                    errors.append((pointer(path), text))
        fields = msgspec.structs.fields(self._struct)
        errors.extend(
            (pointer([f.encode_name]), f"missing required argument {f.encode_name!r}")
            for f in fields
            if f.required and f.encode_name not in arguments
        )
        return errors or [("", "the arguments are invalid")]


def function_schema(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool = True,
) -> FunctionSchema:
    """Derive a tool's schemas and argument validator from a plain (sync or async) function.

    Parameter types come from the type hints (unannotated means ``Any``), descriptions from
    ``Annotated[T, msgspec.Meta(description=...)]`` or the docstring (Google, numpy or
    Sphinx style), and the description from the rest of the docstring. A parameter annotated
    ``RequestContext`` (or ``RequestContext | None``) is injected by the caller and left out
    of the schema. A parameter defaulting to ``None`` also accepts ``null`` even if its
    annotation does not say ``| None``. ``strict=False`` lets ``bind`` coerce strings such
    as ``"5"`` to numbers. The return annotation gives the output schema (rules in
    :mod:`._results`; plain ``str`` is unstructured text, so it has none).

    Raises:
        LocalProtocolError: the function cannot be a tool: ``*args`` / ``**kwargs`` or
            positional-only parameters, a generator, more than one context parameter, a
            type hint that cannot be resolved, a type that has no JSON Schema, or a
            ``Meta(pattern=)`` that is malformed or only Python's backtracking engine can
            run and could take too long on (see :mod:`._argpatterns`).
    """
    label = registered_name(fn, name)
    target, is_async = callable_kind(fn, label)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise LocalProtocolError(f"cannot read the signature of {label!r}: {exc}") from None
    hints = type_hints(target, signature, label)
    doc = parse_docstring(inspect.getdoc(fn))

    context_param: str | None = None
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            what = "positional-only"
            if param.kind is param.VAR_POSITIONAL:
                what = f"*{param.name}"
            elif param.kind is param.VAR_KEYWORD:
                what = f"**{param.name}"
            raise LocalProtocolError(
                f"{label!r}: parameter {param.name!r} is {what}; tool arguments are passed by "
                "name, so every parameter must be an ordinary or keyword-only parameter"
            )
        if is_context(hints.get(param.name)):
            if context_param is not None:
                raise LocalProtocolError(f"{label!r} has two RequestContext parameters")
            context_param = param.name
        else:
            params.append(param)

    params, fill = field_defaults(params, hints)
    types: dict[str, Any] = {}
    for param in params:
        tp = hints.get(param.name, Any)
        if param.default is None and not accepts_none(tp):
            tp = Optional[tp]  # noqa: UP045  (`= None` means the argument may be null)
        types[param.name] = tp
    schemas = SchemaSet()
    adapters: dict[str, Any] = {}
    props = property_schemas(label, types, adapters, schemas)

    properties: dict[str, Any] = {}
    infos: list[ParameterInfo] = []
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    for param in params:
        prop = props[param.name]
        if "description" not in prop and param.name in doc.params:
            prop = {**prop, "description": doc.params[param.name]}
        if param.default is not inspect.Parameter.empty and param.default is not FACTORY:
            try:
                prop = {
                    **prop,
                    "default": msgspec.to_builtins(param.default, str_keys=True, enc_hook=enc_hook),
                }
            except (TypeError, ValueError):
                pass  # not JSON-able: the default still applies, the schema just omits it
        properties[param.name] = prop
        infos.append(
            ParameterInfo(
                name=param.name,
                description=prop.get("description"),
                required=param.name in required,
                default=param.default,
                annotation=hints.get(param.name, Any),
                schema=prop,
            )
        )
    root: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        root["required"] = required
    root["additionalProperties"] = False
    input_schema = schemas.document(root)

    returns = hints.get("return", signature.return_annotation)
    output_schema, structurer = output_for(returns, label, doc.returns)
    return FunctionSchema(
        name=label,
        description=description if description is not None else doc.description,
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_result=structurer is not None and structurer.wraps,
        returns_content=is_content_sequence(returns),
        context_param=context_param,
        is_async=is_async,
        parameters=tuple(infos),
        _binder=_Binder(label, types, adapters, set(required), input_schema, strict),
        _structurer=structurer,
        _fill=fill,
    )
