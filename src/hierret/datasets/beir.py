r"""Loader for corpora in the BEIR format (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``).

BEIR judges whole documents, so each query's evidence is one whole-document span
``(doc_id, 0, len(text))`` per document judged relevant (score > 0); the graded
judgments are kept as given in :attr:`BeirDataset.qrels`.

Document text is ``title + "\n\n" + text`` when the title is non-empty (just
``text`` otherwise), so a retriever sees the title as BEIR's own baselines do,
and evidence spans cover it; :attr:`Document.title` keeps the bare title.

Files must be UTF-8, and every string valid Unicode: a JSON escape of a lone
surrogate (``"\ud800"`` without the other half of its pair) is an error naming
the file, line, field and position. A document whose title and text are both
empty (or only whitespace) could never be retrieved as evidence: it is dropped, with one
:class:`BeirDataWarning` that counts such documents and the judgments that named
them. The first line of a qrels file is skipped only when it is a header
(``query-id<TAB>corpus-id<TAB>score``); any other line that is not
``query-id<TAB>corpus-id<TAB>integer score`` is an error naming the file and line.

Ids are read by one rule in all three files (:func:`~hierret.datasets._ids.clean_id`):
a byte-order mark starting a file is dropped, and every document id, query id
and the ids of each judgment are stripped of surrounding whitespace and put in
Unicode NFC, so ``"d1 "`` in the corpus, ``"d1"`` in the qrels, or ``café``
written NFD in one and NFC in the other name one document. Two ids of one
file that become one under this rule are a duplicate (an error).

Whatever is dropped is counted by reason in :attr:`BeirDataset.dropped` (and
:meth:`BeirDataset.identity`, so a record states it), besides the one
:class:`BeirDataWarning` of a load; messages show ids in their ``ascii()``
form, so ids that only look alike are told apart.
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hierret._validate import find_lone_surrogate, surrogate_escape, surrogate_message
from hierret.datasets._dropped import describe_dropped, nonzero
from hierret.datasets._encoding import not_utf8
from hierret.datasets._ids import BOM, clean_id, shown_id
from hierret.datasets.download import (
    DATA_ENV,
    CorruptArchiveError,
    DataFormatError,
    DataNotFoundError,
    DigestAlgorithm,
    DownloadError,
    UnsafeArchiveError,
    data_home,
    drop_damaged_archive,
    extract_zip,
    fetch,
)
from hierret.structure.units import Corpus, Document, Query, Span

__all__ = [
    "BEIR_BASE_URL",
    "BEIR_DOWNLOADS",
    "BeirDataWarning",
    "BeirDataset",
    "BeirFormatError",
    "Remote",
    "corpus_documents",
    "load_beir",
    "locate_beir",
]

log = logging.getLogger(__name__)

BEIR_BASE_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets"


@dataclass(frozen=True)
class Remote:
    """Where a named dataset's archive is downloaded from, and its pinned digest.

    Parameters
    ----------
    url : str
        Archive URL (a zip).
    digest : str
        Pinned hex digest of the archive.
    algorithm : {"sha256", "md5"}
        Algorithm of ``digest``.
    subdir : str or None
        Folder inside the archive that holds the dataset; ``None`` means the
        dataset's name.
    """

    url: str
    digest: str
    algorithm: DigestAlgorithm = "sha256"
    subdir: str | None = None


#: Known dataset names and their archives. Tests (or users with a mirror) may
#: add or replace entries.
BEIR_DOWNLOADS: dict[str, Remote] = {
    # The md5 is the one BEIR publishes for this zip (beir-cellar/beir, README.md, datasets
    # table) and that ir_datasets pins (allenai/ir_datasets, ir_datasets/etc/downloads.json,
    # "beir" -> "scifact", size_hint 2816079). BEIR publishes no SHA-256, so md5 it is.
    "scifact": Remote(f"{BEIR_BASE_URL}/scifact.zip", "5f7d1de60b170fc8027bb7898e2efca1", "md5"),
}


class BeirFormatError(DataFormatError):
    """A BEIR file is missing or malformed (a :class:`ValueError`)."""


class BeirDataWarning(UserWarning):
    """Some documents or judgments were dropped (no text, unknown ids, duplicates)."""


@dataclass(frozen=True)
class BeirDataset:
    """One split of a BEIR dataset.

    Parameters
    ----------
    name : str
        Dataset name (``"scifact"``, or the folder name for a local path).
    split : str
        The qrels split (``"test"``, ``"train"``, ``"dev"``).
    corpus : Corpus
        The documents of ``corpus.jsonl`` that have text, in file order, named
        ``beir-{name}``.
    queries : list of Query
        The queries judged in ``split``, in ``queries.jsonl`` order, each with
        whole-document evidence for every document judged with score > 0.
    qrels : dict of str to dict of str to int
        ``qrels[query_id][doc_id] = score``, as given (graded, zeros kept).
    path : Path
        The folder read.
    dropped_qrels : int
        Judgment lines skipped because they name unknown queries or documents
        (including documents dropped for having no text).
    dropped : dict of str to int
        What was dropped, by reason (documents without text, judgments naming
        unknown queries or documents, repeated judgments); only reasons with a
        count.
    """

    name: str
    split: str
    corpus: Corpus
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    path: Path
    dropped_qrels: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def n_qrels(self) -> int:
        """Number of judged ``(query, document)`` pairs kept."""
        return sum(len(docs) for docs in self.qrels.values())

    def identity(self) -> dict[str, str | int]:
        """What a result records about the data it ran on (no local paths)."""
        h = hashlib.sha256()
        for qid, docs in sorted(self.qrels.items()):
            for did, score in sorted(docs.items()):
                h.update(f"{qid}\t{did}\t{score}\n".encode())
        return {
            **self.corpus.identity(),
            "dataset": f"beir/{self.name}",
            "split": self.split,
            "queries": len(self.queries),
            "qrels_pairs": self.n_qrels,
            "qrels_fingerprint": h.hexdigest()[:16],
            **({"dropped": describe_dropped(self.dropped)} if self.dropped else {}),
        }


def locate_beir(name_or_path: str | Path, *, download: bool = True, progress: bool = True) -> Path:
    """Find (and if allowed, download) the folder holding a BEIR dataset.

    Parameters
    ----------
    name_or_path : str or Path
        An existing folder, or a known name (a key of :data:`BEIR_DOWNLOADS`),
        looked for in ``data_home() / name``.
    download : bool
        Download and extract the pinned archive when a known dataset is absent.
    progress : bool
        Show a progress bar while downloading.

    Returns
    -------
    Path
        The dataset folder.

    Raises
    ------
    DataNotFoundError
        Not an existing folder nor a known name; or absent and ``download`` is
        false; or the download failed.
    """
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    name = str(name_or_path)
    if name not in BEIR_DOWNLOADS:
        raise DataNotFoundError(
            f"{name!r} is neither an existing folder nor a known BEIR dataset "
            f"(known: {', '.join(sorted(BEIR_DOWNLOADS))})"
        )
    home = data_home()
    folder = home / name
    if folder.is_dir():
        return folder
    remote = BEIR_DOWNLOADS[name]
    hint = (
        f"Set {DATA_ENV} to a folder that holds {name}/ (e.g. {DATA_ENV}=../shared/datasets "
        "on the project's machines)"
    )
    if not download:
        raise DataNotFoundError(
            f"BEIR dataset {name!r} not found: looked in {folder}. {hint}, or allow "
            f"download=True to fetch {remote.url}."
        )
    try:
        archive = fetch(
            remote.url,
            remote.digest,
            home / f"{name}.zip",
            algorithm=remote.algorithm,
            progress=progress,
        )
        extract_zip(archive, folder, subdir=remote.subdir or name)
    except FileExistsError:
        if not folder.is_dir():  # pragma: no cover - exotic race
            raise
        # Another process extracted it first; use theirs.
    except CorruptArchiveError as err:
        dropped = drop_damaged_archive(home / f"{name}.zip", remote.url, err)
        raise DataNotFoundError(f"BEIR dataset {name!r}: {dropped}.\n{hint}.") from err
    except (DownloadError, UnsafeArchiveError, zipfile.BadZipFile, OSError) as err:
        raise DataNotFoundError(
            f"BEIR dataset {name!r} not found in {folder} and could not be downloaded:\n"
            f"{err}\n{hint}."
        ) from err
    return folder


def load_beir(
    name_or_path: str | Path, split: str = "test", *, download: bool = True, progress: bool = True
) -> BeirDataset:
    r"""Load one split of a BEIR-format dataset.

    Parameters
    ----------
    name_or_path : str or Path
        A folder with ``corpus.jsonl``, ``queries.jsonl`` and
        ``qrels/{split}.tsv``, or a known name such as ``"scifact"`` (see
        :func:`locate_beir`).
    split : str
        Which ``qrels/{split}.tsv`` to use; only queries judged there are kept.
    download : bool
        Allow downloading a known dataset that is not under ``data_home()``.
    progress : bool
        Show a progress bar while downloading.

    Returns
    -------
    BeirDataset
        Corpus, judged queries with whole-document evidence, and graded qrels.

    Raises
    ------
    DataNotFoundError
        The dataset is absent and could not be downloaded.
    BeirFormatError
        A file is missing or malformed: not UTF-8, bad JSON, a field of the
        wrong type, a qrels line not ``query-id<TAB>corpus-id<TAB>integer``
        (reported with file and line); or no judgment names a known query and
        document.

    Warns
    -----
    BeirDataWarning
        Documents with no text were dropped (one warning, with how many
        judgments named them); some judgments named unknown queries or
        documents and were dropped.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name)
    >>> _ = (root / "corpus.jsonl").write_text(
    ...     '{"_id": "d1", "title": "Cats", "text": "Cats purr."}\n'
    ...     '{"_id": "d2", "title": "", "text": "Dogs bark."}\n')
    >>> _ = (root / "queries.jsonl").write_text('{"_id": "q1", "text": "Which animal purrs?"}\n')
    >>> (root / "qrels").mkdir()
    >>> _ = (root / "qrels" / "test.tsv").write_text(
    ...     "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n")
    >>> ds = load_beir(root)
    >>> ds.corpus["d1"].text
    'Cats\n\nCats purr.'
    >>> ds.queries[0].evidence
    (('d1', 0, 16),)
    >>> ds.qrels
    {'q1': {'d1': 2, 'd2': 0}}
    >>> tmp.cleanup()
    """
    folder = locate_beir(name_or_path, download=download, progress=progress)
    files = {
        "corpus": folder / "corpus.jsonl",
        "queries": folder / "queries.jsonl",
        "qrels": folder / "qrels" / f"{split}.tsv",
    }
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise BeirFormatError(
            f"{folder} is not a complete BEIR dataset; missing: {', '.join(missing)}"
            + (f" (qrels splits present: {', '.join(splits)})" if splits else "")
        )
    name = str(name_or_path) if str(name_or_path) in BEIR_DOWNLOADS else folder.resolve().name
    docs, empty = _read_corpus(files["corpus"])
    corpus = Corpus(f"beir-{name}", docs)
    texts = _read_queries(files["queries"])
    qrels, counts = _read_qrels(files["qrels"], texts, corpus, set(empty))
    to_empty = counts["judgments naming documents without text"]
    if empty:
        warnings.warn(
            f"{files['corpus']}: dropped {len(empty)} document(s) with no text (empty title "
            f"and text, e.g. {_shown(empty)}): they could never be retrieved; {to_empty} "
            f"judgment(s) in {files['qrels'].name} named them and were dropped too",
            BeirDataWarning,
            stacklevel=2,
        )
    queries = [  # BEIR judges whole documents: no finer target is judged
        Query(qid, text, _evidence(qrels[qid], corpus), level="documents")
        for qid, text in texts.items()
        if qid in qrels
    ]
    log.info(
        "loaded %s/%s: %d documents, %d queries, %d judgments",
        name,
        split,
        len(corpus),
        len(queries),
        sum(len(d) for d in qrels.values()),
    )
    dropped = nonzero({"documents without text": len(empty), **counts})
    n_judgments = sum(n for reason, n in counts.items() if reason.startswith("judgments naming"))
    return BeirDataset(name, split, corpus, queries, qrels, folder, n_judgments, dropped)


def _evidence(judged: dict[str, int], corpus: Corpus) -> tuple[Span, ...]:
    return tuple((did, 0, len(corpus[did].text)) for did, score in judged.items() if score > 0)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, decoded strictly as UTF-8 (a
    byte-order mark starting the file dropped)."""
    for lineno, _, line in _placed_lines(path):
        yield lineno, line


