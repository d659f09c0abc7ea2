"""The compiling half of the JSON Schema validator of :mod:`._jsonschema`.

One pass over the schema document checks every keyword value and builds
:class:`~._jsonschema_runtime.Node` objects from the closures of :mod:`._jsonschema_checks`.
``$ref`` targets are compiled afterwards from a work list, so compiling never recurses
through references; a reference leaving the document is refused (MCP 2026-07-28, SEP-2106:
never dereference a ``$ref`` to a network URI).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from math import isfinite
from typing import Any
from urllib.parse import unquote, urljoin

from ..exceptions import LocalProtocolError
from . import _jsonschema_checks as c
from ._jsonschema_dialect import dialect_of
from ._jsonschema_regex import Matcher, UnsafePattern, compile_pattern, refusal
from ._jsonschema_runtime import (
    Check,
    Node,
    TooDeep,
    accept,
    enum_check,
    kind,
    make_node_fn,
    reject,
)

__all__ = ["compile_document"]

_MAX_SCHEMA_DEPTH = 128  # nesting of the schema document itself (compiling recurses)
_MAX_PATTERN = 1_000
_TYPES = {"null", "boolean", "object", "array", "number", "string", "integer"}
_UNSUPPORTED = {
    "unevaluatedProperties": "'unevaluatedProperties' is not supported; use additionalProperties",
    "unevaluatedItems": "'unevaluatedItems' is not supported; use items",
    "$dynamicRef": "'$dynamicRef' is not supported; use $ref",
    "$recursiveRef": "'$recursiveRef' is not supported; use $ref",
}
_APPLICATORS = frozenset({
    "$ref", "properties", "patternProperties", "additionalProperties", "propertyNames",
    "dependentSchemas", "dependencies", "items", "prefixItems", "additionalItems",
    "contains", "allOf", "anyOf", "oneOf", "not", "if"})  # fmt: skip
_SIZES = (
    ("minLength", True, str, ("character", "characters")),
    ("maxLength", False, str, ("character", "characters")),
    ("minItems", True, list, ("item", "items")),
    ("maxItems", False, list, ("item", "items")),
    ("minProperties", True, dict, ("property", "properties")),
    ("maxProperties", False, dict, ("property", "properties")),
)
_ACCEPT, _REJECT = Node(accept), Node(reject)


def compile_document(schema: Any, check_formats: bool, untrusted: bool = False) -> Node:
    """Compile a whole schema document; see :func:`._jsonschema.compile_schema`.

    Raises:
        LocalProtocolError: the schema is invalid, unsupported or refers outside itself.
    """
    return _Compiler(schema, check_formats, untrusted).run()


def _escape(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")


class _Compiler:
    """Reads one schema document into :class:`Node` objects; ``$ref`` targets are compiled
    after the main pass from a work list, so compiling never recurses through references."""

    def __init__(self, root: Any, check_formats: bool, untrusted: bool = False) -> None:
        self.root = root
        self.untrusted = untrusted
        self.draft07 = dialect_of(root) == "draft-07"
        self.check_formats = check_formats
        self.memo: dict[tuple[int, str], Node] = {}
        self.resources: dict[str, Any] = {"": root}  # in-document resources by base URI
        self.anchors: dict[tuple[str, str], Any] = {}
        self.pending: list[tuple[Node, str, str, str]] = []  # alias, $ref, base, location
        self.base, self.depth = "", 0

    def join(self, base: str, uri: str, loc: str) -> str:
        try:
            return urljoin(base, uri)
        except ValueError as exc:  # e.g. an unclosed IPv6 bracket
            raise self.fail(loc, f"invalid URI {uri!r} ({exc})") from None

    def fail(self, loc: str, problem: str) -> LocalProtocolError:
        return LocalProtocolError(f"invalid JSON Schema at {loc}: {problem}")

    def run(self) -> Node:
        top = self.node(self.root, "#")
        aliases: list[tuple[Node, str]] = []
        while self.pending:
            alias, ref, base, loc = self.pending.pop()
            target, self.base = self.lookup(ref, base, loc)
            alias.target = self.node(target, ref if ref.startswith("#") else loc)
            aliases.append((alias, loc))
        for alias, loc in aliases:
            node, seen = alias, set()
            while node.target is not None:
                if id(node) in seen:
                    raise self.fail(loc, "$ref cycle that never reaches a schema")
                seen.add(id(node))
                node = node.target
            alias.fn = node.fn
        return top

    def lookup(self, ref: str, base: str, loc: str) -> tuple[Any, str]:
        uri, _, fragment = ref.partition("#")
        if uri:
            uri = self.join(base, uri, loc) if base else uri
            if uri not in self.resources:
                # MCP 2026-07-28 (SEP-2106): never dereference a $ref to a network URI.
                raise LocalProtocolError(f"remote $ref not allowed: {ref!r} at {loc}")
            base = uri
        target = self.resources[base]
        if fragment.startswith("/"):
            for token in fragment[1:].split("/"):
                ident = target.get("$id") if isinstance(target, Mapping) else None
                if isinstance(ident, str) and ident.partition("#")[0]:
                    # Passing through an embedded resource changes the base URI.
                    base = self.join(base, ident.partition("#")[0], loc)
                    self.resources.setdefault(base, target)
                token = unquote(token).replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and token in target:
                    target = target[token]
                elif isinstance(target, list) and re.fullmatch("0|[1-9][0-9]*", token):
                    if int(token) >= len(target):
                        raise self.fail(loc, f"unresolvable $ref {ref!r}")
                    target = target[int(token)]
                else:
                    raise self.fail(loc, f"unresolvable $ref {ref!r}")
        elif fragment:
            if (base, fragment) not in self.anchors:
                raise self.fail(loc, f"unresolvable $ref {ref!r}")
            target = self.anchors[base, fragment]
        return target, base

    def node(self, schema: Any, loc: str) -> Node:
        if schema is True or schema is False:
            return _ACCEPT if schema else _REJECT
        if not isinstance(schema, Mapping):
            raise self.fail(loc, f"a schema must be an object or a boolean, not {kind(schema)}")
        key = (id(schema), self.base)
        found = self.memo.get(key)
        if found is not None:
            return found
        if self.depth >= _MAX_SCHEMA_DEPTH:
            raise self.fail(loc, f"the schema nests deeper than {_MAX_SCHEMA_DEPTH} levels")
        outer = self.base
        if not (self.draft07 and "$ref" in schema):  # draft-07: $ref hides its siblings
            self.identify(schema, loc)
        self.depth += 1
        node = self.build(schema, loc)
        self.depth -= 1
        self.base = outer
        self.memo[key] = node
        return node

    def identify(self, schema: Mapping[str, Any], loc: str) -> None:
        """Register ``$id`` (a new base URI, or a draft-07 ``#name`` anchor) and anchors."""
        ident = schema.get("$id")
        if ident is not None:
            if not isinstance(ident, str):
                raise self.fail(loc, "'$id' must be a string")
            uri, _, fragment = ident.partition("#")
            if uri:
                self.base = self.join(self.base, uri, loc) if self.base else uri
                self.resources.setdefault(self.base, schema)
            if fragment:
                self.anchors[self.base, fragment] = schema
        for keyword in ("$anchor", "$dynamicAnchor"):
            name = schema.get(keyword)
            if name is not None:
                if not isinstance(name, str):
                    raise self.fail(loc, f"'{keyword}' must be a string")
                self.anchors[self.base, name] = schema

    def build(self, schema: Mapping[str, Any], loc: str) -> Node:
        for keyword, problem in _UNSUPPORTED.items():
            if keyword in schema:
                raise self.fail(loc, problem)
        for keyword in ("$defs", "definitions"):  # compiled for their errors, $id and anchors
            self.subschemas(schema, keyword, loc)
        alias = None
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise self.fail(loc, "'$ref' must be a string")
            alias = Node()
            self.pending.append((alias, ref, self.base, f"{loc}/$ref"))
            if self.draft07:  # draft-07 core section 8.3: siblings of $ref are ignored
                return alias
        checks: dict[type, list[Check]] = {t: [] for t in (object, dict, list, str, int)}
        types = self.keywords(schema, loc, checks)
        if alias is not None:
            if types is None and not any(checks.values()):
                return alias  # a bare $ref costs no extra step or level
            checks[object].append(c.ref_check(alias))
        generic, num = checks.pop(object), checks[int]
        by_type: dict[type, list[Check]] = {**checks, float: num}
        leaf = schema.keys().isdisjoint(_APPLICATORS)
        return Node(make_node_fn(types, generic, by_type, leaf))

    def keywords(
        self, schema: Mapping[str, Any], loc: str, checks: dict[type, list[Check]]
    ) -> list[str] | None:
        """Compile the keywords into ``checks`` by instance type; return ``type``'s names."""
        get = schema.get
        generic, obj, arr = checks[object], checks[dict], checks[list]
        types = None
        if "type" in schema:
            names = [get("type")] if isinstance(get("type"), str) else get("type")
            if not isinstance(names, list) or not all(
                isinstance(n, str) and n in _TYPES for n in names
            ):
                raise self.fail(loc, "'type' must be a type name or a list of type names")
            types = list(dict.fromkeys(names))
        if "enum" in schema:
            if not isinstance(get("enum"), list):
                raise self.fail(loc, "'enum' must be an array")
            generic.append(self.enum(schema["enum"], "enum", loc))
        if "const" in schema:
            generic.append(self.enum([get("const")], "const", loc))
        for bound, exclusive, op in (
            ("minimum", "exclusiveMinimum", ">="),
            ("maximum", "exclusiveMaximum", "<="),
        ):
            strict = get(exclusive) is True  # draft-04 boolean form modifies the bound
            if bound in schema:
                which = exclusive if strict else bound
                limit = self.number(schema, bound, loc)
                checks[int].append(c.bound_check(limit, op[0] if strict else op, which))
            if exclusive in schema and not isinstance(get(exclusive), bool):
                limit = self.number(schema, exclusive, loc)
                checks[int].append(c.bound_check(limit, op[0], exclusive))
        if "multipleOf" in schema:
            if self.number(schema, "multipleOf", loc) <= 0:
                raise self.fail(loc, "'multipleOf' must be greater than 0")
            checks[int].append(c.multiple_of_check(schema["multipleOf"]))
        for keyword, at_least, bucket, nouns in _SIZES:
            if keyword in schema:
                limit = self.count(schema, keyword, loc)
                checks[bucket].append(c.size_check(limit, at_least, keyword, nouns))
        if "pattern" in schema:  # a peer's unsafe one goes unchecked (the schema is kept)
            with contextlib.suppress(UnsafePattern):
                checks[str].append(c.pattern_check(self.regex(get("pattern"), loc)))
        if "format" in schema:
            if not isinstance(get("format"), str):
                raise self.fail(loc, "'format' must be a string")
            if self.check_formats and get("format") in c.FORMATS:
                checks[str].append(c.format_check(schema["format"]))
        self.object_keywords(schema, loc, obj)
        self.array_keywords(schema, loc, arr)
        for keyword in ("allOf", "anyOf", "oneOf"):
            if keyword in schema:
                nodes = self.subschema_list(schema, keyword, loc, non_empty=True)
                check = c.all_of_check(nodes) if keyword == "allOf" else None
                generic.append(check or c.any_of_check(nodes, keyword))
        if "not" in schema:
            generic.append(c.not_check(self.node(get("not"), f"{loc}/not")))
        if "if" in schema:
            condition = self.node(get("if"), f"{loc}/if")
            then = self.node(get("then"), f"{loc}/then") if "then" in schema else None
            otherwise = self.node(get("else"), f"{loc}/else") if "else" in schema else None
            if then is not None or otherwise is not None:
                generic.append(c.if_check(condition, then, otherwise))
        return types

    def object_keywords(self, schema: Mapping[str, Any], loc: str, obj: list[Check]) -> None:
        get = schema.get
        props = self.subschemas(schema, "properties", loc)
        try:
            patterns = [
                (self.regex(source, loc), node)
                for source, node in self.subschemas(schema, "patternProperties", loc).items()
            ]
        except UnsafePattern as exc:  # (which properties a subschema applies to: needed)
            raise self.fail(loc, f"a patternProperties pattern from a peer: {exc}") from None
        additional = None
        if "additionalProperties" in schema:
            additional = self.node(get("additionalProperties"), f"{loc}/additionalProperties")
        if additional is not None and additional.fn is accept:
            additional = None
        if props or patterns or additional is not None:
            obj.append(c.properties_check(props, patterns, additional))
        if "required" in schema:
            obj.append(c.required_check(self.names(get("required"), "required", loc)))
        for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
            value = get(keyword, {})
            if not isinstance(value, Mapping):
                raise self.fail(loc, f"'{keyword}' must be an object")
            for name, item in value.items():
                where = f"{loc}/{keyword}/{_escape(name)}"
                if keyword == "dependentSchemas" or (
                    keyword == "dependencies" and not isinstance(item, list)
                ):
                    obj.append(c.dependent_schema_check(name, self.node(item, where)))
                else:
                    names = self.names(item, keyword, where)
                    obj.append(c.required_check(names, keyword, when=name))
        if "propertyNames" in schema:
            node = self.node(get("propertyNames"), f"{loc}/propertyNames")
            if node.fn is not accept:
                obj.append(c.property_names_check(node))

    def array_keywords(self, schema: Mapping[str, Any], loc: str, arr: list[Check]) -> None:
        get = schema.get
        prefix = self.subschema_list(schema, "prefixItems", loc)
        rest, rest_keyword = None, "items"
        if isinstance(get("items"), list):  # draft-07 tuple form, honoured in every dialect
            if "prefixItems" in schema:
                raise self.fail(loc, "'items' must be a schema when 'prefixItems' is present")
            prefix = self.subschema_list(schema, "items", loc)
            if "additionalItems" in schema:
                rest = self.node(get("additionalItems"), f"{loc}/additionalItems")
                rest_keyword = "additionalItems"
        elif "items" in schema:
            rest = self.node(get("items"), f"{loc}/items")
        if rest is not None and rest.fn is accept:
            rest = None
        if prefix or rest is not None:
            arr.append(c.items_check(prefix, rest, rest_keyword))
        if "contains" in schema:
            node = self.node(get("contains"), f"{loc}/contains")
            least = self.count(schema, "minContains", loc) if "minContains" in schema else 1
            most = self.count(schema, "maxContains", loc) if "maxContains" in schema else None
            if least or most is not None:
                arr.append(c.contains_check(node, least, most))
        if "uniqueItems" in schema:
            if not isinstance(get("uniqueItems"), bool):
                raise self.fail(loc, "'uniqueItems' must be a boolean")
            if get("uniqueItems"):
                arr.append(c.unique_check)

    # -- keyword values ---------------------------------------------------------------------

    def subschemas(self, schema: Mapping[str, Any], keyword: str, loc: str) -> dict[str, Node]:
        value = schema.get(keyword, {})
        if not isinstance(value, Mapping):
            raise self.fail(loc, f"'{keyword}' must be an object of schemas")
        return {
            name: self.node(sub, f"{loc}/{keyword}/{_escape(name)}") for name, sub in value.items()
        }

    def subschema_list(
        self, schema: Mapping[str, Any], keyword: str, loc: str, non_empty: bool = False
    ) -> list[Node]:
        value = schema.get(keyword, [])
        if not isinstance(value, list) or (non_empty and not value):
            what = "a non-empty array" if non_empty else "an array"
            raise self.fail(loc, f"'{keyword}' must be {what} of schemas")
        return [self.node(sub, f"{loc}/{keyword}/{i}") for i, sub in enumerate(value)]

    def enum(self, values: list[Any], keyword: str, loc: str) -> Check:
        try:
            return enum_check(values, keyword)
        except TooDeep:
            raise self.fail(loc, f"the '{keyword}' value nests too deeply") from None

    def names(self, value: Any, keyword: str, loc: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise self.fail(loc, f"'{keyword}' must be an array of strings")
        return value

    def number(self, schema: Mapping[str, Any], keyword: str, loc: str) -> int | float:
        value = schema[keyword]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            with contextlib.suppress(OverflowError):  # an int past a double's range
                if isfinite(value):
                    return value
        raise self.fail(loc, f"'{keyword}' must be a number (within a double's range)")

    def count(self, schema: Mapping[str, Any], keyword: str, loc: str) -> int:
        value = schema[keyword]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(loc, f"'{keyword}' must be a non-negative integer")
        return value

    def regex(self, source: Any, loc: str) -> Matcher:
        if not isinstance(source, str) or len(source) > _MAX_PATTERN:
            raise self.fail(loc, f"a pattern must be a string of at most {_MAX_PATTERN} chars")
        try:
            return compile_pattern(source)
        except (re.error, ValueError, OverflowError) as exc:
            if self.untrusted and isinstance(exc, UnsafePattern):
                raise  # (the caller decides what a peer's unsafe pattern means)
            raise self.fail(loc, refusal(source, exc)) from None
