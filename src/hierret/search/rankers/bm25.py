r"""Okapi BM25 over a sparse term-document matrix of precomputed term weights.

The scores are those of ``rank_bm25.BM25Okapi`` (version 0.2.2), the BM25 most
Python retrieval papers and tutorials use, to within floating-point rounding
(the tests hold them to 1e-9), but the index is built once as a sparse matrix
so that a query costs one pass over the postings of its terms instead of one
Python loop over every document per query term.

For a corpus of ``N`` documents of lengths ``|d|`` (on average ``avgdl``), a
term ``t`` found in ``n_t`` documents and ``f(t, d)`` times in document ``d``::

    idf(t) = ln(N − n_t + 0.5) − ln(n_t + 0.5)

and every negative idf (a term in more than half the documents) is replaced
by ``epsilon`` times the mean idf over the whole vocabulary (the mean taken
*before* the replacement), as ``BM25Okapi`` does. The weight stored for each
(term, document) pair is::

    w(t, d) = idf(t) · f(t, d) · (k1 + 1) / (f(t, d) + k1 · (1 − b + b · |d| / avgdl))

and a query's score for a document is the sum of ``w(t, d)`` over the
query's tokens, a repeated query token counting once per repetition (as in
``BM25Okapi.get_scores``). Query tokens not in the vocabulary add nothing.

**Tiny corpora.** Okapi's idf is 0 for a term in exactly half of the
documents and negative above (floored at ``epsilon`` times the mean idf, which
is itself ≤ 0 when most terms are common). On a corpus of two or three
documents every term's idf can be ≤ 0, and the scores then rank a document
*lower* the more query terms it holds ("cats purr" over ``["Dogs bark at
cats", "Cats purr"]`` puts the dogs first). The default stays Okapi's, equal
to ``BM25Okapi`` (the seed study and every published figure used it; the
tests hold it to ``rank_bm25``), and a query whose matching terms all have an
idf ≤ 0 logs one warning per index naming the fix: ``idf="lucene"``, Lucene's
``ln(1 + (N − n_t + 0.5) / (n_t + 0.5))``, always positive, which ranks such
corpora by the terms they hold (and differs from ``BM25Okapi`` everywhere, so
no published figure uses it). :meth:`BM25.matches` says which documents hold
a query term at all, whatever their score, and :meth:`BM25.cannot_rank` whether
Okapi's idf cannot rank a query: :meth:`hierret.search.searcher.Searcher.search` (what
``hierret search`` prints) then ranks that question's hits with Lucene's idf,
saying so, while evaluation runs keep Okapi's (on every published corpus, at
every level, no question of the published sets meets that condition:
measured when the fallback was added).

Departures from ``BM25Okapi``, all where it fails: an empty corpus is a clear
:class:`ValueError` (``BM25Okapi`` divides by zero); a corpus whose documents
are all empty gives an empty vocabulary and all-zero scores (``BM25Okapi``
divides by zero); and a query term absent from a document adds exactly 0 even
where ``BM25Okapi`` computes ``0 / 0`` and returns NaN for that document
(``k1 = 0``, or ``b = 1`` and an empty document).
"""

from __future__ import annotations

import itertools
import logging
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from hierret._validate import check_count
from hierret.search.rankers.analyzer import Analyzer, get_analyzer

__all__ = ["BM25", "IDFS", "top_k"]

log = logging.getLogger(__name__)
#: The idf formulas: Okapi's (``rank_bm25.BM25Okapi``, the default) and Lucene's.
IDFS = ("okapi", "lucene")


def top_k(
    scores: NDArray[np.float64], k: int, tie_keys: NDArray[np.int64] | None = None
) -> list[tuple[int, float]]:
    """Return the `k` best entries of `scores`, best first, ties by index (or `tie_keys`).

    Parameters
    ----------
    scores : numpy.ndarray of float, shape (n,)
        One score per document.
    k : int
        How many to return (all `n` if `k` >= `n`).
    tie_keys : numpy.ndarray of int, shape (n,), optional
        Equal scores are ordered by these keys, ascending (default: by index).
        :func:`hierret.search.runs.tie_keys` of the documents' ids gives the
        package's one tie rule (ids descending, as trec_eval).

    Returns
    -------
    list of (int, float)
        ``(index, score)`` pairs, by score descending, then by tie key.

    Raises
    ------
    TypeError
        If `k` is not an int (a bool, a float or a str are not).
    ValueError
        If `k` is negative (0 is allowed here and gives an empty list).

    Examples
    --------
    >>> top_k(np.array([0.5, 2.0, 0.5, 1.0]), 3)
    [(1, 2.0), (3, 1.0), (0, 0.5)]
    >>> top_k(np.array([0.5, 2.0, 0.5, 1.0]), 3, tie_keys=np.array([1, 2, 0, 3]))
    [(1, 2.0), (3, 1.0), (2, 0.5)]
    """
    k = min(check_count(k, "k", minimum=0), scores.shape[0])
    n = scores.shape[0]
    if k == 0:
        return []
    if k < n:
        # Every entry scoring at least the k-th largest score is a candidate, so
        # ties at the cut are broken by the tie keys, not by a partition's choice.
        positive = np.flatnonzero(scores > 0)
        if positive.shape[0] >= k:  # the k best are all positive: select among those
            sub = scores[positive]
            m = sub.shape[0]
            kth = np.partition(sub, m - k)[m - k]
            candidates = positive[sub >= kth]
        else:
            kth = np.partition(scores, n - k)[n - k]
            candidates = np.flatnonzero(scores >= kth)
    else:
        candidates = np.arange(n)
    ties = candidates if tie_keys is None else tie_keys[candidates]
    order = np.lexsort((ties, -scores[candidates]))[:k]
    best = candidates[order]
    return list(zip(best.tolist(), scores[best].tolist(), strict=True))


