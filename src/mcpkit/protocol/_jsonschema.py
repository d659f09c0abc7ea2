"""Bounded JSON Schema validation for tool arguments, structured results and elicitation.

Servers validate ``tools/call`` arguments against the tool's ``inputSchema`` and report an
invalid call as a tool execution error; clients SHOULD validate ``structuredContent``
against ``outputSchema``; elicitation results match ``requestedSchema`` (MCP 2025-11-25
``server/tools.mdx``, ``client/elicitation.mdx``). Schemas are JSON Schema 2020-12 unless
``$schema`` names draft-07 or 2019-09 (``basic/index.mdx`` "JSON Schema Usage").

:func:`compile_schema` reads a schema once into closures (:mod:`._jsonschema_checks`), so a
typical arguments object validates in a few microseconds. Security (MCP 2026-07-28,
SEP-2106): a ``$ref`` resolves only inside the schema document and is never fetched; every
validation has a step budget and a depth limit, and running out is reported as an error.

Where this differs from a complete implementation:

- ``pattern`` is read as ECMA-262 and run by RE2, in time linear in the text (``$``,
  ``.``, ``\\d``, ``\\w``, ``\\s``, ``\\b``, ``[^]``, named groups translated; ``\\p{...}``
  is a compile error), on text of at most 2**27 characters over its program size (RE2 is
  linear in both when its DFA gives up); lookaheads right after a leading ``^`` run as
  separate anchored RE2 checks. Other lookaround and back references need Python's
  backtracking :mod:`re`: such a pattern may not repeat a group or hold two long
  repetitions (a peer's then goes unchecked, one's own is a compile error) and reads at
  most 8,192 characters of text.
  Patterns are limited to 1,000 characters.
- ``format`` is an annotation; with ``check_formats=True`` "date", "date-time", "email",
  "uri" and "uuid" are checked loosely. ``multipleOf`` treats a float as the decimal it
  prints as (0.3 is a multiple of 0.1).
- Draft-07 ``dependencies`` and array-form ``items`` / ``additionalItems`` apply in every
  dialect, and 2019-09/2020-12 keywords in draft-07 schemas; ``$ref`` hides its sibling
  keywords only in draft-07, as that draft says.
- ``unevaluatedProperties``, ``unevaluatedItems``, ``$dynamicRef`` and ``$recursiveRef`` are
  rejected at compile time rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..exceptions import LocalProtocolError
from ._jsonschema_compile import compile_document
from ._jsonschema_fast import fast_check
from ._jsonschema_runtime import DEPTH_MESSAGE, Ctx, Exceeded, Full, Node, parts

__all__ = ["SchemaError", "SchemaValidationError", "SchemaValidator", "compile_schema"]

_MAX_DEPTH_LIMIT = 256  # two or three Python frames per level stay far below 1,000


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One way an instance fails its schema.

    Attributes:
        path: where in the instance, as object keys and array indexes.
        message: one sentence naming the field and the problem, for a person or a model.
        keyword: the schema keyword that failed (``"$limit"`` when a bound ran out).
    """

    path: tuple[str | int, ...]
    message: str
    keyword: str

    @property
    def pointer(self) -> str:
        """``path`` as a JSON Pointer (RFC 6901), e.g. ``/address/street``."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)


class SchemaValidationError(ValueError):
    """An instance does not match its schema; ``errors`` says how (at least one)."""

    def __init__(self, errors: list[SchemaError]) -> None:
        first = errors[0].message if errors else "the value does not match its schema"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)
        self.errors = errors


class SchemaValidator:
    """A compiled schema; make one with :func:`compile_schema` and reuse it."""

    __slots__ = ("_fast", "_max_depth", "_max_steps", "_root")

    def __init__(
        self,
        root: Node,
        max_depth: int,
        max_steps: int,
        fast: Callable[[Any], bool] | None = None,
    ) -> None:
        self._root = root
        self._max_depth = max_depth
        self._max_steps = max_steps
        self._fast = fast  # says only "valid for sure" (see ._jsonschema_fast)

    def errors(self, instance: Any, *, limit: int = 10) -> list[SchemaError]:
        """Validate ``instance`` (a decoded JSON value) and list up to ``limit`` errors.

        Running out of steps or depth ends validation with one ``"$limit"`` error; it never
        raises, hangs or recurses without bound.

        Raises:
            LocalProtocolError: ``limit`` is less than 1.
        """
        if limit < 1:
            raise LocalProtocolError("limit must be at least 1")
        ctx = Ctx(limit, self._max_depth, self._max_steps, True)
        found = ctx.errors  # composition keywords swap ctx.errors while they probe
        try:
            self._root.fn(instance, (), ctx)
        except Full:
            pass
        except Exceeded as exc:
            found.append((exc.path, "$limit", exc.message))
        except RecursionError:  # the caller's own stack was nearly full already
            found.append(((), "$limit", DEPTH_MESSAGE))
        return [SchemaError(parts(path), message, keyword) for path, keyword, message in found]

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid, without building any message (running out of
        steps or depth counts as invalid). Raises nothing."""
        fast = self._fast
        if fast is not None and fast(instance):  # a tool's plain arguments, valid
            return True
        ctx = Ctx(1, self._max_depth, self._max_steps, False)
        try:
            return self._root.fn(instance, (), ctx)
        except (Exceeded, RecursionError):
            return False

    def validate(self, instance: Any) -> None:
        """Check ``instance``.

        Raises:
            SchemaValidationError: it is invalid; ``.errors`` lists up to 10 errors.
        """
        if self.is_valid(instance):  # the common case, without building messages
            return
        raise SchemaValidationError(self.errors(instance))


def compile_schema(
    schema: Mapping[str, Any] | bool,
    *,
    max_depth: int = 64,
    max_steps: int = 1_000_000,
    check_formats: bool = False,
    untrusted: bool = False,
) -> SchemaValidator:
    """Compile a JSON Schema (2020-12, 2019-09 or draft-07) into a reusable validator.

    Args:
        schema: the schema: an object or a boolean.
        max_depth: how deeply subschema applications may nest, 1 to 256: about the
            nesting depth of the instance, plus one for each ``allOf`` / ``anyOf`` /
            ``oneOf`` / ``not`` / ``if`` or ``$ref``-with-siblings level on the way.
        max_steps: most subschema applications (and ``uniqueItems`` items) per validation:
            about one per value of the instance, so the default lets through the tables
            a 16 MiB message can hold (100,000 refused valid arguments under 1 MiB); a
            million steps take a few hundred milliseconds.
        check_formats: assert ``format`` loosely instead of treating it as an annotation.
        untrusted: the schema comes from a peer: a ``pattern`` only Python's engine can
            run (lookaround, back references) that could backtrack for a long time (ReDoS)
            goes unchecked instead of failing the compilation.

    Raises:
        LocalProtocolError: the schema is not an object or boolean, names an unsupported
            ``$schema`` dialect, has a malformed keyword value or an unsupported keyword,
            has a ``$ref`` outside the document ("remote $ref not allowed"), one that does
            not resolve or a ``$ref`` cycle, or the limits are out of range; (not
            ``untrusted``) a pattern only Python's engine can run could backtrack.
    """
    if not 1 <= max_depth <= _MAX_DEPTH_LIMIT or max_steps < 1:
        raise LocalProtocolError(f"max_depth must be 1 to {_MAX_DEPTH_LIMIT}, max_steps >= 1")
    root = compile_document(schema, check_formats, untrusted)  # raises for a bad schema
    fast = fast_check(schema, check_formats, max_depth, max_steps)
    return SchemaValidator(root, max_depth, max_steps, fast)
