"""FROZEN reference copy of the analyzers at commit 4acc063 (issue 11).

Used ONLY by ``tests/core/test_analyzer_speed.py``, which holds
:mod:`hierret.search.rankers.analyzer` to exactly the tokens this copy gives, so that
work on its speed cannot change a term. Copied from
``src/hierret/search/rankers/analyzer.py`` unchanged apart from this docstring. Do not
edit it to follow the package: it is the reference the package is held to.
"""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import Stemmer

__all__ = ["ANALYZERS", "ENGLISH_STOP_WORDS", "Analyzer", "get_analyzer"]

#: Lucene's default English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``,
#: the same 33 words as Elasticsearch's ``_english_`` stop list), see
#: https://lucene.apache.org/core/9_0_0/analysis/common/org/apache/lucene/analysis/en/EnglishAnalyzer.html
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if",
        "in", "into", "is", "it", "no", "not", "of", "on", "or", "such",
        "that", "the", "their", "then", "there", "these", "they", "this",
        "to", "was", "will", "with",
    }
)  # fmt: skip

_WORD = re.compile(r"\w+")
# "'s" (straight or curly apostrophe) closing a word: English possessive.
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019][sS](?!\w)")

# PyStemmer's Stemmer objects are not thread-safe: keep one per thread.
_local = threading.local()


def _stemmer(language: str) -> Stemmer.Stemmer:
    cache: dict[str, Stemmer.Stemmer] | None = getattr(_local, "stemmers", None)
    if cache is None:
        cache = {}
        _local.stemmers = cache
    stemmer = cache.get(language)
    if stemmer is None:
        stemmer = Stemmer.Stemmer(language)
        cache[language] = stemmer
    return stemmer


@dataclass(frozen=True)
class Analyzer:
    r"""A text analyzer: ``analyzer(text)`` gives the list of index terms.

    Parameters
    ----------
    name : str
        A name for reports and run configurations.
    tokenizer : {"words", "whitespace"}
        ``"words"``: runs of word characters (``\w+``) with leading and
        trailing underscores stripped; ``"whitespace"``: :meth:`str.split`.
    normalize : {"NFC", "NFKC", "NFD", "NFKD"} or None
        Unicode normalisation applied first, or ``None`` for none.
    casefold : bool
        Apply :meth:`str.casefold` (full Unicode case folding).
    possessives : bool
        Remove a trailing ``'s`` from words before tokenising.
    stopwords : frozenset of str
        Terms removed after case folding, before stemming.
    stemmer : str or None
        A Snowball language for PyStemmer (``"english"``), or ``None``.

    Examples
    --------
    >>> english = Analyzer()
    >>> english("The Runner's __init__ methods are RUNNING.")
    ['runner', 'init', 'method', 'run']
    >>> Analyzer(name="plain", stopwords=frozenset(), stemmer=None)("Sys.path_hooks")
    ['sys', 'path_hooks']
    """

    name: str = "english"
    tokenizer: Literal["words", "whitespace"] = "words"
    normalize: Literal["NFC", "NFKC", "NFD", "NFKD"] | None = "NFKC"
    casefold: bool = True
    possessives: bool = True
    stopwords: frozenset[str] = ENGLISH_STOP_WORDS
    stemmer: str | None = "english"

    def __post_init__(self) -> None:
        """Check the options; fail early on an unknown stemmer language."""
        if self.tokenizer not in ("words", "whitespace"):
            raise ValueError(f"tokenizer must be 'words' or 'whitespace', got {self.tokenizer!r}")
        if self.normalize not in (None, "NFC", "NFKC", "NFD", "NFKD"):
            raise ValueError(f"unknown Unicode normal form {self.normalize!r}")
        if self.stemmer is not None:
            _stemmer(self.stemmer)  # fail now on an unknown language
        object.__setattr__(self, "stopwords", frozenset(self.stopwords))

    def __call__(self, text: str) -> list[str]:
        """Analyze one text.

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        list of str
            Its terms, in text order (repeats kept).

        Raises
        ------
        TypeError
            If `text` is not a ``str``.
        """
        if not isinstance(text, str):
            raise TypeError(f"Analyzer expects str, got {type(text).__name__}")
        if self.normalize is not None:
            text = unicodedata.normalize(self.normalize, text)
        if self.casefold:
            text = text.casefold()
        if self.possessives:
            text = _POSSESSIVE.sub("", text)
        if self.tokenizer == "whitespace":
            tokens = text.split()
        else:
            tokens = [t.strip("_") for t in _WORD.findall(text)]
        stop = self.stopwords
        tokens = [t for t in tokens if t and t not in stop]
        if self.stemmer is not None:
            stems: list[str] = _stemmer(self.stemmer).stemWords(tokens)
            return stems
        return tokens

    def analyze_many(self, texts: list[str]) -> list[list[str]]:
        """Analyze several texts.

        Parameters
        ----------
        texts : list of str
            The texts.

        Returns
        -------
        list of list of str
            One term list per text.

        Examples
        --------
        >>> Analyzer().analyze_many(["Studies", "of the cats"])
        [['studi'], ['cat']]
        """
        return [self(t) for t in texts]


#: The named analyzers :func:`get_analyzer` knows.
ANALYZERS: Mapping[str, Analyzer] = MappingProxyType(
    {
        "english": Analyzer(),
        "whitespace": Analyzer(
            name="whitespace",
            tokenizer="whitespace",
            normalize=None,
            casefold=False,
            possessives=False,
            stopwords=frozenset(),
            stemmer=None,
        ),
    }
)


def get_analyzer(name: str | Analyzer = "english") -> Analyzer:
    """Return the analyzer of that name (or `name` itself if it is one).

    Parameters
    ----------
    name : str or Analyzer
        ``"english"`` (default) or ``"whitespace"``, or an :class:`Analyzer`.

    Returns
    -------
    Analyzer
        The analyzer.

    Raises
    ------
    ValueError
        If the name is not one of :data:`ANALYZERS`.
    TypeError
        If `name` is neither a ``str`` nor an :class:`Analyzer`.

    Examples
    --------
    >>> get_analyzer("whitespace")("Hello, World!")
    ['Hello,', 'World!']
    >>> get_analyzer("english")("Hello, World!")
    ['hello', 'world']
    """
    if isinstance(name, Analyzer):
        return name
    if not isinstance(name, str):
        raise TypeError(f"analyzer must be a name or an Analyzer, got {type(name).__name__}")
    try:
        return ANALYZERS[name]
    except KeyError:
        valid = ", ".join(repr(n) for n in sorted(ANALYZERS))
        raise ValueError(f"unknown analyzer {name!r}; valid names: {valid}") from None
