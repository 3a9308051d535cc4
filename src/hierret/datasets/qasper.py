r"""Loader for Qasper v0.3 (questions over NLP papers, with evidence paragraphs).

Each paper becomes one :class:`~hierret.structure.units.Document` whose text is Markdown,
so :func:`hierret.structure.hierarchy.build_hierarchy` finds its sections *with their
nesting*::

    # Paper title

    ## Abstract

    abstract text

    ## Method

    paragraph

    ### Encoder

    paragraph

Blocks are separated by one blank line and paragraph text is kept verbatim
(paragraphs that are empty or whitespace-only are skipped and counted). A
``full_text`` entry named ``"Method ::: Encoder"`` sits at nesting depth 2 and
gets a level-3 heading; its ancestors that are not the currently open sections
are written first, once each (``"Appendices ::: Lexicon ::: Positive"`` after
``"Conclusion"`` writes ``## Appendices``, ``### Lexicon`` and
``#### Positive``). Parts nested deeper than Markdown's six levels are joined
into the level-6 heading. An entry whose name is empty (or only ``:::``
separators) continues the previous section; before any named section it opens
a level-2 ``(untitled)`` section instead of joining the abstract.

Every question becomes a :class:`~hierret.structure.units.Query` whose evidence is the
span of each evidence paragraph cited by an annotation that did not mark the
question unanswerable. Evidence starting with ``FLOAT SELECTED`` (or equal to
a figure or table caption) points at a figure or table, which the text does
not hold: it is counted and left out. Other evidence is matched to a paragraph
exactly, else located modulo whitespace with :func:`hierret.datasets.locate`
inside the same paper (every occurrence is kept). A question is kept when at
least one evidence item was located; the others are counted in
:class:`QasperStats` (unanswerable, figure/table evidence only, or no located
evidence) and dropped.

The file is checked before any text is built: every field the loader reads
must have the JSON type of the v0.3 layout (``null`` stands for an absent
optional field), paper ids must be unique, the bytes valid UTF-8 and every
string valid Unicode (no JSON escape of a lone surrogate, such as ``\\ud800``
without the other half of its pair). Anything
else raises :class:`QasperFormatError` naming the file, the paper, the field's
path inside it, what was found, the rule and the fix. So does a structure that
would load as something else without a word: a file holding no papers
(``{}``); papers wrapped in one more object (``{"data": {"p1": {...}}}`` would
be one paper called ``"data"``); an object in a paper's place with none of a
paper's fields; an annotation whose ``evidence`` (or another answer field)
sits beside ``answer`` instead of inside it (its question would be dropped as
without evidence); and a file whose every question is dropped.

The questions dropped (unanswerable, figure/table evidence only, no located
evidence) are counted by reason in :attr:`QasperDataset.dropped`, and in
:meth:`QasperDataset.identity` as the ``qasper_*`` counts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any

from hierret._validate import find_lone_surrogate, surrogate_escape, surrogate_message
from hierret.datasets._dropped import describe_dropped, nonzero
from hierret.datasets._encoding import not_utf8
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
    extract_tar,
    fetch,
)
from hierret.datasets.gold import locate
from hierret.structure.hierarchy import detect_headings
from hierret.structure.units import Corpus, Document, Query, Span

#: The heading syntax Qasper documents are written in: build their hierarchy with
#: ``build_hierarchy(corpus, heading_styles=HEADING_STYLES)`` so that a paragraph
#: starting with a number ("5 Public House ...") never becomes a section.
HEADING_STYLES: tuple[str, ...] = ("markdown",)

__all__ = [
    "HEADING_STYLES",
    "QASPER_BASE_URL",
    "QASPER_DOWNLOADS",
    "QasperDataset",
    "QasperFormatError",
    "QasperRemote",
    "QasperStats",
    "load_qasper",
]

log = logging.getLogger(__name__)

QASPER_BASE_URL = "https://qasper-dataset.s3.us-west-2.amazonaws.com"

#: Separator of nested section names in ``full_text[].section_name``.
LEVEL_SEPARATOR = ":::"
#: Prefix Qasper gives to evidence that points at a figure or table.
FLOAT_PREFIX = "FLOAT SELECTED"
UNTITLED = "(untitled)"
_MAX_LEVEL = 6


@dataclass(frozen=True)
class QasperRemote:
    """Where one Qasper split is downloaded from.

    Parameters
    ----------
    url : str
        The ``.tgz`` archive holding the split.
    digest : str
        Pinned hex digest of the archive.
    algorithm : {"sha256", "md5"}
        Algorithm of ``digest``.
    member : str
        File name of the split's JSON inside the archive.
    """

    url: str
    digest: str
    algorithm: DigestAlgorithm
    member: str

    @property
    def archive(self) -> str:
        """The archive's file name (last part of the URL)."""
        return self.url.rsplit("/", 1)[-1]


