"""The kinds of rule a notebook parameter is checked against: a value among
:class:`Choices`, or a :class:`Rule` on the value that may read the run's other
parameters (:func:`at_least`, :func:`between`, :func:`below`, :func:`among`).

What each parameter *name* means is the house vocabulary
(:mod:`hierret.study.vocabulary`); how a notebook's parameters are read and
checked is :mod:`hierret.study.params`, whose face lists every public name here.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

__all__ = ["Choices", "Rule", "among", "at_least", "below", "between"]


@dataclass(frozen=True)
class Choices:
    """The values a parameter, or each item of a list parameter, may take.

    Parameters
    ----------
    listed : callable
        Returns the accepted values; called when the check runs, so values
        registered after import count. They are listed in messages and
        offered as suggestions.
    other : callable, optional
        Accepts further string values that cannot be listed (a folder, a hub id).
    other_text : str
        What ``other`` accepts, in words, for messages.
    fold_case : bool
        Compare strings ignoring case and surrounding space.
    none : bool
        Accept ``None`` too (the notebook reads it as "skip").

    Examples
    --------
    >>> rankers = Choices(lambda: ["bm25", "dense"])
    >>> rankers.accepts("dense"), rankers.accepts("Dense"), rankers.accepts(None)
    (True, False, False)
    >>> rankers.or_none().accepts(None)
    True
    """

    listed: Callable[[], Iterable[object]]
    other: Callable[[str], bool] | None = None
    other_text: str = ""
    fold_case: bool = False
    none: bool = False

    def or_none(self) -> Choices:
        """The same choices, and ``None``."""
        return replace(self, none=True)

    def _key(self, value: object) -> object:
        return value.strip().lower() if self.fold_case and isinstance(value, str) else value

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is one of the choices."""
        if value is None and self.none:
            return True
        try:
            if self._key(value) in {self._key(v) for v in self.listed()}:
                return True
        except TypeError:  # an unhashable value (a list) is never a listed choice
            return False
        return isinstance(value, str) and self.other is not None and self.other(value)

    def problem(self, label: str, value: object) -> str | None:
        """``None`` if ``value`` is accepted, else a message naming ``label`` and the choices."""
        if self.accepts(value):
            return None
        names = [str(v) for v in self.listed()] + ["None"] * self.none
        hint = ""
        if isinstance(value, str):
            close = difflib.get_close_matches(str(self._key(value)), names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        other = f", or {self.other_text}" if self.other_text else ""
        return f"{label} = {value!r} is not accepted{hint}; accepted: {', '.join(names)}{other}"


@dataclass(frozen=True)
class Rule:
    """A condition on a parameter's value that may read the run's other parameters.

    Parameters
    ----------
    holds : callable
        ``holds(value, values)``: whether ``value`` is accepted, given every
        parameter's value of the run (``values``). An exception counts as no.
    describe : callable
        ``describe(values)``: what is accepted, in words, for the message.
    takes_none : bool, default False
        ``None`` has a meaning for this parameter (all of them, the longest...),
        whatever the type of the notebook's default.

    Examples
    --------
    >>> below("max_chars").problem("overlap_chars", 950, {"max_chars": 900})
    'overlap_chars = 950 is not accepted; accepted: a whole number below max_chars (900)'
    >>> among("encoders").problem("baseline", "e5", {"encoders": ["e5", "minilm"]}) is None
    True
    """

    holds: Callable[[object, Mapping[str, object]], bool]
    describe: Callable[[Mapping[str, object]], str]
    takes_none: bool = False

    def problem(self, label: str, value: object, values: Mapping[str, object]) -> str | None:
        """``None`` if ``value`` is accepted, else a message naming ``label`` and the rule."""
        try:
            ok = bool(self.holds(value, values))
        except (TypeError, ValueError, KeyError):
            ok = False
        return (
            None
            if ok
            else f"{label} = {value!r} is not accepted; accepted: {self.describe(values)}"
        )


def is_count(value: object) -> bool:
    """A whole number (an integral, not a ``bool``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def at_least(low: int, *, none: bool = False) -> Rule:
    """A whole number of at least ``low`` (and ``None`` with ``none``)."""
    text = f"a whole number >= {low}" + (", or None (all of them)" if none else "")
    return Rule(
        lambda v, _: (v is None and none) or (is_count(v) and int(v) >= low),  # type: ignore[call-overload]
        lambda _: text,
        takes_none=none,
    )


def between(low: float, high: float, *, open_ends: bool = False) -> Rule:
    """A number in ``[low, high]`` (``(low, high)`` with ``open_ends``)."""
    ends = "()" if open_ends else "[]"

    def holds(v: object, _: Mapping[str, object]) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False
        return low < v < high if open_ends else low <= v <= high

    return Rule(holds, lambda _: f"a number in {ends[0]}{low}, {high}{ends[1]}")


def below(other: str) -> Rule:
    """A whole number >= 0 below the parameter ``other`` (an overlap below its size)."""
    return Rule(
        lambda v, values: (
            other not in values  # refused already: nothing to compare with
            or (is_count(v) and 0 <= v < values[other])  # type: ignore[operator]
        ),
        lambda values: f"a whole number below {other} ({values.get(other)!r})",
    )


def among(other: str) -> Rule:
    """One of the values of the list parameter ``other`` (a baseline among the arms)."""
    return Rule(
        lambda v, values: (
            other not in values  # refused already: nothing to compare with
            or v in values[other]  # type: ignore[operator]
        ),
        lambda values: f"one of {other} ({values.get(other)!r})",
    )


def each(rule: Rule, *, nonempty: bool = True) -> Rule:
    """Every item of a list (or every value of a dict) meets ``rule``; the list is not empty."""

    def items(v: object) -> list[object]:
        return list(v.values()) if isinstance(v, dict) else list(v)  # type: ignore[call-overload]

    return Rule(
        lambda v, values: (
            (not nonempty or len(items(v)) > 0) and all(rule.holds(x, values) for x in items(v))
        ),
        lambda values: (
            ("a non-empty list, each item " if nonempty else "each item ") + rule.describe(values)
        ),
    )