def _check_query(query: Sequence[str]) -> None:
    if isinstance(query, str):
        raise TypeError("query must be a sequence of str tokens, not a str; analyze it first")
    for token in query:
        if not isinstance(token, str):
            raise TypeError(f"query tokens must be str, got {type(token).__name__}")


class BM25:
    """An Okapi BM25 index scoring exactly like ``rank_bm25.BM25Okapi``.

    Parameters
    ----------
    corpus : iterable of sequence of str
        One token list per document (already analyzed). Documents may be
        empty.
    k1 : float, default 1.5
        Term-frequency saturation (>= 0).
    b : float, default 0.75
        Document-length normalisation, in [0, 1].
    epsilon : float, default 0.25
        Negative idfs are replaced by ``epsilon * average_idf`` (Okapi's idf).
    idf : {"okapi", "lucene"}, default "okapi"
        Okapi's idf, equal to ``BM25Okapi``'s, or Lucene's always-positive
        ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (for tiny corpora: see the
        module docstring).
    analyzer : Analyzer or None
        The analyzer the token lists came from, kept for the caller
        (:meth:`from_texts` sets it); the index itself never uses it.

    Attributes
    ----------
    n_docs : int
        Number of documents.
    vocabulary : Mapping[str, int]
        Term to row of :attr:`matrix`, in order of first occurrence.
    doc_len : numpy.ndarray of int64, shape (n_docs,)
        Tokens per document.
    avgdl : float
        Mean document length.
    doc_freq : numpy.ndarray of int64, shape (n_terms,)
        Documents containing each term.
    idf : numpy.ndarray of float64, shape (n_terms,)
        Each term's idf, after the epsilon floor.
    average_idf : float
        Mean idf over the vocabulary before the floor (0.0 if it is empty).
    matrix : scipy.sparse.csr_array, shape (n_terms, n_docs)
        The BM25 weight of each term in each document (row = term).

    Raises
    ------
    ValueError
        If the corpus is empty, or `k1` or `b` is out of range.
    TypeError
        If a document is a ``str`` (not a token list) or a token is not a
        ``str``.

    Examples
    --------
    >>> index = BM25([["hello", "world"], ["goodbye", "world"], []])
    >>> [(i, round(s, 4)) for i, s in index.search(["hello", "world"], k=2)]
    [(0, 0.4518), (1, 0.0348)]
    >>> index.score(["unknown"]).tolist()
    [0.0, 0.0, 0.0]
    """

    def __init__(
        self,
        corpus: Iterable[Sequence[str]],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        idf: str = "okapi",
        analyzer: Analyzer | None = None,
    ) -> None:
        if idf not in IDFS:
            raise ValueError(f"idf must be one of {IDFS}, got {idf!r}")
        self.idf_kind = idf
        self._warned = False
        if not k1 >= 0:
            raise ValueError(f"k1 must be >= 0, got {k1}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be in [0, 1], got {b}")
        if isinstance(corpus, str):
            raise TypeError("corpus must be a sequence of token lists, not a str")
        self.k1 = float(k1)
        self.b = float(b)
        self.epsilon = float(epsilon)
        self.analyzer = analyzer

        # Term ids in order of first occurrence; the defaultdict's factory runs only
        # for new terms, so mapping a token is one C-level lookup.
        vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        lookup = vocab.__getitem__
        term_ids = array("q")
        lengths = array("q")
        for doc in corpus:
            if isinstance(doc, str):
                raise TypeError("each document must be a sequence of str tokens, not a str")
            before = len(term_ids)
            term_ids.extend(map(lookup, doc))
            lengths.append(len(term_ids) - before)
        for token in vocab:  # one check per distinct term, not per token
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str, got {type(token).__name__}")
        n_docs = len(lengths)
        if n_docs == 0:
            raise ValueError("cannot build a BM25 index over an empty corpus")
        n_terms = len(vocab)

        self.n_docs = n_docs
        self._vocab: dict[str, int] = dict(vocab)
        self.doc_len: NDArray[np.int64] = np.frombuffer(lengths, dtype=np.int64).copy()
        self.avgdl = float(self.doc_len.sum()) / n_docs

        rows = np.frombuffer(term_ids, dtype=np.int64)
        cols = np.repeat(np.arange(n_docs, dtype=np.int64), self.doc_len)
        counts = sp.csr_array(
            (np.ones(rows.shape[0], dtype=np.float64), (rows, cols)), shape=(n_terms, n_docs)
        )
        counts.sum_duplicates()  # duplicates become term frequencies; indices sorted
        indptr: NDArray[np.int64] = np.asarray(counts.indptr, dtype=np.int64)
        indices: NDArray[np.int64] = np.asarray(counts.indices, dtype=np.int64)
        tf: NDArray[np.float64] = np.asarray(counts.data, dtype=np.float64)

        self.doc_freq: NDArray[np.int64] = np.diff(indptr)
        df = self.doc_freq.astype(np.float64)
        term_idf: NDArray[np.float64] = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        # Summed left to right like BM25Okapi (np.sum would sum pairwise, which is more
        # accurate but differs in the last bits over a large vocabulary).
        self.average_idf = float(np.cumsum(term_idf)[-1]) / n_terms if n_terms else 0.0
        term_idf[term_idf < 0] = self.epsilon * self.average_idf
        if self.idf_kind == "lucene":  # always positive; average_idf stays Okapi's
            term_idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        self.idf = term_idf

        # Same operation order as BM25Okapi.get_scores, term by term.
        dl = self.doc_len.astype(np.float64)
        # (avgdl is 0 only when every document is empty: then there are no weights.)
        norm = self.k1 * (1 - self.b + self.b * dl / self.avgdl) if self.avgdl else dl
        row_of = np.repeat(np.arange(n_terms, dtype=np.int64), self.doc_freq)
        weights = term_idf[row_of] * (tf * (self.k1 + 1) / (tf + norm[indices]))
        self.matrix: Any = sp.csr_array((weights, indices, indptr), shape=(n_terms, n_docs))
        self._indptr = indptr
        self._indices = indices
        self._weights: NDArray[np.float64] = weights

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        analyzer: str | Analyzer = "english",
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        idf: str = "okapi",
    ) -> BM25:
        """Analyze `texts` and index them.

        Parameters
        ----------
        texts : iterable of str
            One text per document.
        analyzer : str or Analyzer, default "english"
            See :func:`hierret.search.rankers.analyzer.get_analyzer`.
        k1, b, epsilon : float
            As for :class:`BM25`.
        idf : {"okapi", "lucene"}, default "okapi"
            As for :class:`BM25`.

        Returns
        -------
        BM25
            The index, with :attr:`analyzer` set, so queries are analyzed with
            ``index.analyzer(text)``.

        Examples
        --------
        >>> index = BM25.from_texts(["The cat sat.", "Dogs are running.", "A cat ran."])
        >>> [i for i, _ in index.search(index.analyzer("cats"), k=2)]
        [0, 2]
        """
        an = get_analyzer(analyzer)
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, not a str")
        return cls((an(t) for t in texts), k1=k1, b=b, epsilon=epsilon, idf=idf, analyzer=an)

    @property
    def vocabulary(self) -> Mapping[str, int]:
        """Term to row of :attr:`matrix` (read-only), in order of first occurrence."""
        return MappingProxyType(self._vocab)

    def __len__(self) -> int:
        """Return the number of documents."""
        return self.n_docs

    def __repr__(self) -> str:
        """Summarize the index: sizes, parameters, analyzer name."""
        name = self.analyzer.name if self.analyzer is not None else None
        return (
            f"BM25(n_docs={self.n_docs}, n_terms={len(self.vocabulary)}, k1={self.k1}, "
            f"b={self.b}, epsilon={self.epsilon}, idf={self.idf_kind!r}, analyzer={name!r})"
        )

    def _query_terms(self, query: Sequence[str]) -> dict[int, int]:
        """Term id -> count for the query's in-vocabulary tokens."""
        _check_query(query)
        counts: dict[int, int] = {}
        vocab = self._vocab
        for token in query:
            term = vocab.get(token)
            if term is not None:
                counts[term] = counts.get(term, 0) + 1
        return counts

    def score(self, query: Sequence[str]) -> NDArray[np.float64]:
        """BM25 score of every document for one query.

        Parameters
        ----------
        query : sequence of str
            Query tokens (analyzed like the corpus); repeats count repeatedly.

        Returns
        -------
        numpy.ndarray of float64, shape (n_docs,)
            Equal to ``BM25Okapi(corpus).get_scores(query)``.

        Raises
        ------
        TypeError
            If `query` is a ``str`` or holds a non-``str`` token.

        Examples
        --------
        >>> BM25([["a", "b"], ["b", "b"], ["c"]]).score(["a", "a"]).round(4).tolist()
        [0.9373, 0.0, 0.0]
        """
        scores = np.zeros(self.n_docs, dtype=np.float64)
        indptr, indices, weights = self._indptr, self._indices, self._weights
        terms = self._query_terms(query)
        if not self._warned and self._cannot_rank(terms):
            self._warned = True  # once per index
            log.warning(
                "BM25: every query term found has an Okapi idf <= 0 on this corpus of %d "
                "documents (each is in half of them or more), so its scores rank a "
                "document lower the more of them it holds; a corpus this small needs "
                "Lucene's always-positive idf: BM25(..., idf='lucene') "
                "(hierret search --bm25-idf lucene, Searcher(..., bm25_idf='lucene'))",
                self.n_docs,
            )
        for term, count in terms.items():
            start, end = indptr[term], indptr[term + 1]
            if count == 1:
                scores[indices[start:end]] += weights[start:end]
            else:
                scores[indices[start:end]] += count * weights[start:end]
        return scores

    def _cannot_rank(self, terms: Mapping[int, int]) -> bool:
        return bool(terms) and all(self.idf[t] <= 0 for t in terms)

    def cannot_rank(self, query: Sequence[str]) -> bool:
        """Whether every query token found has an idf <= 0 here (Okapi's idf on a corpus
        of a few documents), so that the scores rank a document *lower* the more of
        them it holds; ``False`` when no token is found.

        Examples
        --------
        >>> tiny = BM25.from_texts(["Dogs bark at cats", "Cats purr"])
        >>> tiny.cannot_rank(tiny.analyzer("cats purr")), tiny.cannot_rank(["zebra"])
        (True, False)
        """
        return self._cannot_rank(self._query_terms(query))

    def matches(self, query: Sequence[str]) -> NDArray[np.bool_]:
        """Which documents hold at least one of the query's tokens (whatever their score).

        Examples
        --------
        >>> BM25([["a", "b"], ["b"], ["c"]]).matches(["b", "z"]).tolist()
        [True, True, False]
        """
        found = np.zeros(self.n_docs, dtype=bool)
        for term in self._query_terms(query):
            found[self._indices[self._indptr[term] : self._indptr[term + 1]]] = True
        return found

    def search(
        self, query: Sequence[str], k: int = 10, tie_keys: NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]:
        """Return the `k` best documents for one query.

        Parameters
        ----------
        query : sequence of str
            Query tokens.
        k : int, default 10
            How many documents, an int >= 0 (all of them if `k` >= `n_docs`).
            Documents that match no query term (score 0) fill the list if too
            few match. An empty token list is a valid query here (a question
            of stop words analyzes to one) and scores every document 0; empty
            question *texts* are refused by :class:`~hierret.search.searcher.Searcher`.
        tie_keys : numpy.ndarray of int, optional
            How equal scores are ordered (see :func:`top_k`); default: by index.

        Returns
        -------
        list of (int, float)
            ``(document index, score)``, best first, ties by index ascending
            (or by ``tie_keys``).

        Examples
        --------
        >>> index = BM25([["a", "b"], ["b", "b"], ["c"]])
        >>> [(i, round(s, 4)) for i, s in index.search(["b"], k=2)]
        [(1, 0.0571), (0, 0.0391)]
        """
        check_count(k, "k", minimum=0)  # before scoring
        return top_k(self.score(query), k, tie_keys)

    def search_many(
        self,
        queries: Sequence[Sequence[str]],
        k: int = 10,
        tie_keys: NDArray[np.int64] | None = None,
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for several queries.

        Parameters
        ----------
        queries : sequence of sequence of str
            Query token lists.
        k : int, default 10
            Documents per query.
        tie_keys : numpy.ndarray of int, optional
            As :meth:`search` takes them.

        Returns
        -------
        list of list of (int, float)
            ``[search(q, k) for q in queries]``, bit for bit (one query at a
            time is as fast here as a sparse matrix product over all of them,
            and keeps batch and single results identical).

        Examples
        --------
        >>> index = BM25([["a", "b"], ["b", "b"], ["c"]])
        >>> [[i for i, _ in hits] for hits in index.search_many([["c"], ["a"], ["b"]], k=2)]
        [[2, 0], [0, 1], [1, 0]]
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of token lists, not a str")
        check_count(k, "k", minimum=0)
        return [top_k(self.score(query), k, tie_keys) for query in queries]
