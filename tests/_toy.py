"""The small corpus and the counting encoder the test floors share.

Three test modules of two floors (``core/test_search_frontdoor.py``,
``study/test_experiment.py``, ``study/test_casebook.py``) each cut the embedded Python
reference the same way: its first gold questions, the documents those questions need
and a few more. Two (``core/test_cache.py``, ``core/test_levels.py``) each counted the
batches a hash encoder embeds. Both live here once. A helper at the top of ``tests/``
is shared by floors, so it imports the core only (``tests/project/test_test_floors.py``).
"""

from __future__ import annotations

import functools
from typing import Any

from numpy.typing import NDArray

from hierret.datasets import default_gold_path, load_gold, load_python_reference
from hierret.encoders import HashEncoder
from hierret.structure.units import Corpus, Query


@functools.cache
def reference_slice(questions: int, extra: int) -> tuple[Corpus, tuple[Query, ...]]:
    """The Python reference cut to what its first ``questions`` gold questions need.

    Parameters
    ----------
    questions : int
        How many of the gold questions, in their order.
    extra : int
        How many of the corpus's first documents to keep besides those the questions'
        evidence is in (documents no question needs, for the rankings to pass over).

    Returns
    -------
    tuple[Corpus, tuple[Query, ...]]
        The corpus (its name and identity those of the whole reference, its documents
        in the reference's order) and the questions. Made once a process for each
        ``(questions, extra)``: neither value is changed by the tests that share it.

    Examples
    --------
    >>> corpus, queries = reference_slice(2, 0)
    >>> len(queries)
    2
    >>> {d for q in queries for d in q.evidence_docs} <= {d.id for d in corpus}
    True
    """
    docs = load_python_reference()
    queries = load_gold(default_gold_path(docs.name), docs).queries[:questions]
    keep = {d for q in queries for d in q.evidence_docs} | {d.id for d in list(docs)[:extra]}
    corpus = Corpus(docs.name, [d for d in docs if d.id in keep], docs.extra_identity)
    return corpus, tuple(queries)


class CountingEncoder(HashEncoder):
    """A hash encoder that records every batch that reached the model.

    Parameters
    ----------
    **kw : Any
        Passed to :class:`hierret.encoders.HashEncoder` (``dimension``, ``window``...).

    Attributes
    ----------
    calls : list[list[str]]
        The texts of each batch embedded, in order.

    Examples
    --------
    >>> enc = CountingEncoder(dimension=8)
    >>> _ = enc.encode_passages(["a", "b"])
    >>> enc.calls
    [['a', 'b']]
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.calls: list[list[str]] = []

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        self.calls.append(list(texts))
        return super()._embed(texts)
