"""One loader for every corpus: :func:`load` returns a :class:`Bundle`.

A bundle is everything an experiment needs to know about its data, as one
frozen value: the documents, the queries with their evidence, the targets
(levels) at which relevance is judged, the heading styles to build the
hierarchy with, the identity a record states, and how it was sampled.

The sources :func:`load` takes, by name or path:

``"python-reference"``
    This interpreter's reference topics with the repository's gold questions
    (span evidence: judged at documents, sections and passages).
``"scifact"``, and every name :func:`~hierret.datasets.load_beir` knows
    One split of a BEIR dataset (default ``"test"``); BEIR judges whole
    documents, so the only target is ``"documents"``.
``"scifact-sections"`` (``"<BEIR name>-sections"``)
    :func:`~hierret.datasets.build_sectioned` over that split, built with the
    same seed (span evidence: every target).
``"qasper"``
    A Qasper split (default ``"dev"``; span evidence: every target).
a BEIR folder
    ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.
a Qasper JSON file
    One file in the v0.3 layout.
a folder of your own documents
    ``*.md``, ``*.markdown``, ``*.rst`` and ``*.txt`` files with a
    ``questions.jsonl`` (:mod:`hierret.datasets.folder`); questions with
    evidence quotes are judged at every target, those naming sections at
    sections and documents, those naming a document at documents only.

Nothing is dropped without a count a study cannot miss: whatever a loader
leaves out of the source (documents without text, judgments naming unknown
ids, questions without evidence, files skipped) is counted by reason in
:attr:`Bundle.dropped`, shown in :meth:`Bundle.summary` and stated by
:meth:`Bundle.identity` (so a record says how many were dropped and why). A
source that holds no documents, or no question left, is an error.

Every source is cut down the same way (:func:`sample_documents`): the queries
kept are the first ``max_queries`` in file order; the documents kept are every
document judged for those queries plus a seeded sample of the others, up to
``max_docs`` in all. So ``max_queries=10, max_docs=20`` is a smoke run of any
corpus, and the same seed gives the same sample in every record.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import get_args

import numpy as np

import hierret._clock as _clock
from hierret.datasets._dropped import describe_dropped, nonzero
from hierret.datasets._paths import broken_link
from hierret.datasets.beir import BEIR_DOWNLOADS, BeirDataset, load_beir
from hierret.datasets.download import DataFormatError, DataNotFoundError, data_home
from hierret.datasets.folder import EXAMPLE_LINES, QUESTIONS_FILE, FolderDataset, load_folder
from hierret.datasets.gold import default_gold_path, load_gold
from hierret.datasets.python_reference import load_python_reference
from hierret.datasets.qasper import HEADING_STYLES as MARKDOWN_HEADINGS
from hierret.datasets.qasper import QASPER_DOWNLOADS, load_qasper
from hierret.datasets.synthetic import build_sectioned
from hierret.evaluation.qrels import qrels_from_evidence
from hierret.search.runs import Qrels
from hierret.structure.hierarchy import HEADING_STYLES, Hierarchy
from hierret.structure.units import Corpus, Level, Query

__all__ = ["Bundle", "load", "sample_documents", "source_names"]

ALL_TARGETS: tuple[Level, ...] = get_args(Level)
_SECTIONS_SUFFIX = "-sections"
_FORMATS = (
    "a BEIR folder (corpus.jsonl, queries.jsonl and qrels/<split>.tsv), a Qasper v0.3 "
    "JSON file (*.json), or a folder of Markdown/RST/text documents (*.md, *.markdown, "
    f"*.rst, *.txt) with {QUESTIONS_FILE} (one question a line, e.g. {EXAMPLE_LINES[0]})"
)


@dataclass(frozen=True)
class Bundle:
    """A corpus, its queries and how to judge and describe them: what :func:`load` returns.

    Parameters
    ----------
    source : str
        The corpus name given to :func:`load`, or the file or folder name of a
        path (never the full local path).
    split : str or None
        The judged split (``"test"``, ``"dev"``, ...; the file stem for a
        Qasper file); ``None`` for python-reference, which has one gold set.
    corpus : Corpus
        The documents kept, in the source's order.
    queries : tuple of Query
        The queries kept, in file order, each with its evidence spans.
    targets : tuple of str
        The levels relevance is judged at: ``("documents",)`` for BEIR, every
        level for span evidence.
    heading_styles : tuple of str
        The heading styles to pass to :func:`~hierret.structure.hierarchy.build_hierarchy`.
    sampling : str
        How the queries and documents were chosen, in plain words.
    judgments : dict, optional
        Graded document judgments ``{query: {document: score}}`` of a BEIR
        source (zeros kept), for the kept queries; ``None`` for span evidence.
    details : dict
        What the source loader records about the full dataset (``full_``
        corpus size and fingerprint, gold file and digest, counts, ...).
    judged_at : dict, optional
        Each query's finest target, for a source whose questions are judged
        at different targets (a folder of documents: quotes at passages,
        section ids at sections, document ids at documents); ``None`` when
        every query is judged at every target of :attr:`targets`.
    dropped : dict of str to int
        What the loader left out of the full source, by reason (``{}`` when
        nothing): ``"judgments naming unknown documents": 2``, ...

    Examples
    --------
    >>> bundle = load("python-reference", max_queries=3, max_docs=10)
    >>> len(bundle.queries), len(bundle.corpus), bundle.targets
    (3, 10, ('documents', 'sections', 'passages'))
    """

    source: str
    split: str | None
    corpus: Corpus
    queries: tuple[Query, ...]
    targets: tuple[Level, ...]
    heading_styles: tuple[str, ...]
    sampling: str
    judgments: Mapping[str, Mapping[str, int]] | None = None
    details: Mapping[str, str | int] = field(default_factory=dict)
    judged_at: Mapping[str, Level] | None = None
    dropped: Mapping[str, int] = field(default_factory=dict)

    def judged_queries(self, target: Level) -> tuple[Query, ...]:
        """The queries judged at ``target``: those whose evidence is no coarser (``Query.level``).

        A query whose evidence names a whole document (or section) is not
        judged at a finer target: every passage of that document would count
        as relevant.

        Examples
        --------
        >>> bundle = load("python-reference", max_queries=3, max_docs=10)
        >>> bundle.judged_queries("passages") == bundle.queries
        True
        """
        return tuple(q for q in self.queries if q.judged_at(target))

    def qrels(self, hierarchy: Hierarchy, target: Level) -> Qrels:
        """The judgments of the kept queries over ``hierarchy``'s units of ``target``.

        Span evidence is judged by overlap
        (:func:`~hierret.evaluation.qrels_from_evidence`), for the queries
        :meth:`judged_queries` gives; BEIR judgments are the graded scores
        above zero, per document.

        Parameters
        ----------
        hierarchy : Hierarchy
            Built from this bundle's corpus.
        target : {"documents", "sections", "passages"}
            One of :attr:`targets`.

        Raises
        ------
        ValueError
            ``target`` is not one this corpus is judged at, or ``hierarchy``
            was built from another corpus.

        Examples
        --------
        >>> from hierret.structure.hierarchy import build_hierarchy
        >>> bundle = load("python-reference", max_queries=2, max_docs=5)
        >>> h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
        >>> sorted(bundle.qrels(h, "documents")) == sorted(q.id for q in bundle.queries)
        True
        """
        if target not in ALL_TARGETS:
            raise ValueError(f"unknown target {target!r}: use one of {', '.join(ALL_TARGETS)}")
        if target not in self.targets and self.judged_at is not None:
            raise ValueError(
                f"{self.source} is judged at {', '.join(self.targets)} only, not {target!r}: "
                "its questions name documents or sections, not evidence quotes; evaluate at "
                f"{self.targets[-1]!r}, or give questions 'evidence' quotes to judge them at "
                "passages"
            )
        if target not in self.targets:
            raise ValueError(
                f"{self.source} is judged at {', '.join(self.targets)} only, not {target!r} "
                "(BEIR judges whole documents): evaluate at 'documents' and lift finer runs "
                "to documents, or use a corpus with span evidence (python-reference, qasper, "
                "scifact-sections)"
            )
        if hierarchy.corpus.fingerprint != self.corpus.fingerprint:
            raise ValueError(
                f"the hierarchy was built from corpus {hierarchy.corpus.name!r} (fingerprint "
                f"{hierarchy.corpus.fingerprint}), not this bundle's {self.corpus.name!r} "
                f"({self.corpus.fingerprint}): build it from bundle.corpus"
            )
        if self.judgments is None:
            return qrels_from_evidence(self.judged_queries(target), hierarchy.units(target))
        return {
            q.id: positive
            for q in self.queries
            if (positive := {d: g for d, g in self.judgments.get(q.id, {}).items() if g > 0})
        }

    def summary(self) -> dict[str, int | str]:
        """Documents, questions and how they were sampled: a row of a corpora table.

        Examples
        --------
        >>> load("python-reference", max_queries=2, max_docs=5).summary()["documents"]
        5
        """
        return {
            "documents": len(self.corpus),
            "questions": len(self.queries),
            "sampled": self.sampling,
            "dropped": describe_dropped(self.dropped),
        }

    def identity(self) -> dict[str, str | int]:
        """What a record states about the data (no local paths).

        Examples
        --------
        >>> ident = load("python-reference", max_queries=2, max_docs=5).identity()
        >>> ident["source"], ident["queries"], ident["documents"], ident["gold"]
        ('python-reference', 2, 5, 'python-reference.jsonl')
        """
        h = hashlib.sha256()
        for q in self.queries:
            h.update(f"{q.id}\t{q.evidence}\n".encode())
            if self.judged_at is not None:
                h.update(f"{self.judged_at[q.id]}\n".encode())
            if self.judgments is not None:
                h.update(f"{sorted(self.judgments.get(q.id, {}).items())}\n".encode())
        return {
            **self.details,
            "source": self.source,
            **({} if self.split is None else {"split": self.split}),
            **self.corpus.identity(),
            "queries": len(self.queries),
            "evidence_fingerprint": h.hexdigest()[:16],
            "targets": ",".join(self.targets),
            "heading_styles": ",".join(self.heading_styles),
            "sampling": self.sampling,
            **({"dropped": describe_dropped(self.dropped)} if self.dropped else {}),
        }


def sample_documents(
    doc_ids: Sequence[str], judged: Iterable[str], max_docs: int | None, *, seed: int = 0
) -> tuple[str, ...]:
    """Every judged document plus a seeded sample of the others, ``max_docs`` in all.

    The one document sampler of the package. The others (``doc_ids`` not
    judged, in ``doc_ids`` order) are drawn with
    ``numpy.random.default_rng(seed).choice(len(others), n, replace=False)``,
    ``n = max_docs - len(judged)`` (DR-003's rule). When ``max_docs`` is at
    most the number judged, only the judged documents are kept; when it is
    ``None`` or at least ``len(doc_ids)``, all of them.

    Parameters
    ----------
    doc_ids : sequence of str
        Every document id, in corpus order (the order is part of the input:
        reordering the corpus changes which others are drawn).
    judged : iterable of str
        Ids that must be kept; their order and repeats do not matter.
    max_docs : int or None
        Documents to keep in all; ``None`` keeps every document.
    seed : int, default 0
        Seed of the draw.

    Returns
    -------
    tuple of str
        The kept ids, in ``doc_ids`` order.

    Raises
    ------
    ValueError
        A judged id is not in ``doc_ids``, ``doc_ids`` repeats an id, or
        ``max_docs`` is below 1.

    Examples
    --------
    >>> ids = [f"d{i}" for i in range(10)]
    >>> sample_documents(ids, {"d7", "d2"}, 4, seed=0)
    ('d2', 'd6', 'd7', 'd9')
    >>> sample_documents(ids, ["d2", "d7"], 4, seed=0) == sample_documents(ids, {"d7", "d2"}, 4)
    True
    """
    _check_count("max_docs", max_docs)
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError("doc_ids repeats an id: give each document once")
    keep = set(judged)
    missing = keep - set(doc_ids)
    if missing:
        raise ValueError(
            f"{len(missing)} judged document(s) are not in the corpus (e.g. "
            f"{sorted(missing)[:3]}): judged ids must be document ids of the corpus"
        )
    if max_docs is None or max_docs >= len(doc_ids):
        return tuple(doc_ids)
    others = [d for d in doc_ids if d not in keep]
    n = max(0, min(max_docs - len(keep), len(others)))
    picked = np.random.default_rng(seed).choice(len(others), size=n, replace=False)
    keep.update(others[int(i)] for i in picked)
    return tuple(d for d in doc_ids if d in keep)


def source_names() -> list[str]:
    """The corpus names :func:`load` accepts (besides paths).

    Examples
    --------
    >>> source_names()[:3]
    ['python-reference', 'qasper', 'scifact']
    """
    beir = sorted(BEIR_DOWNLOADS)
    return ["python-reference", "qasper", *beir, *(f"{n}{_SECTIONS_SUFFIX}" for n in beir)]


def local_or_named(name: str, files: Mapping[str, str]) -> str | Path:
    """``data_home()/name/files[name]`` when ``name`` has a file there, else ``name`` itself.

    A notebook names, as a parameter, a local file in a corpus's official
    layout that stands in for its full release (on the project's machines the
    10-paper Qasper sample); where that file is absent, :func:`load` gets the
    corpus name and uses (or downloads) the full release.

    Examples
    --------
    >>> local_or_named("scifact", {"qasper": "no-such-file.json"})
    'scifact'
    >>> local_or_named("qasper", {"qasper": "no-such-file.json"})
    'qasper'
    """
    local = data_home() / name / files[name] if name in files else None
    return local if local is not None and local.is_file() else name


def load(
    source: str | os.PathLike[str],
    *,
    max_queries: int | None = None,
    max_docs: int | None = None,
    seed: int = 0,
    split: str | None = None,
    download: bool = True,
    questions: bool = True,
) -> Bundle:
    """Load a corpus by name or path, with its queries, cut down by the one sampler.

    Parameters
    ----------
    source : str or path-like
        A corpus name (:func:`source_names`: ``"python-reference"``,
        ``"scifact"``, ``"scifact-sections"``, ``"qasper"``, ...) or the path
        of a BEIR folder, a Qasper JSON file, or a folder of documents with
        ``questions.jsonl`` (or that file's path; see the module docstring and
        :mod:`hierret.datasets.folder`).
    max_queries : int, optional
        Keep the first ``max_queries`` queries, in file order.
    max_docs : int, optional
        Keep every document judged for the kept queries plus a seeded sample
        of the others, ``max_docs`` documents in all (never fewer than the
        judged ones; see :func:`sample_documents`). ``None`` keeps them all.
    seed : int, default 0
        Seed of the document sample, and of the construction of
        ``*-sections`` corpora.
    split : str, optional
        The judged split: BEIR ``qrels/<split>.tsv`` (default ``"test"``) or a
        Qasper split (default ``"dev"``). Not accepted for python-reference, a
        Qasper file or a folder of documents, which have one.
    download : bool, default True
        Allow downloading a named dataset that is not under
        :func:`~hierret.datasets.data_home`.
    questions : bool, default True
        Whether the source must hold questions (to evaluate). ``False`` (to
        search, as ``hierret search`` and ``hierret embed`` do) also takes a
        folder of documents without ``questions.jsonl``: its bundle has no
        queries.

    Returns
    -------
    Bundle

    Raises
    ------
    ValueError
        An unknown name (the message lists the names and says a path is
        accepted), a path of no recognised format, a ``split`` the source does
        not have, or a count below 1.
    DataNotFoundError
        A named dataset is absent and could not be downloaded.

    Warns
    -----
    UserWarning
        Data dropped by a loader, one warning naming what (BEIR:
        :class:`~hierret.datasets.BeirDataWarning`; a folder of documents:
        :class:`~hierret.datasets.folder.FolderDataWarning`).

    Examples
    --------
    >>> bundle = load("python-reference", max_queries=10, max_docs=15, seed=0)
    >>> bundle.sampling  # doctest: +ELLIPSIS
    'the first 10 of ... queries (file order); every judged document (...) + ... sampled of the other ..., seed 0'
    >>> bundle.heading_styles
    ('rst', 'markdown', 'numbered')
    >>> load("no-such-corpus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: 'no-such-corpus' is neither a corpus name (python-reference, ...) nor an existing path; ...
    """  # noqa: E501
    _check_count("max_queries", max_queries)
    _check_count("max_docs", max_docs)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    with _clock.stage("load"):
        full = _load_full(source, split, seed=int(seed), download=download, questions=questions)
        return _cut(full, max_queries, max_docs, int(seed))


def _check_count(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(f"{name} must be None or an integer >= 1, got {value!r}")


def _load_full(
    source: str | os.PathLike[str],
    split: str | None,
    *,
    seed: int,
    download: bool,
    questions: bool = True,
) -> Bundle:
    """The whole source as a bundle (nothing sampled)."""
    if isinstance(source, str) and source in source_names():
        return _by_name(source, split, seed=seed, download=download)
    path = Path(source).expanduser()
    for what in (path, path / "corpus.jsonl", path / QUESTIONS_FILE):
        problem = broken_link(what)
        if problem:
            raise DataNotFoundError(
                f"{what} is {problem}: `ls -l {what}` shows where it points; point it at "
                f"the corpus (or remove it), or give the corpus's real path: {_FORMATS}"
            )
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            return _beir(load_beir(path, split or "test", download=False), path.resolve().name)
        if not (path / QUESTIONS_FILE).is_file() and questions:
            raise DataFormatError(
                f"{path} is a folder without corpus.jsonl or {QUESTIONS_FILE}: not a "
                f"recognised format to evaluate on; give {_FORMATS} (hierret search and "
                "hierret embed take a folder of documents without questions: questions are "
                "needed to evaluate, not to search)"
            )
        _no_split(path.resolve().name, split)
        return _folder(load_folder(path, questions=questions), questions)
    if path.is_file():
        if path.name == QUESTIONS_FILE:
            _no_split(path.resolve().parent.name, split)
            return _folder(load_folder(path), questions)
        if path.suffix.lower() != ".json":
            raise DataFormatError(f"{path} is not a recognised format; give {_FORMATS}")
        _no_split(path.name, split)
        return _qasper(path, path.name)
    raise ValueError(
        f"{str(source)!r} is neither a corpus name ({', '.join(source_names())}) nor an "
        f"existing path; a path is accepted too: {_FORMATS}"
    )


def _by_name(name: str, split: str | None, *, seed: int, download: bool) -> Bundle:
    if name == "python-reference":
        _no_split(name, split)
        corpus = load_python_reference()
        gold_path = default_gold_path(corpus.name)
        gold = load_gold(gold_path, corpus)
        gold.raise_if_failed()
        digest = hashlib.sha256(gold_path.read_bytes()).hexdigest()[:16]
        return _whole(
            name,
            None,
            corpus,
            gold.queries,
            HEADING_STYLES,
            details={"gold": gold_path.name, "gold_digest": digest},
        )
    if name == "qasper":
        if split is not None and split not in QASPER_DOWNLOADS:
            raise ValueError(f"Qasper has no split {split!r}: use {', '.join(QASPER_DOWNLOADS)}")
        return _qasper(split or "dev", name, download=download)
    beir_name = name.removesuffix(_SECTIONS_SUFFIX)
    beir = load_beir(beir_name, split or "test", download=download)
    if beir_name == name:
        return _beir(beir, name)
    built = build_sectioned(beir, seed=seed)
    details = _full_details(built.identity())
    del details["max_docs"]  # build_sectioned's own cut, not used: the bundle samples instead
    return _whole(
        name,
        beir.split,
        built.corpus,
        built.queries,
        MARKDOWN_HEADINGS,
        details=details,
        dropped=beir.dropped,
    )


def _beir(data: BeirDataset, source: str) -> Bundle:
    return _whole(
        source,
        data.split,
        data.corpus,
        data.queries,
        HEADING_STYLES,
        judgments=data.qrels,
        details=_full_details(data.identity()),
        dropped=data.dropped,
    )


def _qasper(split_or_path: str | Path, source: str, *, download: bool = False) -> Bundle:
    data = load_qasper(split_or_path, download=download)
    return _whole(
        source,
        data.name,
        data.corpus,
        data.queries,
        MARKDOWN_HEADINGS,
        details=_full_details(data.identity()),
        dropped=data.dropped,
    )


def _folder(data: FolderDataset, questions: bool = True) -> Bundle:
    finest = max(data.judged_at.values(), key=ALL_TARGETS.index, default=None)
    bundle = _whole(
        data.name,
        None,
        data.corpus,
        data.queries,
        data.heading_styles,
        details=_full_details(data.identity()),
        dropped={_FOLDER_REASONS[k]: n for k, n in data.problems.items()},
        questions=questions,
    )
    return replace(
        bundle,
        targets=ALL_TARGETS[: ALL_TARGETS.index(finest) + 1] if finest else (),
        judged_at=dict(data.judged_at),
    )


def _no_split(source: str, split: str | None) -> None:
    if split is not None:
        raise ValueError(
            f"{source} has one set of questions, no splits: leave split unset (got {split!r})"
        )


def _whole(
    source: str,
    split: str | None,
    corpus: Corpus,
    queries: Sequence[Query],
    heading_styles: Sequence[str],
    *,
    judgments: Mapping[str, Mapping[str, int]] | None = None,
    details: Mapping[str, str | int],
    dropped: Mapping[str, int] | None = None,
    questions: bool = True,
) -> Bundle:
    """The full source as a bundle; no documents, or no questions when ``questions``
    (to evaluate; searching needs none), is an error."""
    lost = describe_dropped(dropped or {})
    if not len(corpus) or (questions and not queries):
        what = "no documents" if not len(corpus) else "no questions"
        raise DataFormatError(
            f"{source}: {what} to load (dropped: {lost}); a study needs documents and "
            f"judged questions: check the source ({_FORMATS})"
        )
    targets: tuple[Level, ...] = ("documents",) if judgments is not None else ALL_TARGETS
    return Bundle(
        source,
        split,
        corpus,
        tuple(queries),
        targets,
        tuple(heading_styles),
        sampling="",
        judgments=judgments,
        details=dict(details),
        dropped=nonzero(dropped or {}),
    )


#: The folder loader's problem counts, as reasons for :attr:`Bundle.dropped`.
_FOLDER_REASONS = {
    "dropped_questions": "questions with nothing left to judge them by",
    "dropped_items": "quotes or ids found nowhere",
    "skipped_files": "files skipped",
}

_CORPUS_KEYS = {"corpus", "fingerprint", "documents", "chars", "python", "queries"}


def _full_details(identity: Mapping[str, str | int]) -> dict[str, str | int]:
    """A loader's identity of the full dataset, its sizes renamed ``full_*``."""
    details = {k: v for k, v in identity.items() if k not in _CORPUS_KEYS}
    for key in ("documents", "fingerprint", "queries"):
        details[f"full_{key}"] = identity[key]
    return details


def _cut(full: Bundle, max_queries: int | None, max_docs: int | None, seed: int) -> Bundle:
    """Keep the first ``max_queries`` queries and their documents plus a seeded sample."""
    queries = full.queries[:max_queries]
    if full.judgments is None:
        judged = {d for q in queries for d in q.evidence_docs}
    else:
        judged = {d for q in queries for d in full.judgments.get(q.id, {})}
    doc_ids = [d.id for d in full.corpus]
    kept = sample_documents(doc_ids, judged, max_docs, seed=seed)
    n_q, n_all = len(full.queries), len(doc_ids)
    q_part = (
        f"the first {len(queries):,} of {n_q:,} queries (file order)"
        if len(queries) < n_q
        else f"all {n_q:,} queries"
    )
    corpus = full.corpus
    d_part = f"all {n_all:,} documents"
    if len(kept) < n_all:
        d_part = (
            f"every judged document ({len(judged):,}) + {len(kept) - len(judged):,} "
            f"sampled of the other {n_all - len(judged):,}, seed {seed}"
        )
        keep = set(kept)
        corpus = Corpus(corpus.name, [d for d in corpus if d.id in keep], corpus.extra_identity)
    judgments = (
        None
        if full.judgments is None
        else {q.id: dict(full.judgments.get(q.id, {})) for q in queries}
    )
    judged_at = None if full.judged_at is None else {q.id: full.judged_at[q.id] for q in queries}
    return replace(
        full,
        corpus=corpus,
        queries=queries,
        sampling=f"{q_part}; {d_part}",
        judgments=judgments,
        judged_at=judged_at,
    )