# AllenAI publishes no checksum for these archives. The SHA-256 digests (and sizes:
# 10,835,856 and 3,865,061 bytes) are the ones that many independent public projects
# pin for these exact URLs (found with code search over public GitHub code: download
# scripts, dataset READMEs and manifests, all agreeing). ir_datasets has no Qasper entry.
_TRAIN_DEV_SHA256 = "a28fdf966db827bcee3d873107d6b6669864fb7ca8fbf73a192f5e39191bdb5a"
_TEST_SHA256 = "72a52a41193e2838b8074f80ac074b94f956b84886c36a61c58a7df4171bdd72"

#: Known split names and their archives. Tests (or users with a mirror) may add or
#: replace entries.
QASPER_DOWNLOADS: dict[str, QasperRemote] = {
    "train": QasperRemote(
        f"{QASPER_BASE_URL}/qasper-train-dev-v0.3.tgz",
        _TRAIN_DEV_SHA256,
        "sha256",
        "qasper-train-v0.3.json",
    ),
    "dev": QasperRemote(
        f"{QASPER_BASE_URL}/qasper-train-dev-v0.3.tgz",
        _TRAIN_DEV_SHA256,
        "sha256",
        "qasper-dev-v0.3.json",
    ),
    "test": QasperRemote(
        f"{QASPER_BASE_URL}/qasper-test-and-evaluator-v0.3.tgz",
        _TEST_SHA256,
        "sha256",
        "qasper-test-v0.3.json",
    ),
}


class QasperFormatError(DataFormatError):
    """A Qasper file is not in the v0.3 layout (a :class:`ValueError`)."""


@dataclass(frozen=True)
class QasperStats:
    """What the loader kept, dropped and could not place.

    ``questions == kept + unanswerable + figure_table_only +
    no_located_evidence``. Evidence items are counted per annotation (two
    annotators citing one paragraph count twice); ``evidence_total`` counts
    text evidence only, so ``evidence_located`` of ``evidence_total`` were found
    in the paper, and ``evidence_figure_table`` more were left out as pointing
    at figures or tables. ``blank_paragraphs`` were empty or whitespace-only and
    skipped; ``stray_headings`` are headings that
    :func:`~hierret.structure.hierarchy.detect_headings` finds in paragraph text (so the
    section tree has more sections than the paper).
    """

    papers: int = 0
    questions: int = 0
    kept: int = 0
    unanswerable: int = 0
    figure_table_only: int = 0
    no_located_evidence: int = 0
    evidence_total: int = 0
    evidence_located: int = 0
    evidence_figure_table: int = 0
    blank_paragraphs: int = 0
    stray_headings: int = 0

    def summary(self) -> str:
        """One line for logs and reports.

        Examples
        --------
        >>> print(QasperStats(2, 5, 3, 1, 1, 0, 4, 4, 1).summary())
        2 papers, 5 questions: 3 kept; dropped 1 unanswerable, 1 with figure/table evidence only, 0 without located evidence; 4/4 evidence spans located (1 figure/table evidence left out)
        """  # noqa: E501
        return (
            f"{self.papers} papers, {self.questions} questions: {self.kept} kept; dropped "
            f"{self.unanswerable} unanswerable, {self.figure_table_only} with figure/table "
            f"evidence only, {self.no_located_evidence} without located evidence; "
            f"{self.evidence_located}/{self.evidence_total} evidence spans located "
            f"({self.evidence_figure_table} figure/table evidence left out)"
        )


