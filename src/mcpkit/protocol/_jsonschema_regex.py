"""``pattern`` and ``patternProperties`` regular expressions: ECMA-262 as Python reads it.

JSON Schema patterns are ECMA-262 regular expressions, unanchored. Python's :mod:`re`
reads most of them the same way, but not all, and the differences let strings through
that a pattern meant to keep out:

* ``$`` matches before a final newline in Python, only at the very end in ECMA-262 (so
  ``^[a-z]+$`` accepted ``"rm\\n"``): it becomes ``\\Z``;
* ``.`` matches ``\\r``, U+2028 and U+2029 in Python, not in ECMA-262;
* ``\\d`` and ``\\w`` match non-ASCII digits and letters in Python, only ASCII in ECMA-262;
* ``[^]`` (any character) and ``[]`` (none), ``(?<name>...)`` and ``\\k<name>`` are
  ECMA-262 syntax Python spells otherwise;
* an unescaped ``[`` inside a class is literal in ECMA-262 (Python warns of set syntax).

Python's engine backtracks, and cannot be given a time limit: a repeated group
(``(a+)+``, ``(a|aa)+``) can take exponential time on a crafted string, and two long
repetitions that can match the same text take polynomial time (``a*a*b``: 6 s on 4,096
characters). Patterns from a peer (an ``outputSchema`` a client checks, against text from
that same peer) are refused unless they hold at most one long repetition (``*``, ``+``, or
a bound over 16) and repeat no group (see :func:`python_pattern`, :class:`UnsafePattern`).
"""

from __future__ import annotations

from typing import Final

__all__ = ["UnsafePattern", "python_pattern"]


class UnsafePattern(ValueError):
    """A peer's pattern that Python's backtracking engine could take too long on."""


#: A repetition allowing more than this many occurrences counts as long.
_LONG: Final = 16

_DOT: Final = "[^\\n\\r\\u2028\\u2029]"
_OUTSIDE: Final = {"d": "[0-9]", "D": "[^0-9]", "w": "[a-zA-Z0-9_]", "W": "[^a-zA-Z0-9_]"}
_INSIDE: Final = {"d": "0-9", "w": "a-zA-Z0-9_"}
_GROUP_OPENINGS: Final = ("(?:", "(?=", "(?!", "(?<=", "(?<!")


def _escape(source: str, i: int, inside: bool) -> tuple[str, int]:
    """The Python form of the escape at ``source[i]`` (a backslash) and where it ends."""
    if i + 1 >= len(source):
        raise ValueError("the pattern ends with a lone backslash")
    char = source[i + 1]
    table = _INSIDE if inside else _OUTSIDE
    if char in table:
        return table[char], i + 2
    if not inside and char == "k" and source.startswith("<", i + 2):
        end = source.find(">", i + 3)
        if end < 0:
            raise ValueError("an unterminated \\k<name> back reference")
        return f"(?P={source[i + 3 : end]})", end + 1
    return source[i : i + 2], i + 2


def _char_class(source: str, i: int) -> tuple[str, int]:
    """The Python form of the class starting at ``source[i]`` (``[``) and where it ends."""
    j = i + 1
    negated = source.startswith("^", j)
    if negated:
        j += 1
    if source.startswith("]", j):  # ECMA-262: [] matches nothing, [^] anything
        return ("[\\s\\S]" if negated else "(?!)"), j + 1
    body: list[str] = []
    while j < len(source) and source[j] != "]":
        if source[j] == "\\":
            text, j = _escape(source, j, inside=True)
            body.append(text)
        else:
            body.append("\\[" if source[j] == "[" else source[j])
            j += 1
    if j >= len(source):
        raise ValueError("an unterminated character class")
    return "[" + ("^" if negated else "") + "".join(body) + "]", j + 1


def _quantifier(source: str, i: int) -> tuple[str, int, bool, bool] | None:
    """The quantifier at ``source[i]``, where it ends, whether it repeats (allows more
    than one) and whether it is long (allows more than ``_LONG``); ``None`` when there is
    none (a ``{`` that is not one is a literal)."""
    char = source[i]
    if char in "*+?":
        end, repeats, long = i + 1, char != "?", char != "?"
    elif char == "{":
        close = source.find("}", i)
        inner = source[i + 1 : close] if close > 0 else ""
        low, comma, high = inner.partition(",")
        if not low.isdigit() or not (high.isdigit() or high == "") or (high and not comma):
            return None
        end = close + 1
        most = int(low) if not comma else (None if high == "" else int(high))
        repeats = most is None or most > 1
        long = most is None or most > _LONG
    else:
        return None
    if source.startswith("?", end):  # lazy
        end += 1
    return source[i:end], end, repeats, long


def python_pattern(source: str, *, refuse_nested: bool = False) -> str:
    """The Python :mod:`re` source matching what the ECMA-262 ``source`` matches.

    Raises:
        UnsafePattern: (``refuse_nested``, for a peer's pattern) a repetition applies to a
            group, or the pattern holds more than one long repetition.
        ValueError: the pattern is malformed.
    """
    out: list[str] = []
    # Per open group: does it hold a repetition? The last atom: was it a group?
    holds = [False]
    last_is_group = False
    long_ones = 0
    i = 0
    while i < len(source):
        char = source[i]
        quantified = _quantifier(source, i) if out else None
        if quantified is not None:
            text, i, repeats, long = quantified
            if repeats:
                if last_is_group and refuse_nested:
                    raise UnsafePattern(
                        "a repeated group can take exponential time on Python's regular "
                        "expressions (ReDoS)"
                    )
                holds[-1] = True
            long_ones += long
            if long_ones > 1 and refuse_nested:
                raise UnsafePattern(
                    "two long repetitions can take polynomial time on Python's regular "
                    "expressions (ReDoS)"
                )
            out.append(text)
            last_is_group = False
            continue
        last_is_group = False
        if char == "\\":
            text, i = _escape(source, i, inside=False)
        elif char == "[":
            text, i = _char_class(source, i)
        elif char == "(":
            opening = next((o for o in _GROUP_OPENINGS if source.startswith(o, i)), None)
            if opening is None and source.startswith("(?<", i):
                opening, text = "(?<", "(?P<"  # a named group
            else:
                text = opening or "("
            i += len(opening or "(")
            holds.append(False)
        elif char == ")":
            if len(holds) == 1:
                raise ValueError("an unbalanced ')'")
            inner = holds.pop()
            holds[-1] = holds[-1] or inner
            last_is_group = True
            text, i = ")", i + 1
        elif char == "$":
            text, i = "\\Z", i + 1
        elif char == "{":  # not a quantifier (that was tried first): a literal in ECMA-262
            text, i = "\\{", i + 1
        elif char == ".":
            text, i = _DOT, i + 1
        else:
            text, i = char, i + 1
        out.append(text)
    return "".join(out)
