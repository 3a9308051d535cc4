"""What a loader dropped, by reason: the counts a bundle carries and a record states.

Examples
--------
>>> describe_dropped({"judgments naming unknown queries": 2, "documents without text": 0})
'2 judgments naming unknown queries'
>>> describe_dropped({})
'none'
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["describe_dropped", "nonzero"]


def nonzero(counts: Mapping[str, int]) -> dict[str, int]:
    """The reasons that dropped something, in the order given.

    Examples
    --------
    >>> nonzero({"a": 0, "b": 3})
    {'b': 3}
    """
    return {reason: n for reason, n in counts.items() if n}


def describe_dropped(counts: Mapping[str, int]) -> str:
    """``"<n> <reason>; ..."`` for every reason with a count, or ``"none"``."""
    parts = [f"{n} {reason}" for reason, n in nonzero(counts).items()]
    return "; ".join(parts) if parts else "none"