@dataclass(frozen=True)
class QasperDataset:
    """Qasper papers as a corpus, with the questions that have located evidence.

    Parameters
    ----------
    name : str
        The split name, or the file stem for a file path.
    corpus : Corpus
        One document per paper (id: the arXiv id), named ``qasper-{name}``.
    queries : list of Query
        Kept questions (id: ``question_id``), in file order.
    stats : QasperStats
        Counts of what was kept and dropped.
    unlocated : list of str
        One line per text evidence item not found in its paper.
    path : Path
        The JSON file read.
    """

    name: str
    corpus: Corpus
    queries: list[Query]
    stats: QasperStats
    unlocated: list[str] = field(default_factory=list)
    path: Path = Path()

    @property
    def dropped(self) -> dict[str, int]:
        """The questions dropped, by reason (only reasons with a count)."""
        return _dropped(self.stats)

    def identity(self) -> dict[str, str | int]:
        """What a result records about the data it ran on (no local paths)."""
        h = hashlib.sha256()
        for q in self.queries:
            h.update(f"{q.id}\t{q.text}\t{q.evidence}\n".encode())
        return {
            **self.corpus.identity(),
            "dataset": f"qasper/{self.name}",
            "queries": len(self.queries),
            "evidence_fingerprint": h.hexdigest()[:16],
            **{f"qasper_{k}": v for k, v in asdict(self.stats).items()},
        }


def load_qasper(
    path_or_split: str | os.PathLike[str],
    *,
    max_papers: int | None = None,
    download: bool = True,
    progress: bool = True,
) -> QasperDataset:
    """Load a Qasper v0.3 file or split.

    Parameters
    ----------
    path_or_split : str or path-like
        A JSON file in the official layout, or a split name (``"train"``,
        ``"dev"``, ``"test"``; a key of :data:`QASPER_DOWNLOADS`) looked for in
        ``data_home() / "qasper"``.
    max_papers : int, optional
        Keep only the first ``max_papers`` papers of the file (``>= 0``).
    download : bool
        Download and extract the pinned archive when a split is absent.
    progress : bool
        Show a progress bar while downloading.

    Returns
    -------
    QasperDataset
        Corpus, kept questions with evidence spans, and counts.

    Raises
    ------
    DataNotFoundError
        Neither a file nor a known split; or the split is absent and could not
        (or may not) be downloaded.
    QasperFormatError
        The file is not valid UTF-8, not JSON, not an object of uniquely named
        papers, or a field the loader reads has the wrong type (see the module
        docstring); raised before any paper is built.
    ValueError
        ``max_papers`` is negative.

    Examples
    --------
    >>> import json, tempfile
    >>> paper = {"title": "T", "abstract": "We study x.", "figures_and_tables": [],
    ...          "full_text": [{"section_name": "Intro", "paragraphs": ["X is y."]}],
    ...          "qas": [{"question": "What is x?", "question_id": "q1", "answers": [
    ...              {"answer": {"unanswerable": False, "evidence": ["X is y."]}}]}]}
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name, "mini.json")
    >>> _ = path.write_text(json.dumps({"p1": paper}))
    >>> ds = load_qasper(path)
    >>> print(ds.corpus["p1"].text)
    # T
    <BLANKLINE>
    ## Abstract
    <BLANKLINE>
    We study x.
    <BLANKLINE>
    ## Intro
    <BLANKLINE>
    X is y.
    >>> doc, start, end = ds.queries[0].evidence[0]
    >>> ds.corpus[doc].text[start:end]
    'X is y.'
    >>> ds.corpus.name, ds.stats.kept, ds.stats.evidence_located
    ('qasper-mini', 1, 1)
    >>> tmp.cleanup()
    """
    if max_papers is not None and (
        isinstance(max_papers, bool) or not isinstance(max_papers, int) or max_papers < 0
    ):
        raise ValueError(f"max_papers must be None or an integer >= 0, got {max_papers!r}")
    path, name = _resolve(path_or_split, download=download, progress=progress)
    raw = _read_json(path)
    papers = list(raw.items())[:max_papers] if max_papers is not None else list(raw.items())
    for pid, paper in papers:
        _check_paper(pid, paper, path)
    counts: dict[str, int] = dict.fromkeys(asdict(QasperStats()), 0)
    docs: list[Document] = []
    queries: list[Query] = []
    unlocated: list[str] = []
    seen: set[str] = set()
    for pid, paper in papers:
        paper_doc = _PaperText(str(pid), paper, path)
        docs.append(paper_doc.document)
        counts["papers"] += 1
        counts["blank_paragraphs"] += paper_doc.blank_paragraphs
        counts["stray_headings"] += paper_doc.stray_headings
        for query in _questions(paper_doc, paper, path, counts, unlocated):
            if query.id in seen:
                raise QasperFormatError(f"{path}: duplicate question_id {query.id!r}")
            seen.add(query.id)
            queries.append(query)
    stats = QasperStats(**counts)
    if stats.questions and not stats.kept:
        dropped = describe_dropped(_dropped(stats))
        raise QasperFormatError(
            f"{path}: every one of its {stats.questions} question(s) was dropped ({dropped}): "
            "nothing to evaluate; give answers with 'evidence' paragraphs found in the paper "
            f"({_LAYOUT})"
        )
    log.info("loaded qasper/%s: %s", name, stats.summary())
    if stats.stray_headings:
        log.warning(
            "qasper/%s: %d Markdown heading(s) found inside paragraph text; those papers' "
            "section trees have extra sections",
            name,
            stats.stray_headings,
        )
    return QasperDataset(name, Corpus(f"qasper-{name}", docs), queries, stats, unlocated, path)