def _placed_lines(
    path: Path, start: int = 0, stop: int | None = None, first: int = 1
) -> Iterator[tuple[int, int, str]]:
    """``(line_number, byte_offset, text)`` for each line starting at a byte in
    ``[start, stop)`` (``start`` a line's first byte, ``first`` its number),
    decoded strictly as UTF-8 (a byte-order mark starting the file dropped)."""
    with open(path, "rb") as f:
        f.seek(start)
        offset = start
        for lineno, raw in enumerate(f, first):
            if stop is not None and offset >= stop:
                return
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                with open(path, "rb") as head:
                    sample = head.read(1 << 16)
                raise BeirFormatError(
                    f"{path}:{lineno}: not valid UTF-8: byte {err.start} of the line is "
                    f"{raw[err.start : err.end]!r} ({err.reason}); "
                    + not_utf8(sample, path, "BEIR files")
                    + " (or download it again)"
                ) from None
            yield lineno, offset, line.removeprefix(BOM) if offset == 0 else line
            offset += len(raw)


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line."""
    for lineno, _, obj in _placed_jsonl(path):
        yield lineno, obj


def _placed_jsonl(
    path: Path, start: int = 0, stop: int | None = None, first: int = 1
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """``(line_number, byte_offset, object)`` for each non-blank line of
    :func:`_placed_lines`."""
    for lineno, offset, line in _placed_lines(path, start, stop, first):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise BeirFormatError(f"{path}:{lineno}: malformed JSON: {err.msg}") from None
        if not isinstance(obj, dict):
            raise BeirFormatError(
                f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}; each line "
                'must be one object such as {"_id": "d1", "title": "...", "text": "..."}'
            )
        if surrogate_escape.search(line) and (bad := find_lone_surrogate(obj)):
            where, text, at = bad
            field = where if where.startswith("key ") else f"field {where!r}"
            raise BeirFormatError(f"{path}:{lineno}: {surrogate_message(field, text, at)}")
        yield lineno, offset, obj


def _field(obj: dict[str, Any], key: str, path: Path, lineno: int, *, required: bool) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise BeirFormatError(
                f"{path}:{lineno}: missing field {key!r}; each line needs {key!r} (a string)"
            )
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BeirFormatError(
            f"{path}:{lineno}: field {key!r} must be a string, got {type(value).__name__} "
            f"{value!r:.40}; write it as a JSON string"
        )
    return str(value)


def _id(obj: dict[str, Any], path: Path, lineno: int, ids: dict[str, int]) -> str:
    """The line's ``_id`` by the one id rule (:func:`clean_id`), refused when repeated."""
    raw = _field(obj, "_id", path, lineno, required=True)
    key = clean_id(raw)
    if not key:
        raise BeirFormatError(
            f"{path}:{lineno}: empty _id {shown_id(raw)}; give every line a non-empty '_id'"
        )
    if key in ids:
        raise BeirFormatError(
            f"{path}:{lineno}: duplicate _id {shown_id(raw)} (first at line {ids[key]}); ids "
            "are compared stripped of surrounding whitespace and in Unicode NFC: give each "
            "line its own id"
        )
    ids[key] = lineno
    return key


