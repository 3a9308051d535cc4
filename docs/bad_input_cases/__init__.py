"""How a bad-input case says what correct means (read by ``docs/bad_input.py``).

Each module here holds ``CASES``, a list of tuples, one per hostile but honest
input:

* ``(input, call)``: a case whose only correct outcome is a clear error.
  ``call()`` takes no argument and feeds the input to the package; if it
  returns instead of raising, the case counts as *silent* (nothing says the
  answer is right).
* ``(input, call, checks)``: a case where the package may answer. ``checks``
  is one :class:`Check` or a non-empty tuple of them, made with :func:`right`
  (a failure means a wrong answer: *silent*) or :func:`kept` (a failure means
  the user's data is gone: *lost*). Each check is a predicate on what
  ``call()`` returned, usually a :class:`Facts`.

A call that must look at what happened after the package refused (say, that
nothing was embedded before the error, or that the old index still loads)
catches the package's error itself and returns ``Facts(..., refused=err)``:
the case is then a *clear error* if every check holds.

Examples
--------
>>> from hierret.structure.chunking import chunk_text
>>> def call() -> Facts:
...     spans = chunk_text("x" * 2000, 900, 0)
...     return Facts(f"{len(spans)} passages", longest=max(e - s for s, e in spans))
>>> case = ("2,000 x's", call, right("every passage <= 900 characters",
...                                 lambda f: f.longest <= 900))
>>> facts = case[1]()
>>> str(facts), case[2].holds(facts)
('3 passages', True)
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

__all__ = ["Case", "Check", "Facts", "kept", "listen", "right"]


@dataclass(frozen=True)
class Check:
    """One thing a correct result satisfies.

    Parameters
    ----------
    claim : str
        What correct means, in words, for the page (e.g. "0 wrong vectors").
    holds : callable
        Given what the case's call returned; true when the claim holds.
    failing : {"silent", "lost"}
        The outcome when it does not hold: a wrong answer, or data gone.
    """

    claim: str
    holds: Callable[[Any], object]
    failing: Literal["silent", "lost"] = "silent"


#: One entry of a module's ``CASES``: ``(input, call)`` or ``(input, call, checks)``.
Case = (
    tuple[str, Callable[[], object]] | tuple[str, Callable[[], object], "Check | tuple[Check, ...]"]
)


def right(claim: str, holds: Callable[[Any], object]) -> Check:
    """A check that the answer is right; when it fails the case is *silent*."""
    return Check(claim, holds, "silent")


def kept(claim: str, holds: Callable[[Any], object]) -> Check:
    """A check that the user's data is still there; when it fails the case is *lost*."""
    return Check(claim, holds, "lost")


class Facts(SimpleNamespace):
    """What a case's call saw: a sentence for the page, and named values for the checks.

    Parameters
    ----------
    said : str
        What happened, in a few words (the page's "what happened" cell).
    refused : BaseException, optional
        The package's error, when the call caught it to check what happened after.
    **values
        Anything the checks read, as attributes.
    """

    said: str
    refused: BaseException | None

    def __init__(self, said: str, refused: BaseException | None = None, **values: Any) -> None:
        super().__init__(said=said, refused=refused, **values)

    def __str__(self) -> str:
        return self.said


@contextmanager
def listen() -> Iterator[list[str]]:
    """Collect what the package says meanwhile, instead of printing it.

    Yields a list that fills with ``"<WarningClass>: <message>"`` for each
    Python warning and ``"log <level>: <message>"`` for each record of level
    warning or above logged under ``hierret``.
    """
    heard: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(f"log {record.levelname.lower()}: {record.getMessage()}")

    logger = logging.getLogger("hierret")
    handler, propagate = _Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False

    def _show(message: Warning | str, category: type[Warning], *args: object, **kw: object) -> None:
        heard.append(f"{category.__name__}: {message}")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _show
            yield heard
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