def _dropped(stats: QasperStats) -> dict[str, int]:
    return nonzero(
        {
            "questions unanswerable": stats.unanswerable,
            "questions with figure/table evidence only": stats.figure_table_only,
            "questions without located evidence": stats.no_located_evidence,
        }
    )


class _PaperText:
    """Build one paper's Markdown text, remembering where each paragraph went."""

    def __init__(self, pid: str, paper: Mapping[str, Any], path: Path) -> None:
        self.pid = pid
        self.parts: list[str] = []
        self.pos = 0
        self.paragraphs: dict[str, list[tuple[int, int]]] = {}
        self.headings: set[tuple[int, int, str]] = set()
        self.blank_paragraphs = 0
        title = _clean(_text(paper, "title", pid, path)) or pid
        self._heading(1, title)
        abstract = _text(paper, "abstract", pid, path)
        if abstract.strip():
            self._heading(2, "Abstract")
            self._paragraph(abstract)
        full_text = paper.get("full_text") or []  # types checked by _check_paper
        open_path: list[str] = []
        for section in full_text:
            open_path = self._open(_section_parts(section.get("section_name")), open_path)
            for para in section["paragraphs"]:
                if para.strip():
                    self._paragraph(para)
                else:
                    self.blank_paragraphs += 1
        text = "".join(self.parts)
        self.document = Document(pid, title, text)
        self.stray_headings = sum(
            (h.start, h.level, h.title) not in self.headings
            for h in detect_headings(text, HEADING_STYLES)
        )

    def _add(self, block: str) -> tuple[int, int]:
        if self.parts:
            self.parts.append("\n\n")
            self.pos += 2
        start = self.pos
        self.parts.append(block)
        self.pos += len(block)
        return start, self.pos

    def _heading(self, level: int, title: str) -> None:
        start, _ = self._add(f"{'#' * level} {title}")
        self.headings.add((start, level, title))

    def _paragraph(self, text: str) -> None:
        self.paragraphs.setdefault(text, []).append(self._add(text))

    def _open(self, parts: list[str], open_path: list[str]) -> list[str]:
        """Write the headings that take the text from ``open_path`` to ``parts``."""
        if not parts:  # unnamed: continue the open section, or open "(untitled)"
            parts = open_path or [UNTITLED]
        if len(parts) > _MAX_LEVEL - 1:
            parts = [*parts[: _MAX_LEVEL - 2], f" {LEVEL_SEPARATOR} ".join(parts[_MAX_LEVEL - 2 :])]
        if parts == open_path:
            return open_path
        common = 0
        while common < min(len(parts), len(open_path)) and parts[common] == open_path[common]:
            common += 1
        if common == len(parts):  # back up to an ancestor: repeat its heading
            common -= 1
        for depth in range(common, len(parts)):
            self._heading(depth + 2, parts[depth])
        return parts

    def spans(self, evidence: str) -> list[Span]:
        """Where ``evidence`` is in the text: exact paragraphs, else modulo whitespace."""
        exact = self.paragraphs.get(evidence)
        if exact:
            return [(self.pid, s, e) for s, e in exact]
        return locate(evidence, Corpus("paper", [self.document]))