def corpus_documents(
    path: str | Path,
    start: int = 0,
    stop: int | None = None,
    *,
    first: int = 1,
    check_ids: bool = True,
) -> Iterator[tuple[int, int, Document | str]]:
    r"""The documents of a BEIR ``corpus.jsonl``, one line at a time, from a byte range.

    The one reading of a corpus line: :func:`load_beir` reads the whole file
    with it, and ``hierret embed --engine ray`` reads a range of it in each
    worker (:mod:`hierret.encoders.embed.stream`), so both make the same documents.

    Parameters
    ----------
    path : str or Path
        The ``corpus.jsonl`` file.
    start, stop : int, optional
        Read the lines that start at a byte in ``[start, stop)``; ``start`` must
        be the first byte of a line (an offset this function gave).
    first : int, default 1
        The number of the line at ``start`` (for messages).
    check_ids : bool, default True
        Refuse an empty or repeated ``_id`` (a repeat within the range read).
        ``False`` keeps no ids: a pass that needs only the texts holds
        nothing per document.

    Yields
    ------
    (int, int, Document or str)
        Line number, byte offset of the line, and its document; a line whose
        title and text are empty gives its id instead (the loader drops it).

    Raises
    ------
    BeirFormatError
        A malformed line (not UTF-8, bad JSON, a field of the wrong type), named
        with file and line.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "corpus.jsonl"
    >>> _ = path.write_text('{"_id": "d1", "title": "Cats", "text": "Purr."}\n'
    ...                     '{"_id": "d2", "text": ""}\n{"_id": "d3", "text": "Bark."}\n')
    >>> [(n, at, getattr(d, "text", d)) for n, at, d in corpus_documents(path)]
    [(1, 0, 'Cats\n\nPurr.'), (2, 48, 'd2'), (3, 74, 'Bark.')]
    >>> [d.id for _, _, d in corpus_documents(path, 74, first=3)]
    ['d3']
    >>> tmp.cleanup()
    """
    path = Path(path)
    seen: dict[str, int] = {}
    for lineno, offset, obj in _placed_jsonl(path, start, stop, first):
        if check_ids:
            did = _id(obj, path, lineno, seen)
        else:
            did = clean_id(_field(obj, "_id", path, lineno, required=True))
        title = _field(obj, "title", path, lineno, required=False)
        body = _field(obj, "text", path, lineno, required=True)
        text = "\n\n".join(p for p in (title, body) if p)
        yield lineno, offset, Document(did, title, text) if text.strip() else did


