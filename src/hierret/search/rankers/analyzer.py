r"""Text analyzers: turn a string into the list of index terms a ranker sees.

Two analyzers are named:

``"english"`` (the default)
    What a search engine's English analyzer does, in this order:

    1. Unicode NFKC normalisation, so that composed and decomposed forms of
       the same text (``"é"`` and ``"e" + U+0301``) and compatibility forms
       (the ligature ``"ﬁ"``) give the same terms;
    2. Unicode case folding (:meth:`str.casefold`: ``"Straße"`` and
       ``"STRASSE"`` both give ``"strasse"``, final sigma matches sigma);
    3. English possessives removed (``"Python's"`` → ``"Python"``), as
       Lucene's ``EnglishPossessiveFilter`` does;
    4. tokens are runs of word characters (regex ``\w+``: Unicode letters,
       digits and the underscore), so punctuation splits tokens
       (``"os.path.join"`` → ``os``, ``path``, ``join``);
    5. leading and trailing underscores are stripped but inner ones are kept,
       because identifiers matter in documentation about code:
       ``"__init__"`` → ``"init"`` (matches a query that says "init") and
       ``"sys.path_hooks"`` → ``"sys"``, ``"path_hooks"`` (one term, not two
       common words); a token made only of underscores is dropped;
    6. English stop words removed: Lucene's / Elasticsearch's default English
       stop set (:data:`ENGLISH_STOP_WORDS`, 33 words);
    7. Snowball English (Porter2) stemming with PyStemmer (C), so
       ``"running"`` → ``"run"`` and ``"studies"`` → ``"studi"``.

    Scripts written without spaces (Chinese, Japanese) are not segmented: a
    run of ideographs is one token.

``"whitespace"``
    Exactly :meth:`str.split` and nothing else, the tokenisation the
    ``rank_bm25`` README uses; kept as the baseline to compare against.
"""

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

# A run of word characters without its leading and trailing underscores: what
# ``t.strip("_") for t in re.findall(r"\w+", text)`` gives, minus the empty ones.
_WORD = re.compile(r"[^\W_](?:\w*[^\W_])?")
# "'s" (straight or curly apostrophe) closing a word: English possessive. The pattern
# starts with the apostrophe, not with the look-behind, so the engine scans for it fast.
_POSSESSIVE = re.compile(r"['\u2019](?<=\w['\u2019])[sS](?!\w)")
_APOSTROPHES = ("'", "\u2019")
# For ASCII text the same runs come faster from str.split: every ASCII character
# that is not a word character (as ``\w`` has it) becomes a space.
_ASCII_NON_WORD = str.maketrans(
    {chr(c): " " for c in range(128) if not re.fullmatch(r"\w", chr(c))}
)
#: Stems kept per thread and language before the memo starts again (bounds memory).
_MAX_STEMS = 1_000_000

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


def _stem(language: str, tokens: list[str]) -> list[str]:
    """``Stemmer(language).stemWords(tokens)``, each distinct word stemmed once per thread.

    Stemming is a function of the word alone, so a memo of word -> stem gives
    the same list; it saves re-running Snowball on every repeat of a word.
    """
    memos: dict[str, dict[str, str]] | None = getattr(_local, "stems", None)
    if memos is None:
        memos = _local.stems = {}
    memo = memos.setdefault(language, {})
    try:
        return [memo[t] for t in tokens]
    except KeyError:
        new = list(set(tokens).difference(memo))
        if len(memo) + len(new) > _MAX_STEMS:
            memo.clear()
            new = list(set(tokens))
        memo.update(zip(new, _stemmer(language).stemWords(new), strict=True))
        return [memo[t] for t in tokens]


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
        if self.possessives and any(a in text for a in _APOSTROPHES):
            text = _POSSESSIVE.sub("", text)
        stop = self.stopwords
        if self.tokenizer == "whitespace":
            tokens = [t for t in text.split() if t not in stop]
        elif text.isascii():
            runs = text.translate(_ASCII_NON_WORD).split()
            if "_" in text:
                runs = [r.strip("_") for r in runs]
            tokens = [t for t in runs if t and t not in stop]
        else:  # never empty, so no emptiness test
            tokens = [t for t in _WORD.findall(text) if t not in stop]
        if self.stemmer is not None:
            return _stem(self.stemmer, tokens)
        return tokens


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
