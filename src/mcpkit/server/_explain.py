"""Validation errors as sentences a model can act on, each with a JSON Pointer.

msgspec reports ``Expected `int`, got `str` - at `$.age```; a model does better with
``'age' must be an integer, got a string`` at ``/age``. pydantic's errors are converted to
the same form, so a tool reports one format whichever library validated its arguments.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeAlias

import msgspec

from ._typehooks import dec_hook
from ._typeschema import REF_PREFIX

__all__ = [
    "Problem",
    "Segment",
    "explain_msgspec",
    "explain_pydantic",
    "json_kind",
    "pointer",
    "subject",
]

Segment: TypeAlias = str | int
Problem: TypeAlias = tuple[list[Segment], str]

_ELLIPSIS: Final = "[...]"
_AT: Final = re.compile(r" - at (?P<key>`key` in )?`\$(?P<path>[^`]*)`$", re.DOTALL)
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]|(\[\.\.\.\])")
_WANT_GOT: Final = re.compile(r"Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`")
_BOUND: Final = re.compile(r"Expected `(?:int|float|decimal)` (?P<op>>=|<=|>|<) (?P<n>\S+)")
_LENGTH: Final = re.compile(r"Expected `(?P<t>\w+)` of length (?P<op>>=|<=) (?P<n>\d+)")
_EXACT: Final = re.compile(r"Expected `array` of length (?P<n>[\d to]+), got (?P<got>\d+)")
_MISSING: Final = re.compile(r"Object missing required field `(?P<f>.*)`")
_UNKNOWN: Final = re.compile(r"Object contains unknown field `(?P<f>.*)`")
_WORDS: Final = {
    "int": "an integer",
    "float": "a number",
    "decimal": "a decimal number",
    "str": "a string",
    "bool": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
    "bytes": "a base64-encoded string",
    "datetime": "an RFC 3339 date-time string",
    "date": "an RFC 3339 date string (YYYY-MM-DD)",
    "time": "an RFC 3339 time string (HH:MM:SS)",
    "timedelta": "an ISO 8601 duration string",
    "uuid": "a UUID string",
}
_EXAMPLE: Final = "2025-01-31T12:00:00Z"
_FIXED: Final = {
    "Invalid RFC3339 encoded datetime": f"must be an RFC 3339 date-time string, e.g. {_EXAMPLE}",
    "Invalid RFC3339 encoded date": "must be an RFC 3339 date string (YYYY-MM-DD)",
    "Invalid RFC3339 encoded time": "must be an RFC 3339 time string (HH:MM:SS)",
    "Invalid ISO8601 duration": "must be an ISO 8601 duration string, e.g. PT1H30M",
    "Invalid UUID": "must be a UUID string",
    "Invalid base64 encoded string": "must be a base64-encoded string",
    "Invalid decimal string": "must be a decimal number",
    "Expected `datetime` with a timezone component": (
        f"must be a date-time with a timezone, e.g. {_EXAMPLE}"
    ),
    "Expected `datetime` without a timezone component": "must be a date-time without a timezone",
    "Expected `time` with a timezone component": "must be a time with a timezone",
    "Expected `time` without a timezone component": "must be a time without a timezone",
    "Integer value out of range": "is out of range",
}
_SHOULD: Final = re.compile(r"^[A-Z]\w* (?=should )")
_OPS: Final = {">=": "at least", "<=": "at most", ">": "greater than", "<": "less than"}
# What a length counts, and whether the sentence says "be N long" or "have N".
_UNITS: Final = {
    "str": ("character", "be", " long"),
    "bytes": ("byte", "be", " long"),
    "array": ("item", "have", ""),
    "object": ("entry", "have", ""),
}


def pointer(segments: list[Segment]) -> str:
    """The JSON Pointer (RFC 6901) of a path."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def subject(segments: list[Segment], root: str) -> str:
    """How a sentence names a path: ``'address.lines[0]'``, or ``root`` for the root."""
    if not segments:
        return root
    text = str(segments[0])
    for s in segments[1:]:
        text += f"[{s}]" if isinstance(s, int) else f".{s}"
    return f"'{text}'"