def _read_corpus(path: Path) -> tuple[list[Document], list[str]]:
    """The documents with text, and the ids of those without (dropped)."""
    docs: list[Document] = []
    empty: list[str] = []
    for _, _, doc in corpus_documents(path):
        if isinstance(doc, Document):
            docs.append(doc)
        else:
            empty.append(doc)
    if not docs:
        raise BeirFormatError(
            f"{path}: no documents"
            + (f" with text ({len(empty)} have empty title and text)" if empty else "")
        )
    return docs, empty


def _read_queries(path: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, obj in _jsonl(path):
        qid = _id(obj, path, lineno, seen)
        texts[qid] = _field(obj, "text", path, lineno, required=True)
    return texts


_QRELS_FORMAT = (
    "each line must be query-id<TAB>corpus-id<TAB>integer score, after an optional "
    "header line query-id<TAB>corpus-id<TAB>score"
)
#: Header names (lower case, without ``-``, ``_`` and spaces) of the three qrels columns.
_HEADER_NAMES = (
    {"queryid", "qid", "query"},
    {"corpusid", "docid", "did", "doc", "documentid", "document", "corpus"},
    {"score", "relevance", "rel", "label", "grade", "judgment", "judgement"},
)


def _is_header(cols: list[str]) -> bool:
    """Whether three qrels columns are a header (``query-id corpus-id score`` or alike)."""
    names = ["".join(c for c in col.lower() if c not in "-_ ") for col in cols]
    return all(name in allowed for name, allowed in zip(names, _HEADER_NAMES, strict=True))


def _read_qrels(
    path: Path, queries: dict[str, str], corpus: Corpus, empty: set[str]
) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """Parse a qrels TSV; drop (and warn about) pairs naming unknown ids.

    Returns the qrels and the judgments dropped by reason (unknown query,
    unknown document, a document in ``empty`` dropped for having no text, a
    repeated pair).
    """
    doc_ids = {d.id for d in corpus}
    qrels: dict[str, dict[str, int]] = {}
    total = 0
    unknown_q: list[str] = []
    unknown_d: list[str] = []
    to_empty = 0
    duplicates = 0
    first = True
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        cols = line.rstrip("\r\n").split("\t")
        if len(cols) != 3:
            raise BeirFormatError(
                f"{path}:{lineno}: expected 3 tab-separated columns "
                f"(query-id, corpus-id, score), got {len(cols)}: {line.strip()!r:.60}; "
                f"{_QRELS_FORMAT}"
            )
        qid, did, raw = clean_id(cols[0]), clean_id(cols[1]), cols[2].strip()
        if first:
            first = False
            if _is_header([qid, did, raw]):
                continue
        try:
            score = int(raw)
        except ValueError:
            raise BeirFormatError(
                f"{path}:{lineno}: score {raw!r} is not an integer (line {line.strip()!r:.60}); "
                f"{_QRELS_FORMAT}"
            ) from None
        total += 1
        if qid not in queries:
            unknown_q.append(qid)
        elif did in empty:
            to_empty += 1
        elif did not in doc_ids:
            unknown_d.append(did)
        else:
            judged = qrels.setdefault(qid, {})
            duplicates += did in judged
            judged[did] = score
    if total == 0:
        raise BeirFormatError(f"{path}: no judgments")
    if not qrels:
        raise BeirFormatError(
            f"{path}: none of the {total} judgments names a known query and document "
            f"({len(unknown_q)} unknown queries, {len(unknown_d)} unknown documents, "
            f"{to_empty} documents with no text); are the qrels from another dataset?"
        )
    if unknown_q or unknown_d or duplicates:
        _warn_dropped(path, total, unknown_q, unknown_d, duplicates)
    return qrels, {
        "judgments naming unknown queries": len(unknown_q),
        "judgments naming unknown documents": len(unknown_d),
        "judgments naming documents without text": to_empty,
        "judgments repeating an earlier pair (last score kept)": duplicates,
    }


def _shown(ids: list[str]) -> str:
    """The first three ids, each in its ``ascii()`` form."""
    return "[" + ", ".join(shown_id(i) for i in ids[:3]) + (", ...]" if len(ids) > 3 else "]")


def _warn_dropped(
    path: Path, total: int, unknown_q: list[str], unknown_d: list[str], duplicates: int
) -> None:
    parts = []
    if unknown_q:
        parts.append(f"{len(unknown_q)} name unknown queries (e.g. {_shown(unknown_q)})")
    if unknown_d:
        parts.append(f"{len(unknown_d)} name unknown documents (e.g. {_shown(unknown_d)})")
    if duplicates:
        parts.append(f"{duplicates} repeat an earlier pair (last score kept)")
    # stacklevel: _warn_dropped < _read_qrels < load_beir < the caller
    warnings.warn(
        f"{path}: of {total} judgments, " + "; ".join(parts), BeirDataWarning, stacklevel=4
    )