def _questions(
    paper: _PaperText,
    raw: Mapping[str, Any],
    path: Path,
    counts: dict[str, int],
    unlocated: list[str],
) -> list[Query]:
    # types checked by _check_paper
    captions = {_clean(f.get("caption") or "") for f in raw.get("figures_and_tables") or []} - {""}
    kept: list[Query] = []
    for qa in raw.get("qas") or []:
        qid, question = str(qa["question_id"]), qa["question"]
        answers = [a["answer"] for a in qa["answers"]]
        counts["questions"] += 1
        answerable = [a for a in answers if not a.get("unanswerable")]
        if not answerable:
            counts["unanswerable"] += 1
            continue
        spans: list[Span] = []
        n_text = n_float = 0
        for answer in answerable:
            for item in answer.get("evidence") or []:
                if not item.strip():
                    continue
                if item.lstrip().startswith(FLOAT_PREFIX) or _clean(item) in captions:
                    n_float += 1
                    continue
                n_text += 1
                found = paper.spans(item)
                if found:
                    counts["evidence_located"] += 1
                    spans.extend(found)
                else:
                    unlocated.append(
                        f"{qid}: evidence {item[:60]!r} not found in paper {paper.pid}"
                    )
        counts["evidence_total"] += n_text
        counts["evidence_figure_table"] += n_float
        if spans:
            counts["kept"] += 1
            kept.append(Query(qid, str(question), tuple(dict.fromkeys(spans))))
        elif n_float and not n_text:
            counts["figure_table_only"] += 1
        else:
            counts["no_located_evidence"] += 1
    return kept


def _read_json(path: Path) -> dict[str, Any]:
    """The file's top-level object, after checking its encoding, syntax and paper ids."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise QasperFormatError(
            f"{path}: not valid UTF-8: byte {err.start} (line {line}) is "
            f"{data[err.start : err.end]!r} ({err.reason}); "
            + not_utf8(data, path, "Qasper files")
            + " (or download it again)"
        ) from None
    duplicates: list[tuple[dict[str, Any], list[str]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            keys = [k for k, _ in items]
            duplicates.append((obj, [k for k in obj if keys.count(k) > 1]))
        return obj

    try:
        raw = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as err:
        raise QasperFormatError(f"{path}: malformed JSON: {err}") from None
    if not isinstance(raw, dict):
        raise QasperFormatError(
            f"{path}: expected a JSON object mapping paper ids to papers, got "
            f"{_kind(raw)}; a list of papers or several files must be merged into one object "
            "keyed by paper id"
        )
    if not raw:
        raise QasperFormatError(
            f"{path}: holds no papers (an empty object); a Qasper file maps paper ids to "
            f"papers ({_LAYOUT}): check that the right file was given, and that it was "
            "written completely"
        )
    for obj, dup in duplicates:
        if obj is raw:
            raise QasperFormatError(
                f"{path}: paper id(s) {sorted(set(dup))[:5]} appear more than once (JSON keeps "
                "only the last, silently dropping papers); give each paper one entry, e.g. "
                "after merging files drop or rename the repeats"
            )
    if surrogate_escape.search(text):
        for pid, paper in raw.items():
            bad = find_lone_surrogate({"paper id": pid}) or find_lone_surrogate(paper)
            if bad:
                where, value, at = bad
                field = where if where.startswith("key ") else f"field {where!r}"
                raise QasperFormatError(
                    f"{path}: paper {pid!r}: {surrogate_message(field, value, at)}"
                )
    return raw


_LAYOUT = "see the Qasper v0.3 layout (https://allenai.org/data/qasper)"


def _kind(value: object) -> str:
    """A JSON value's type, with a short preview, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {value[:40] + '...' if len(value) > 40 else value!r}"
    if isinstance(value, list):
        return f"array of {len(value)} item(s)"
    if isinstance(value, dict):
        return f"object with keys {sorted(value)[:5]}"
    return type(value).__name__  # pragma: no cover - json.loads makes nothing else


_MISSING = object()
#: The fields of a v0.3 paper the loader reads.
_PAPER_FIELDS = frozenset({"title", "abstract", "full_text", "qas", "figures_and_tables"})
#: The fields of a v0.3 answer (inside an annotation's ``answer``).
_ANSWER_FIELDS = frozenset(
    {
        "unanswerable",
        "evidence",
        "highlighted_evidence",
        "extractive_spans",
        "free_form_answer",
        "yes_no",
    }
)