def json_kind(value: Any) -> str:
    """What JSON calls the type of ``value``, with an article: ``an array``."""
    if value is None:
        return "null"
    for kind, word in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if isinstance(value, kind):
            return _WORDS[word]
    return "an object" if isinstance(value, dict) else "an array"


def _phrase(names: str) -> str:
    words = [_WORDS.get(name.strip(), f"`{name.strip()}`") for name in names.split("|")]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _short(value: Any) -> str:
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _at(value: Any, segments: list[Segment]) -> Any:
    for s in segments:
        value = value[s]
    return value


def _replace(value: Any, segments: list[Segment], new: Any) -> Any:
    if not segments:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[segments[0]] = _replace(value[segments[0]], segments[1:], new)  # type: ignore[index]
    return copy


def _resolve_ellipses(
    message: str, segments: list[Segment], value: Any, tp: Any, strict: bool
) -> list[Segment]:
    # msgspec names a bad dict entry `[...]`: find its key by converting the value again
    # with that dict narrowed to one entry at a time (slow, but only on the error path).
    while _ELLIPSIS in segments:
        i = segments.index(_ELLIPSIS)
        try:
            entries = _at(value, segments[:i])
        except (KeyError, IndexError, TypeError):
            entries = None
        found: Segment | None = None
        if isinstance(entries, dict) and len(entries) <= 1000:
            for key in entries:
                try:
                    msgspec.convert(
                        _replace(value, segments[:i], {key: entries[key]}),
                        tp,
                        strict=strict,
                        str_keys=True,
                        dec_hook=dec_hook,
                    )
                except msgspec.ValidationError as exc:
                    if str(exc) == message:
                        found = key
                        break
        if found is None:
            return segments[:i]
        segments = [*segments[:i], found, *segments[i + 1 :]]
    return segments


def explain_msgspec(
    exc: msgspec.ValidationError,
    value: Any,
    tp: Any,
    *,
    strict: bool,
    base: list[Segment],
    schema: dict[str, Any],
    root: str,
) -> Problem:
    """Turn msgspec's ``Expected `int`, got `str` - at `$.age``` into a path and a sentence.

    ``value`` was converted to ``tp`` and failed; ``base`` is its path in the document
    ``schema`` (used to list allowed values); ``root`` names the document's root.
    """
    message = str(exc)
    match = _AT.search(message)
    text = message[: match.start()] if match else message
    steps: list[Segment] = []
    for step in _STEP.finditer(match["path"] if match else ""):
        name, index, _ = step.groups()
        steps.append(name if name is not None else int(index) if index is not None else _ELLIPSIS)
    steps = _resolve_ellipses(message, steps, value, tp, strict)
    path = base + steps
    if match and match["key"]:
        return path, f"a key of {subject(path, root)} {_sentence(text, path, value, steps, schema)}"
    if found := _MISSING.fullmatch(text):
        path = [*path, found["f"]]
        return path, f"missing required field {subject(path, root)}"
    if found := _UNKNOWN.fullmatch(text):
        path = [*path, found["f"]]
        return path, f"unexpected field {subject(path, root)}"
    return path, f"{subject(path, root)} {_sentence(text, path, value, steps, schema)}"


