"""The keyword checks of the JSON Schema validator.

Each factory returns a closure ``(instance, path, ctx) -> bool`` over values and
:class:`~._jsonschema_runtime.Node` objects that :mod:`._jsonschema` compiled once; a
node runs only the checks for the instance's JSON type, so the checks for numbers, strings,
objects and arrays may assume their type. A failing check reports one error only while
``ctx.collect`` is true; composition keywords probe subschemas without building messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._jsonschema_regex import Matcher
from ._jsonschema_runtime import (
    STEP_MESSAGE,
    Check,
    Ctx,
    Exceeded,
    Node,
    Path,
    field,
    first_error,
    key_or_exceeded,
    kind,
    probe,
    reject,
    run_all,
    show,
)
from ._jsonschema_scalar import (
    FORMATS,
    bound_check,
    format_check,
    multiple_of_check,
    pattern_check,
    size_check,
)

__all__ = [
    "FORMATS",
    "all_of_check",
    "any_of_check",
    "bound_check",
    "contains_check",
    "dependent_schema_check",
    "format_check",
    "if_check",
    "items_check",
    "multiple_of_check",
    "not_check",
    "pattern_check",
    "properties_check",
    "property_names_check",
    "ref_check",
    "required_check",
    "size_check",
    "unique_check",
]


def unique_check(inst: Any, path: Path, ctx: Ctx) -> bool:
    """``uniqueItems: true`` with JSON equality; costs a step per item."""
    ctx.steps_left -= len(inst)
    if ctx.steps_left < 0:
        raise Exceeded(path, STEP_MESSAGE)
    seen: dict[Any, int] = {}
    for index, item in enumerate(inst):
        first = seen.setdefault(key_or_exceeded(item, path), index)
        if first != index:
            if ctx.collect:
                message = f"{field(path)} must not contain duplicates (items {first} and {index})"
                ctx.add(path, "uniqueItems", message)
            return False
    return True


def ref_check(node: Node) -> Check:
    """``$ref`` next to other keywords (2020-12 applies both)."""

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        return node.fn(inst, path, ctx)

    return check


# -- objects --------------------------------------------------------------------------------


def properties_check(
    props: dict[str, Node],
    patterns: Sequence[tuple[Matcher, Node]],
    additional: Node | None,
) -> Check:
    """``properties``, ``patternProperties`` and ``additionalProperties`` in one pass."""
    forbid = additional is not None and additional.fn is reject

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        ok = True
        for name, value in inst.items():
            node = props.get(name)
            matched = node is not None
            if node is not None and not node.fn(value, (path, name), ctx):
                if not ctx.collect:
                    return False
                ok = False
            if patterns and isinstance(name, str):  # non-string keys are not JSON
                for regex, pattern_node in patterns:
                    if regex.longest and len(name) > regex.longest:
                        # (neither matched nor not: which subschemas apply is unknown)
                        if not ctx.collect:
                            return False
                        ctx.add(
                            (path, name),
                            "patternProperties",
                            f"the property name is too long ({len(name)} characters) to "
                            f"be checked against the pattern {show(regex.source)} (at most "
                            f"{regex.longest})",
                        )
                        ok = False
                    elif regex.search(name):
                        matched = True
                        if not pattern_node.fn(value, (path, name), ctx):
                            if not ctx.collect:
                                return False
                            ok = False
            if matched or additional is None:
                continue
            if forbid:
                if not ctx.collect:
                    return False
                where = (path, name)
                ctx.add(where, "additionalProperties", f"unexpected property {field(where)}")
                ok = False
            elif not additional.fn(value, (path, name), ctx):
                if not ctx.collect:
                    return False
                ok = False
        return ok

    return check


def required_check(names: Sequence[str], keyword: str = "required", when: str = "") -> Check:
    """``required``, and ``dependentRequired`` for one trigger property (``when``)."""

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if when and when not in inst:
            return True
        missing = [name for name in names if name not in inst]
        if not missing:
            return True
        if ctx.collect:
            for name in missing:
                message = f"missing required property {field((path, name))}"
                if when:
                    message += f" (required when {field((path, when))} is present)"
                ctx.add(path, keyword, message)
        return False

    return check


def dependent_schema_check(when: str, node: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        return when not in inst or node.fn(inst, path, ctx)

    return check


def property_names_check(node: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        ok = True
        for name in inst:
            if not probe(node, name, (path, name), ctx):
                if not ctx.collect:
                    return False
                where = f" in {field(path)}" if path else ""
                ctx.add((path, name), "propertyNames", f"invalid property name {show(name)}{where}")
                ok = False
        return ok

    return check


# -- arrays ---------------------------------------------------------------------------------


def items_check(prefix: Sequence[Node], rest: Node | None, rest_keyword: str) -> Check:
    """``prefixItems`` + ``items`` (2020-12), or array ``items`` + ``additionalItems``."""
    count = len(prefix)
    forbid = rest is not None and rest.fn is reject

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        ok = True
        for index, item in enumerate(inst):
            if index < count:
                node = prefix[index]
            elif rest is None:
                break
            elif forbid:
                if ctx.collect:
                    items = "item" if count == 1 else "items"
                    message = f"{field(path)} must have at most {count} {items}, got {len(inst)}"
                    ctx.add(path, rest_keyword, message)
                return False
            else:
                node = rest
            if not node.fn(item, (path, index), ctx):
                if not ctx.collect:
                    return False
                ok = False
        return ok

    return check


def contains_check(node: Node, least: int, most: int | None) -> Check:
    """``contains`` with ``minContains`` / ``maxContains``."""

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        found = 0
        for index, item in enumerate(inst):
            if probe(node, item, (path, index), ctx):
                found += 1
                if most is None and found >= least:
                    return True
        if least <= found and (most is None or found <= most):
            return True
        if ctx.collect:
            few = found < least
            bound = f"at least {least}" if few else f"at most {most}"
            items = "item" if (least if few else most) == 1 else "items"
            message = f"{field(path)} must contain {bound} matching {items}, got {found}"
            ctx.add(path, "minContains" if few else "maxContains", message)
        return False

    return check


# -- composition ----------------------------------------------------------------------------


def all_of_check(nodes: Sequence[Node]) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        return run_all(nodes, inst, path, ctx)

    return check


def any_of_check(nodes: Sequence[Node], keyword: str) -> Check:
    """``anyOf``, or ``oneOf`` (which also fails when more than one alternative matches)."""
    one = keyword == "oneOf"

    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        matched: list[int] = []
        for index, node in enumerate(nodes):
            if probe(node, inst, path, ctx):
                matched.append(index)
                if not one or len(matched) > 1:
                    break
        if len(matched) == 1 or (matched and not one):
            return True
        if ctx.collect:
            if matched:
                message = (
                    f"{field(path)} must match exactly one {keyword} alternative, "
                    f"but matches alternatives {matched[0]} and {matched[1]}"
                )
            else:
                reasons = [first_error(node, inst, path, ctx) for node in nodes]
                message = _none_matched(reasons, inst, path, keyword)
            ctx.add(path, keyword, message)
        return False

    return check


def _none_matched(reasons: list[tuple[Path, str, str]], inst: Any, path: Path, kw: str) -> str:
    name = field(path)
    prefix = f"{name} must be "
    if all(keyword == "type" and where == path for where, keyword, _ in reasons):
        # The common optional value, anyOf [{"type": "string"}, {"type": "null"}].
        labels = dict.fromkeys(m[len(prefix) :].rsplit(", got ", 1)[0] for _, _, m in reasons)
        return f"{prefix}{' or '.join(labels)}, got {kind(inst)}"
    listed = "; ".join(message for _, _, message in reasons[:3])
    listed += "; ..." if len(reasons) > 3 else ""
    return f"{name} matches none of the {kw} alternatives: {listed}"


def not_check(node: Node) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        if not probe(node, inst, path, ctx):
            return True
        if ctx.collect:
            ctx.add(path, "not", f"{field(path)} must not match the 'not' schema")
        return False

    return check


def if_check(condition: Node, then: Node | None, otherwise: Node | None) -> Check:
    def check(inst: Any, path: Path, ctx: Ctx) -> bool:
        branch = then if probe(condition, inst, path, ctx) else otherwise
        return branch is None or branch.fn(inst, path, ctx)

    return check