class _Checker:
    """Raise :class:`QasperFormatError` for the first field of a paper with a wrong type."""

    def __init__(self, pid: str, path: Path) -> None:
        self.pid = pid
        self.path = path

    def fail(self, where: str, value: object, rule: str, fix: str = _LAYOUT) -> QasperFormatError:
        got = "nothing (the field is missing)" if value is _MISSING else _kind(value)
        return QasperFormatError(
            f"{self.path}: paper {self.pid!r}: field {where!r} must be {rule}, got {got}; {fix}"
        )

    def required(self, obj: Mapping[str, Any], key: str, where: str, rule: str) -> Any:
        """``obj[key]``; a missing key fails with ``rule``."""
        if key not in obj:
            raise self.fail(where, _MISSING, rule)
        return obj[key]

    def optional(
        self, value: object, where: str, kind: type | UnionType, rule: str, fix: str = _LAYOUT
    ) -> Any:
        """``value`` if it is ``None`` or of ``kind`` (never a bool for numbers)."""
        if value is None:
            return None
        if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
            raise self.fail(where, value, rule, fix)
        return value


def _check_paper(pid: str, paper: object, path: Path) -> None:
    """Check the type of every field the loader reads from one paper."""
    c = _Checker(pid, path)
    if not isinstance(paper, dict):
        raise QasperFormatError(
            f"{path}: paper {pid!r} is not a JSON object, got {_kind(paper)}; each paper id "
            f"must map to an object with 'title', 'abstract', 'full_text' and 'qas' ({_LAYOUT})"
        )
    if not paper.keys() & _PAPER_FIELDS:
        inner = [k for k, v in paper.items() if isinstance(v, dict) and v.keys() & _PAPER_FIELDS]
        fix = (
            f"the papers seem wrapped in one more object: give the object under {pid!r} "
            f"itself, e.g. json.dump(json.load(f)[{pid!r}], out)"
            if inner
            else f"each paper needs its 'title', 'abstract', 'full_text' and 'qas' ({_LAYOUT})"
        )
        raise QasperFormatError(
            f"{path}: paper {pid!r} has none of a paper's fields "
            f"({', '.join(sorted(_PAPER_FIELDS))}), got {_kind(paper)}; {fix}"
        )
    for key in ("title", "abstract"):
        c.optional(paper.get(key), key, str, "a string (or null)")
    sections = c.optional(paper.get("full_text"), "full_text", list, "a list (or null)") or []
    for i, section in enumerate(sections):
        where = f"full_text[{i}]"
        if not isinstance(section, dict):
            raise c.fail(where, section, "an object with 'section_name' and 'paragraphs'")
        c.optional(section.get("section_name"), f"{where}.section_name", str, "a string or null")
        rule = "a list of 'paragraphs' (strings)"
        paragraphs = c.required(section, "paragraphs", f"{where}.paragraphs", rule)
        if not isinstance(paragraphs, list):
            raise c.fail(f"{where}.paragraphs", paragraphs, rule)
        for j, para in enumerate(paragraphs):
            if not isinstance(para, str):
                raise c.fail(f"{where}.paragraphs[{j}]", para, "a string")
    figures = paper.get("figures_and_tables")
    figures = c.optional(figures, "figures_and_tables", list, "a list (or null)") or []
    for i, figure in enumerate(figures):
        where = f"figures_and_tables[{i}]"
        if not isinstance(figure, dict):
            raise c.fail(where, figure, "an object with a 'caption'")
        c.optional(figure.get("caption"), f"{where}.caption", str, "a string (or null)")
    for i, qa in enumerate(c.optional(paper.get("qas"), "qas", list, "a list (or null)") or []):
        _check_question(c, f"qas[{i}]", qa)


