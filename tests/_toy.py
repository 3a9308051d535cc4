"""The small corpora and the counting encoder the test floors share.

Three test modules of two floors (``core/test_search_frontdoor.py``,
``study/test_experiment.py``, ``study/test_casebook.py``) each cut the embedded Python
reference the same way: its first gold questions, the documents those questions need
and a few more (:func:`reference_slice`). A tiny BEIR folder of three documents
(:func:`write_beir`) serves the BEIR loader's tests, the bundle's and the testbed's,
which imported it from one another. Two (``core/test_cache.py``, ``core/test_levels.py``)
each counted the batches a hash encoder embeds (:class:`CountingEncoder`). They live
here once. A helper at the top of ``tests/`` is shared by floors, so it imports the
core only (``tests/project/test_test_floors.py``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
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


#: The tiny BEIR folder's rows: a document without a title, one with ``metadata``.
BEIR_CORPUS: list[dict[str, object]] = [
    {"_id": "d1", "title": "Cats", "text": "Cats purr when content."},
    {"_id": "d2", "title": "", "text": "Dogs bark at strangers."},
    {"_id": "d3", "title": "Birds", "text": "Birds sing at dawn.", "metadata": {}},
]
#: Its questions: ``q3`` is judged in the train split only.
BEIR_QUERIES: list[dict[str, object]] = [
    {"_id": "q1", "text": "Which animal purrs?"},
    {"_id": "q2", "text": "Who sings in the morning?"},
    {"_id": "q3", "text": "Never judged in test."},
]
#: Its test judgments (graded, a zero kept) and train judgments, with their header.
BEIR_TEST_QRELS = "query-id\tcorpus-id\tscore\nq2\td3\t1\nq1\td1\t2\nq1\td2\t0\nq2\td1\t1\n"
BEIR_TRAIN_QRELS = "query-id\tcorpus-id\tscore\nq3\td2\t1\n"


def jsonl(rows: list[dict[str, object]]) -> str:
    """``rows`` as JSON lines, one object a line.

    >>> jsonl([{"_id": "d1"}, {"_id": "d2"}])
    '{"_id": "d1"}\\n{"_id": "d2"}\\n'
    """
    return "".join(json.dumps(r) + "\n" for r in rows)


def write_beir(root: Path, **overrides: str) -> Path:
    """Write the tiny BEIR folder at ``root``.

    Parameters
    ----------
    root : Path
        The folder to make (it must not exist); its name is the data set's.
    **overrides : str
        Replacement text for any of its files, by key: ``corpus``, ``queries``, ``test``,
        ``train``.

    Returns
    -------
    Path
        ``root``, holding ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{test,train}.tsv``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = write_beir(Path(tmp) / "mini", train="query-id\\tcorpus-id\\tscore\\n")
    ...     sorted(str(p.relative_to(root)) for p in root.rglob("*.*"))
    ['corpus.jsonl', 'qrels/test.tsv', 'qrels/train.tsv', 'queries.jsonl']
    """
    files = {
        "corpus": jsonl(BEIR_CORPUS),
        "queries": jsonl(BEIR_QUERIES),
        "test": BEIR_TEST_QRELS,
        "train": BEIR_TRAIN_QRELS,
    } | overrides
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(files["corpus"])
    (root / "queries.jsonl").write_text(files["queries"])
    (root / "qrels" / "test.tsv").write_text(files["test"])
    (root / "qrels" / "train.tsv").write_text(files["train"])
    return root
