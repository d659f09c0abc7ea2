"""Split a docstring into the description a model reads and per-parameter descriptions.

Three styles are understood, because tool authors use all three:

* Google: ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Keyword Args:``) with entries
  ``name (type): text`` or ``name: text``, plus ``Returns:`` / ``Yields:`` / ``Raises:``;
* numpy: a ``Parameters`` heading underlined with dashes, entries ``name : type`` followed by
  indented text, plus ``Returns`` / ``Yields`` / ``Raises`` / ``Other Parameters``;
* Sphinx: ``:param name:`` / ``:param type name:``, ``:type:``, ``:returns:``, ``:rtype:``,
  ``:raises X:`` field lines.

The sections about parameters, return value and exceptions are removed from the description:
they repeat what the schema already says, and ``Raises`` lists implementation details a model
cannot act on. Every other section (``Examples``, ``Note`` ...) stays.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Docstring", "parse_docstring"]

_GOOGLE_PARAMS: Final = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "kwargs"}
)
_GOOGLE_RETURNS: Final = frozenset({"returns", "return", "yields", "yield"})
_GOOGLE_RAISES: Final = frozenset({"raises", "raise", "except", "exceptions"})
_GOOGLE_SECTIONS: Final = _GOOGLE_PARAMS | _GOOGLE_RETURNS | _GOOGLE_RAISES
_NUMPY_PARAMS: Final = frozenset({"parameters", "other parameters", "keyword arguments"})
_NUMPY_RETURNS: Final = frozenset({"returns", "yields"})
_NUMPY_RAISES: Final = frozenset({"raises"})

_GOOGLE_HEADER: Final = re.compile(r"^(?P<indent>\s*)(?P<title>[A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ENTRY: Final = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")
_NUMPY_UNDERLINE: Final = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ENTRY: Final = re.compile(r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_SPHINX_FIELD: Final = re.compile(r"^\s*:(?P<kind>\w+)(?P<args>[^:]*):\s*(?P<text>.*)$")
_SPHINX_PARAM_KINDS: Final = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})


@dataclass(frozen=True)
class Docstring:
    """A parsed docstring.

    Attributes:
        description: the text without the parameter, return and exception sections
            (``None`` when nothing is left).
        params: parameter name -> description (whitespace collapsed to single spaces).
        returns: the description of the return value, if the docstring has one.
    """

    description: str | None
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


def parse_docstring(doc: str | None) -> Docstring:
    """Parse a Google, numpy or Sphinx style docstring (styles may even be mixed).

    Never raises: text that matches no known section is kept in the description as is.
    """
    if not doc or not doc.strip():
        return Docstring(None)
    lines = inspect.cleandoc(doc).splitlines()
    header = _GOOGLE_HEADER.match(lines[0])
    # A docstring that opens with a section ("Args:" on the first line) loses the section's
    # indentation to cleandoc, which dedents the other lines together: put it back.
    if (
        header
        and header["title"].strip().lower() in _GOOGLE_SECTIONS
        and all(_indent(line) == 0 for line in lines[1:] if line.strip())
    ):
        lines = [lines[0], *(f"    {line}" if line.strip() else line for line in lines[1:])]
    params: dict[str, str] = {}
    returns: list[str] = []
    lines = _strip_numpy(lines, params, returns)
    lines = _strip_google(lines, params, returns)
    lines = _strip_sphinx(lines, params, returns)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in lines)).strip()
    return Docstring(text or None, params, " ".join(returns) or None)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(" ".join(parts).split())


def _strip_google(lines: list[str], params: dict[str, str], returns: list[str]) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(lines):
        header = _GOOGLE_HEADER.match(lines[i])
        title = header["title"].strip().lower() if header else ""
        if not header or title not in _GOOGLE_SECTIONS:
            kept.append(lines[i])
            i += 1
            continue
        # The section is every following line that is blank or indented deeper than its header.
        base = len(header["indent"])
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
            end += 1
        body = [line for line in lines[i + 1 : end] if line.strip()]
        if title in _GOOGLE_PARAMS:
            _google_entries(body, params)
        elif title in _GOOGLE_RETURNS:
            returns.append(_join([line.strip() for line in body]))
        i = end
    return kept


def _google_entries(body: list[str], params: dict[str, str]) -> None:
    if not body:
        return
    entry_indent = min(_indent(line) for line in body)
    name: str | None = None
    text: list[str] = []
    for line in body:
        match = _GOOGLE_ENTRY.match(line.strip()) if _indent(line) == entry_indent else None
        if match:
            if name is not None:
                params[name] = _join(text)
            name, text = match["name"], [match["text"]]
        elif name is not None:
            text.append(line.strip())
    if name is not None:
        params[name] = _join(text)


def _strip_numpy(lines: list[str], params: dict[str, str], returns: list[str]) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(lines):
        is_header = i + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[i + 1]))
        title = lines[i].strip().lower() if is_header else ""
        if not is_header or title not in _NUMPY_PARAMS | _NUMPY_RETURNS | _NUMPY_RAISES:
            kept.append(lines[i])
            i += 1
            continue
        # The section runs until the next underlined heading.
        end = i + 2
        while end < len(lines) and not (
            end + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[end + 1]) and lines[end].strip()
        ):
            end += 1
        body = lines[i + 2 : end]
        if title in _NUMPY_PARAMS:
            _numpy_entries(body, params)
        elif title in _NUMPY_RETURNS:
            returns.append(_join([line.strip() for line in body if _indent(line) > 0]))
        i = end
    return kept


def _numpy_entries(body: list[str], params: dict[str, str]) -> None:
    names: list[str] = []
    text: list[str] = []
    for line in body:
        if not line.strip():
            continue
        match = _NUMPY_ENTRY.match(line) if _indent(line) == 0 else None
        if match:
            for name in names:
                params[name] = _join(text)
            names = [n.strip().lstrip("*") for n in match["names"].split(",")]
            text = []
        else:
            text.append(line.strip())
    for name in names:
        params[name] = _join(text)


def _strip_sphinx(lines: list[str], params: dict[str, str], returns: list[str]) -> list[str]:
    kept: list[str] = []
    i = 0
    while i < len(lines):
        match = _SPHINX_FIELD.match(lines[i])
        if not match:
            kept.append(lines[i])
            i += 1
            continue
        # A field's text continues on the following lines indented deeper than the field.
        base = _indent(lines[i])
        end = i + 1
        while end < len(lines) and lines[end].strip() and _indent(lines[end]) > base:
            end += 1
        text = _join([match["text"], *(line.strip() for line in lines[i + 1 : end])])
        kind, args = match["kind"].lower(), match["args"].split()
        if kind in _SPHINX_PARAM_KINDS and args:
            params[args[-1].lstrip("*")] = text
        elif kind in {"returns", "return", "yields", "yield"}:
            returns.append(text)
        i = end
    return kept