def _sentence(
    text: str, path: list[Segment], value: Any, steps: list[Segment], schema: dict[str, Any]
) -> str:
    if text in _FIXED:
        return _FIXED[text]
    if found := _WANT_GOT.fullmatch(text):
        return f"must be {_phrase(found['want'])}, got {_phrase(found['got'])}"
    if found := _BOUND.fullmatch(text):
        return f"must be {_OPS[found['op']]} {found['n']}"
    if found := re.fullmatch(r"Expected `\w+` that's a multiple of (\S+)", text):
        return f"must be a multiple of {found[1]}"
    if found := _LENGTH.fullmatch(text):
        unit, verb, tail = _UNITS.get(found["t"], ("item", "have", ""))
        if found["n"] != "1":
            unit = unit[:-1] + "ies" if unit.endswith("y") else unit + "s"
        return f"must {verb} {_OPS[found['op']]} {found['n']} {unit}{tail}"
    if found := _EXACT.fullmatch(text):
        count = found["n"] if " to " in found["n"] else f"exactly {found['n']}"
        return f"must have {count} items, got {found['got']}"
    if found := re.fullmatch(r"Expected `str` matching regex (.*)", text, re.DOTALL):
        # msgspec shows the pattern as a Python repr (backslashes doubled); the schema has it
        # as written.
        patterns = [node["pattern"] for node in _schema_nodes(schema, path) if "pattern" in node]
        return f"must match the pattern {patterns[0] if len(patterns) == 1 else found[1]}"
    if text.startswith(("Invalid enum value", "Invalid value")):
        try:
            bad = _short(_at(value, steps))
        except (KeyError, IndexError, TypeError):
            bad = text.split(" ", 3)[-1]
        allowed = _allowed_values(schema, path)
        if allowed:
            return f"must be one of {', '.join(_short(v) for v in allowed)}, got {bad}"
        return f"has an invalid value {bad}"
    return f"is invalid: {text}"


def _schema_nodes(schema: dict[str, Any], path: list[Segment]) -> list[dict[str, Any]]:
    """Every subschema of ``schema`` that may describe the value at ``path`` (following
    ``$ref`` into ``$defs`` and every branch of ``anyOf`` / ``oneOf`` / ``allOf``)."""
    defs = schema.get("$defs", {})

    def expand(nodes: list[Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        pending = list(nodes)
        while pending and len(out) < 100:  # bounded: recursive $defs
            node = pending.pop(0)
            if not isinstance(node, dict):
                continue
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(REF_PREFIX):
                pending.append(defs.get(ref[len(REF_PREFIX) :]))
            pending.extend(node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", []))
            out.append(node)
        return out

    nodes = expand([schema])
    for step in path:
        following: list[Any] = []
        for node in nodes:
            if isinstance(step, str):
                following.append(node.get("properties", {}).get(step))
                if isinstance(node.get("additionalProperties"), dict):
                    following.append(node["additionalProperties"])
            else:
                prefix = node.get("prefixItems", [])
                following.append(prefix[step] if step < len(prefix) else node.get("items"))
        nodes = expand(following)
    return nodes


def _allowed_values(schema: dict[str, Any], path: list[Segment]) -> list[Any]:
    values: list[Any] = []
    for node in _schema_nodes(schema, path):
        for value in node.get("enum", []) + ([node["const"]] if "const" in node else []):
            if value not in values:
                values.append(value)
    return values


def explain_pydantic(exc: Any, *, base: list[Segment], root: str) -> list[Problem]:
    """Turn each of a ``pydantic.ValidationError``'s errors into a path and a sentence."""
    problems: list[Problem] = []
    for error in exc.errors(include_url=False):
        path = base + [s if isinstance(s, int) else str(s) for s in error["loc"]]
        kind, message = error["type"], str(error["msg"])
        if kind == "missing":
            problems.append((path, f"missing required field {subject(path, root)}"))
        elif kind == "extra_forbidden":
            problems.append((path, f"unexpected field {subject(path, root)}"))
        elif should := _SHOULD.match(message):
            # "Input should be ...", "String should match ...": the subject replaces the noun.
            problems.append((path, f"{subject(path, root)} {message[should.end() :]}"))
        else:
            detail = message.removeprefix("Value error, ")
            problems.append((path, f"{subject(path, root)} is invalid: {detail}"))
    return problems