def _check_question(c: _Checker, where: str, qa: object) -> None:
    if not isinstance(qa, dict):
        raise c.fail(where, qa, "an object with 'question_id', 'question' and 'answers'")
    qid = c.required(qa, "question_id", f"{where}.question_id", "a string")
    c.optional(qid, f"{where}.question_id", str | int, "a string")
    if qid is None:
        raise c.fail(f"{where}.question_id", qid, "a string")
    question = c.required(qa, "question", f"{where}.question", "a string")
    if not isinstance(question, str):
        raise c.fail(f"{where}.question", question, "a string")
    rule = "a list of objects with an 'answer'"
    annotations = c.required(qa, "answers", f"{where}.answers", rule)
    if not isinstance(annotations, list):
        raise c.fail(f"{where}.answers", annotations, rule)
    for j, annotation in enumerate(annotations):
        at = f"{where}.answers[{j}]"
        if not isinstance(annotation, dict):
            raise c.fail(at, annotation, "an object with an 'answer'")
        rule = "an object with 'unanswerable' and 'evidence'"
        beside = sorted(annotation.keys() & _ANSWER_FIELDS)
        if beside:
            raise c.fail(
                f"{at}.{beside[0]}",
                annotation[beside[0]],
                "inside the annotation's 'answer' object, not beside it",
                f"move {beside} into 'answer': "
                '{"answer": {"unanswerable": false, "evidence": [...]}}',
            )
        answer = c.required(annotation, "answer", f"{at}.answer", rule)
        if not isinstance(answer, dict):
            raise c.fail(f"{at}.answer", answer, rule)
        c.optional(
            answer.get("unanswerable"), f"{at}.answer.unanswerable", bool, "true, false or null"
        )
        evidence = c.optional(
            answer.get("evidence"),
            f"{at}.answer.evidence",
            list,
            "a list of strings (or null)",
            'put the evidence paragraph(s) in a list: ["paragraph text", ...]',
        )
        for k, item in enumerate(evidence or []):
            if not isinstance(item, str):
                raise c.fail(f"{at}.answer.evidence[{k}]", item, "a string (a paragraph's text)")


def _text(paper: Mapping[str, Any], key: str, pid: str, path: Path) -> str:
    value = paper.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise QasperFormatError(f"{path}: paper {pid!r}: {key!r} must be a string")
    return value


def _clean(text: str) -> str:
    return " ".join(text.split())


def _section_parts(name: object) -> list[str]:
    """``"A ::: B"`` -> ``["A", "B"]``; empty parts (and None) are dropped."""
    if not isinstance(name, str):
        return []
    return [p for p in (_clean(part) for part in name.split(LEVEL_SEPARATOR)) if p]


def _resolve(
    path_or_split: str | os.PathLike[str], *, download: bool, progress: bool
) -> tuple[Path, str]:
    """The JSON file to read and the dataset name (split, or file stem)."""
    path = Path(path_or_split).expanduser()
    if path.is_file():
        return path, path.stem
    split = str(path_or_split)
    if split not in QASPER_DOWNLOADS:
        raise DataNotFoundError(
            f"{split!r} is neither an existing file nor a known Qasper split "
            f"(known: {', '.join(sorted(QASPER_DOWNLOADS))})"
        )
    remote = QASPER_DOWNLOADS[split]
    folder = data_home() / "qasper"
    extracted = folder / remote.archive.removesuffix(".tgz").removesuffix(".tar.gz")
    found = _find(folder, extracted, remote.member)
    if found:
        return found, split
    hint = (
        f"Set {DATA_ENV} to a folder that holds qasper/{remote.member} (the full splits are "
        f"not on the project's machines)"
    )
    if not download:
        raise DataNotFoundError(
            f"Qasper split {split!r} not found: looked for {folder / remote.member} and in "
            f"{extracted}. {hint}, or allow download=True to fetch {remote.url}."
        )
    try:
        archive = fetch(
            remote.url,
            remote.digest,
            folder / remote.archive,
            algorithm=remote.algorithm,
            progress=progress,
        )
        extract_tar(archive, extracted)
    except FileExistsError:  # pragma: no cover - another process extracted it first
        pass
    except CorruptArchiveError as err:
        dropped = drop_damaged_archive(folder / remote.archive, remote.url, err)
        raise DataNotFoundError(f"Qasper split {split!r}: {dropped}.\n{hint}.") from err
    except (DownloadError, UnsafeArchiveError, tarfile.TarError, OSError) as err:
        raise DataNotFoundError(
            f"Qasper split {split!r} not found in {folder} and could not be downloaded:\n"
            f"{err}\n{hint}."
        ) from err
    found = _find(folder, extracted, remote.member)
    if not found:
        raise DataNotFoundError(f"{remote.url} holds no {remote.member} (extracted to {extracted})")
    return found, split


def _find(folder: Path, extracted: Path, member: str) -> Path | None:
    direct = folder / member
    if direct.is_file():
        return direct
    if extracted.is_dir():
        matches: Sequence[Path] = sorted(extracted.rglob(member))
        return matches[0] if matches else None
    return None
