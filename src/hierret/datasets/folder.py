r"""Your own documents: a folder of Markdown, reStructuredText or text files with questions.

:func:`~hierret.datasets.load` takes such a folder (or the path of its
``questions.jsonl``) as it takes a corpus name, so the studies run on your
documents with no Python written::

    handbook/
        README.md          optional: describes the folder, is not a document
        questions.jsonl    the questions, one JSON object a line
        install.md         a document: id "install"
        guide/config.rst   a document: id "guide/config"
        notes/faq.txt      a document: id "notes/faq"

**Documents.** Every ``*.md``, ``*.markdown``, ``*.rst`` and ``*.txt`` file
under the folder, at any depth, sorted by relative path. Names starting with a
dot (``.git/``, ``.ipynb_checkpoints/``) are left out, and so is a file named
``README`` (any case, any of those suffixes) at the top of the folder: it
describes the folder. A document's id is its relative path without the suffix,
with ``/`` separators (``guide/config``), in Unicode NFC (a file named on macOS
is NFD; ids in ``relevant`` are stripped and put in NFC too, by the one id rule
of :func:`~hierret.datasets._ids.clean_id`); two files that differ only by suffix
(``a.md``, ``a.rst``) are refused. Files are UTF-8 (a byte-order mark is
dropped; ``\r\n`` and ``\r`` line ends become ``\n`` before quotes are
located), and their text is put in Unicode NFC, as ids are (a document saved
in NFD holds the quotes typed in NFC; quotes are compared in NFC too). A
symlinked file is read when it points inside the folder; symlinked folders
and links pointing outside it are not followed, and an empty file is skipped:
each is named in the warning. The title is the document's first heading, else
the file stem. A Markdown file's front matter (a YAML block between ``---``
lines, or TOML between ``+++`` lines, at the very start) is not text of the
document: its ``title`` names the document (before the first heading), and
the block is neither embedded nor searched. A file that is a whole HTML page
(a web page saved as ``.md`` or ``.txt``) is read as the text a browser
shows, its ``<h1>``..``<h6>`` as headings and its ``<title>`` as the title,
never with its tags, and is named in the warning.

**Sections** come from headings, by :func:`~hierret.structure.hierarchy.detect_headings`
with the styles of the file's kind: Markdown ``#`` headings, and underlined
(setext) ones, by the ``"rst"`` rule (``("rst", "markdown")``); reStructuredText
underlined titles (``("rst",)``; a title with an overline is not found); plain
text numbered headings such as ``2.1 Scope`` on a line of their own between
blank lines (``("numbered",)``), or none. :func:`~hierret.structure.hierarchy.build_hierarchy`
takes one set of styles per corpus, so the folder's
:attr:`FolderDataset.heading_styles` is the union over the kinds present; a
document that this union reads differently from its own kind (a loose Markdown
list item ``1. Install`` becomes a numbered heading once a ``.txt`` file is in
the folder) is named in the warning.

**Questions**: ``questions.jsonl`` beside the documents, one JSON object a
line (blank lines skipped), each with a ``question`` and *either* evidence
quotes *or* relevant ids::

    {"id": "q1", "question": "How do I pin the version?", "evidence": ["Pin the version with ..."]}
    {"id": "q2", "question": "Where are the logs?", "relevant": ["guide/config > Logging"]}

``id`` is optional (default ``q<n>``, ``n`` the question's position in the
file); ``kind`` and ``note`` are free text, read and ignored; any other key
is refused (a misspelt ``evidance`` would otherwise go unseen).

- ``evidence``: verbatim quotes of at least 40 characters, located in the
  documents by the rule of the gold set (:func:`~hierret.datasets.locate`:
  equal modulo whitespace, so line breaks may differ). As in the gold set,
  *every* place a quote is found is evidence. Such a question is judged at
  every target: documents, sections and passages (by span overlap).
- ``relevant``: document ids (``"guide/config"``) or sections written as the
  document id and the section's heading path, joined by ``" > "``:
  ``"guide/config > Configuration > Logging"``, the path ``hierret search``
  prints for a hit (it is split at each ``>``; spaces around it do not matter,
  so a heading holding ``>`` cannot be named). The path may be shortened from
  the top (``"guide/config > Logging"``): it names every section of the
  document whose heading path ends with the titles given (compared modulo
  whitespace). A section is evidence with its subsections. A question naming
  only sections is judged at documents and sections; one naming a document, at
  documents only:
  :meth:`~hierret.datasets.Bundle.judged_queries` and
  :meth:`~hierret.datasets.Bundle.qrels` leave it out of finer targets.

**Bad input.** What makes the file unreadable or its meaning unclear is
refused with a :class:`FolderFormatError` naming the file, the line, the
question id and the fix: malformed JSON, a line that is not an object, an
unknown key, a missing or empty ``question``, a question with neither
evidence nor relevant ids (or both), a quote shorter than 40 characters, a
duplicate id, a file that is not UTF-8 (the error names the encoding it most
likely is and the ``iconv`` command for it) or holds NUL bytes, no documents, no questions file, no
question left, a question or quote holding a lone surrogate (a JSON escape such
as ``\ud800`` without the other half of its pair), a file name that is not
UTF-8. What the gold set drops, this loader drops too, keeping the
question without the bad item, with *one* :class:`FolderDataWarning` per load
that counts and lists them: a quote found in no document, an unknown document
or section id, a question left with nothing to judge it by (dropped), files
skipped. A quote or section path found in several places is kept in every
place (the gold set's rule), and named in the same warning.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
import os
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from hierret._validate import (
    find_lone_surrogate,
    has_text,
    lone_surrogate,
    surrogate_escape,
    surrogate_message,
)
from hierret.datasets._encoding import not_utf8
from hierret.datasets._frontmatter import front_matter_title, split_front_matter
from hierret.datasets._html import html_to_text, looks_like_html
from hierret.datasets._ids import clean_id, shown_id
from hierret.datasets._paths import broken_link
from hierret.datasets.download import DataFormatError
from hierret.datasets.gold import locate
from hierret.structure.hierarchy import HEADING_STYLES, Section, build_hierarchy, detect_headings
from hierret.structure.units import Corpus, Document, Level, Query, Span

__all__ = [
    "EXAMPLE_LINES",
    "QUESTIONS_FILE",
    "SUFFIXES",
    "FolderDataWarning",
    "FolderDataset",
    "FolderFormatError",
    "load_folder",
]

#: The questions file a folder of documents holds.
QUESTIONS_FILE = "questions.jsonl"
#: Document suffixes (compared in lower case) and the heading styles of each kind.
SUFFIXES: Mapping[str, tuple[str, ...]] = {
    ".md": ("rst", "markdown"),
    ".markdown": ("rst", "markdown"),
    ".rst": ("rst",),
    ".txt": ("numbered",),
}
#: One line of each kind, for messages and documentation.
EXAMPLE_LINES = (
    '{"id": "q1", "question": "How do I install it?", '
    '"evidence": ["a verbatim quote of 40 characters or more from a document"]}',
    '{"id": "q2", "question": "Where are the logs?", '
    '"relevant": ["guide/config", "guide/config > Logging"]}',
)
#: Shortest quote accepted, modulo whitespace: the gold set's rule (shorter ones match too much).
MIN_QUOTE_CHARS = 40
_KEYS = ("id", "question", "evidence", "relevant", "kind", "note")
_SHOWN = 10  # items listed per class in the warning
_FIX = {
    "quote_unfound": "copy quotes verbatim from the documents; line breaks and spaces may differ",
    "id_unknown": "write a document id as its relative path without suffix ('guide/config') "
    "and a section as id > heading path ('guide/config > Logging')",
}


class FolderFormatError(DataFormatError):
    """A folder of documents or its questions file cannot be read (a :class:`ValueError`)."""


class FolderDataWarning(UserWarning):
    """Items of the questions file were not used, or files were skipped (one per load)."""


@dataclass(frozen=True)
class FolderDataset:
    """A folder's documents and questions, located.

    Parameters
    ----------
    name : str
        The folder's name.
    corpus : Corpus
        The documents, sorted by relative path, named ``folder-{name}``.
    queries : list of Query
        The questions kept, in file order, with their evidence spans.
    judged_at : dict of str to str
        Each kept question's finest target: ``"passages"`` (quotes),
        ``"sections"`` (section ids only) or ``"documents"`` (a document id).
    heading_styles : tuple of str
        The union of the styles of the document kinds present (see the
        module docstring), in :data:`~hierret.structure.hierarchy.HEADING_STYLES` order.
    content_fingerprint : str
        16 hex digits of SHA-256 over the relative path and bytes of every
        file read (documents and ``questions.jsonl``), sorted by path.
    problems : dict of str to int
        Counts of what was dropped or skipped (``dropped_questions``,
        ``dropped_items``, ``skipped_files``).
    path : Path
        The folder read.
    """

    name: str
    corpus: Corpus
    queries: list[Query]
    judged_at: dict[str, Level]
    heading_styles: tuple[str, ...]
    content_fingerprint: str
    problems: dict[str, int] = field(default_factory=dict)
    path: Path = Path()

    def identity(self) -> dict[str, str | int]:
        """What a result records about the data it ran on (no local paths).

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> root = Path(tmp.name, "notes")
        >>> root.mkdir()
        >>> _ = (root / "a.md").write_text("# A\\n\\nThe answer to everything is forty-two.\\n")
        >>> _ = (root / "questions.jsonl").write_text(
        ...     '{"question": "What is the answer?", "relevant": ["a"]}\\n')
        >>> ident = load_folder(root).identity()
        >>> ident["dataset"], ident["documents"], ident["queries"]
        ('folder/notes', 1, 1)
        >>> len(ident["content_fingerprint"])
        16
        >>> tmp.cleanup()
        """
        return {
            **self.corpus.identity(),
            "dataset": f"folder/{self.name}",
            "queries": len(self.queries),
            "content_fingerprint": self.content_fingerprint,
            **self.problems,
        }


def load_folder(path: str | os.PathLike[str], *, questions: bool = True) -> FolderDataset:
    r"""Read a folder of documents and locate the evidence of its ``questions.jsonl``.

    Parameters
    ----------
    path : path-like
        The folder, or its ``questions.jsonl``.
    questions : bool, default True
        Whether ``questions.jsonl`` must be there (to evaluate). ``False`` (to
        search) loads a folder without it with no questions; one that is
        there is read and checked all the same.

    Returns
    -------
    FolderDataset
        The documents, the questions kept and what each is judged at.

    Raises
    ------
    FolderFormatError
        No such folder, no documents, no questions file, a file that is not
        UTF-8, two files with one id, or a question refused (see the module
        docstring: the message names the file, line, id and fix).

    Warns
    -----
    FolderDataWarning
        One warning per load, counting and listing every item not used
        (quotes found nowhere, unknown ids), every question dropped for
        having nothing left, every file skipped, every quote or section path
        found in several places (all kept) and every document read
        differently by the folder's heading styles.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name, "notes")
    >>> (root / "guide").mkdir(parents=True)
    >>> _ = (root / "guide" / "setup.md").write_text(
    ...     "# Setup\n\nRun the installer first.\n\n## Logging\n\n"
    ...     "Logs are written to the var/log folder of the install.\n")
    >>> _ = (root / "faq.txt").write_text("Nothing to see here.\n")
    >>> _ = (root / "questions.jsonl").write_text(
    ...     '{"question": "Where are the logs?", '
    ...     '"evidence": ["Logs are written to the var/log folder of the install."]}\n'
    ...     '{"id": "sec", "question": "How is logging set up?", '
    ...     '"relevant": ["guide/setup > Logging"]}\n')
    >>> data = load_folder(root)
    >>> [d.id for d in data.corpus], data.heading_styles
    (['faq', 'guide/setup'], ('rst', 'markdown', 'numbered'))
    >>> [(q.id, q.evidence, data.judged_at[q.id]) for q in data.queries]
    [('q1', (('guide/setup', 47, 101),), 'passages'), ('sec', (('guide/setup', 35, 102),), 'sections')]
    >>> data.corpus["guide/setup"].text[47:101]
    'Logs are written to the var/log folder of the install.'
    >>> tmp.cleanup()
    """  # noqa: E501
    given = Path(path).expanduser()
    root = given.parent if given.name == QUESTIONS_FILE and given.is_file() else given
    if not root.is_dir():
        raise FolderFormatError(
            f"{given} is not a folder: give a folder of documents (*.md, *.markdown, *.rst, "
            f"*.txt) with a {QUESTIONS_FILE}, or the path of that {QUESTIONS_FILE}"
        )
    root = root.resolve()
    report = _Report(root.name)
    files = _document_files(root, report)
    questions_file = root / QUESTIONS_FILE
    if not questions_file.is_file() and questions:
        found = f"it holds {len(files)} document(s)" if files else "it holds no documents either"
        raise FolderFormatError(
            f"{root} has no {QUESTIONS_FILE} ({found}): a folder of documents needs its "
            f"questions beside them in {QUESTIONS_FILE}, one JSON object a line, e.g.\n"
            f"  {EXAMPLE_LINES[0]}\n  {EXAMPLE_LINES[1]}\n"
            "(see hierret.datasets.folder for the format)"
        )
    docs, kinds, contents = _read_documents(root, files, report)
    if not docs:
        raise FolderFormatError(
            f"{root} holds no documents with text: put the documents (*.md, *.markdown, *.rst, "
            f"*.txt, any depth; names starting with '.' and a top-level README are left out) "
            f"in the folder beside {QUESTIONS_FILE}"
            + (f"; of the files found:\n{report.text()}" if report.lists["skipped"] else "")
        )
    styles = tuple(s for s in HEADING_STYLES if any(s in SUFFIXES[k] for k in kinds.values()))
    _check_headings(docs, kinds, styles, report)
    corpus = Corpus(f"folder-{root.name}", docs)
    queries: list[Query] = []
    judged_at: dict[str, Level] = {}
    if questions_file.is_file():
        raw = questions_file.read_bytes()
        contents.append((QUESTIONS_FILE, raw))
        queries, judged_at = _Questions(questions_file, raw, corpus, styles, report).read()
    report.warn()
    problems = {
        "dropped_questions": len(report.lists["dropped"]),
        "dropped_items": len(report.lists["quote_unfound"]) + len(report.lists["id_unknown"]),
        "skipped_files": len(report.lists["skipped"]),
    }
    return FolderDataset(
        root.name, corpus, queries, judged_at, styles, _fingerprint(contents), problems, root
    )


def _fingerprint(contents: Sequence[tuple[str, bytes]]) -> str:
    """16 hex digits of SHA-256 over each file's relative path and bytes, sorted by path."""
    digest = hashlib.sha256()
    for rel, raw in sorted(contents):
        digest.update(f"{rel}\0{len(raw)}\0".encode())
        digest.update(raw)
    return digest.hexdigest()[:16]


class _Report:
    """What the one warning of a load says, by class."""

    _HEADS: ClassVar[dict[str, str]] = {
        "quote_unfound": "quote(s) found in no document, left out",
        "id_unknown": "document or section id(s) not in the folder, left out",
        "dropped": "question(s) dropped: nothing left to judge them by",
        "quote_many": "quote(s) found in several places: each place is evidence "
        "(the gold set's rule)",
        "section_many": "section path(s) naming several sections: each is evidence",
        "skipped": "file(s) or folder(s) skipped",
        "converted": "HTML page(s) saved under a text name, read as the text a browser shows "
        "(save them as Markdown to keep more of their layout)",
        "headings": "document(s) whose headings the folder's heading styles read "
        "differently from their own kind's",
    }

    def __init__(self, name: str) -> None:
        self.name = name
        self.lists: dict[str, list[str]] = {key: [] for key in self._HEADS}

    def add(self, key: str, item: str) -> None:
        self.lists[key].append(item)

    def text(self) -> str:
        """One line per class with items: how many, what, the fix, the items."""
        parts = []
        for key, head in self._HEADS.items():
            items = self.lists[key]
            if not items:
                continue
            shown = "; ".join(items[:_SHOWN])
            more = f"; and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
            fix = f" (fix: {_FIX[key]})" if key in _FIX else ""
            parts.append(f"- {len(items)} {head}{fix}: {shown}{more}")
        return "\n".join(parts)

    def warn(self) -> None:
        """The one warning of a load, if there is anything to say."""
        if any(self.lists.values()):
            total = sum(len(v) for v in self.lists.values())
            level, frame = 1, inspect.currentframe()
            while frame is not None and frame.f_globals.get("__name__", "").startswith(__package__):
                frame, level = frame.f_back, level + 1  # shown at the caller's line, not ours
            warnings.warn(
                f"folder {self.name!r}: {total} item(s) to know about; what was found is "
                f"kept:\n{self.text()}",
                FolderDataWarning,
                stacklevel=level,
            )


def _document_files(root: Path, report: _Report) -> list[tuple[str, Path]]:
    """``(relative path, path)`` of every document file, sorted by relative path."""
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):  # symlinked folders are not entered
        here = Path(dirpath)
        for name in sorted(dirnames):
            if name.startswith(".") or not (here / name).is_symlink():
                continue
            rel = (here / name).relative_to(root).as_posix()
            report.add("skipped", f"{rel}/ (a symlinked folder: not followed)")
        dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
        for name in sorted(filenames):
            file = here / name
            if name.startswith(".") or file.suffix.lower() not in SUFFIXES:
                continue
            rel = file.relative_to(root).as_posix()
            if here == root and file.stem.lower() == "readme":
                continue  # the folder's description
            if file.is_symlink():
                problem = broken_link(file)
                if problem:
                    report.add("skipped", f"{rel} ({problem})")
                    continue
                target = file.resolve()
                if not target.is_relative_to(root) or not target.is_file():
                    report.add("skipped", f"{rel} (a symlink to a file outside the folder)")
                    continue
            files.append((rel, file))
    files.sort()
    return files


def _read_documents(
    root: Path, files: Sequence[tuple[str, Path]], report: _Report
) -> tuple[list[Document], dict[str, str], list[tuple[str, bytes]]]:
    """The documents with text, each one's suffix, and every file's path and bytes."""
    contents: list[tuple[str, bytes]] = []
    docs: list[Document] = []
    kinds: dict[str, str] = {}
    first: dict[str, str] = {}
    for rel, file in files:
        suffix = file.suffix.lower()
        if (at := lone_surrogate(rel)) is not None:
            raise FolderFormatError(
                f"{root}: the file name {rel!r} is not UTF-8 (character {at}, shown as "
                f"{rel[at]!r}, stands for the byte 0x{ord(rel[at]) & 0xFF:02x}): a document's id "
                "is its path, and an id must be text: rename the file with a UTF-8 name "
                "(e.g. convmv -f latin1 -t utf-8 --notest, or mv), or move it out of the folder"
            )
        doc_id = clean_id(rel[: -len(file.suffix)])  # NFC: a macOS name is NFD
        if doc_id in first:
            raise FolderFormatError(
                f"{root}: {first[doc_id]} and {rel} have the same document id "
                f"{shown_id(doc_id)} (the relative path without suffix, in Unicode NFC): "
                "rename one of them"
            )
        first[doc_id] = rel
        raw = file.read_bytes()
        contents.append((rel, raw))
        text = _decode(raw, file).removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        text = unicodedata.normalize("NFC", text)  # as ids are: a file saved on macOS is NFD
        title = None
        if looks_like_html(text):  # a web page saved as .md or .txt: what a browser shows
            title, text = html_to_text(text)
            title = title or None
            report.add("converted", f"{rel} (an HTML page: its text and headings kept)")
            suffix = ".md"  # its headings are now Markdown's
        elif suffix in (".md", ".markdown"):
            meta, text, _ = split_front_matter(text)
            title = front_matter_title(meta)
        if not has_text(text):
            report.add("skipped", f"{rel} (empty: nothing to retrieve)")
            continue
        heads = detect_headings(text, SUFFIXES[suffix])
        title = title or (heads[0].title if heads else file.stem)
        docs.append(Document(doc_id, title, text))
        kinds[doc_id] = suffix
    return docs, kinds, contents


def _decode(raw: bytes, file: Path) -> str:
    """The file's text; a file that is not UTF-8 text (NUL bytes too: UTF-16 of
    ASCII is valid UTF-8, NUL-separated) is refused naming what it most likely is."""
    try:
        text = raw.decode("utf-8")
        if "\x00" in text:
            at = raw.index(0)
            line = raw[:at].count(b"\n") + 1
            raise FolderFormatError(
                f"{file}: not UTF-8 text: byte {at} (line {line}) is a NUL byte, which text "
                "never holds; " + not_utf8(raw, file, f"documents and {QUESTIONS_FILE}")
            )
        return text
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise FolderFormatError(
            f"{file}: not UTF-8 text: byte {err.start} (line {line}) is "
            f"{raw[err.start : err.end]!r} ({err.reason}); "
            + not_utf8(raw, file, f"documents and {QUESTIONS_FILE}")
        ) from None


def _check_headings(
    docs: Sequence[Document], kinds: Mapping[str, str], styles: Sequence[str], report: _Report
) -> None:
    """Name the documents the folder's styles read differently from their own kind's."""
    for doc in docs:
        own = SUFFIXES[kinds[doc.id]]
        if tuple(styles) == own:
            continue
        mine = {(h.start, h.title) for h in detect_headings(doc.text, own)}
        read = {(h.start, h.title) for h in detect_headings(doc.text, styles)}
        if mine != read:
            extra = [t for _, t in sorted(read - mine)][:3]
            lost = [t for _, t in sorted(mine - read)][:3]
            what = ", ".join([*(f"+{t!r}" for t in extra), *(f"-{t!r}" for t in lost)])
            report.add("headings", f"{doc.id} ({what})")


class _Questions:
    """Parse ``questions.jsonl`` and locate every item in the corpus."""

    def __init__(
        self, file: Path, raw: bytes, corpus: Corpus, styles: Sequence[str], report: _Report
    ) -> None:
        self.file = file
        # JSON strings may hold U+2028 and other characters str.splitlines() breaks at
        text = _decode(raw, file).removeprefix("\ufeff").replace("\r\n", "\n")
        self.lines = text.split("\n")
        self.corpus = corpus
        self.ids = {d.id for d in corpus}
        self.styles = tuple(styles)
        self.report = report
        self._sections: dict[str, list[Section]] = {}

    def _refuse(self, n: int, qid: str | None, problem: str) -> FolderFormatError:
        where = f"{self.file}:{n}" + (f" ({qid})" if qid else "")
        return FolderFormatError(f"{where}: {problem}")

    def read(self) -> tuple[list[Query], dict[str, Level]]:
        queries: list[Query] = []
        judged_at: dict[str, Level] = {}
        lines: dict[str, int] = {}
        ordinal = 0
        for n, line in enumerate(self.lines, 1):
            if not line.strip():
                continue
            ordinal += 1
            row = self._row(n, line)
            qid = self._id(n, row, ordinal)
            if qid in lines:
                raise self._refuse(
                    n,
                    qid,
                    f"duplicate question id {qid!r} (first at line {lines[qid]}): give each "
                    "question its own id, or leave 'id' out for q1, q2, ... by position",
                )
            lines[qid] = n
            question = row.get("question")
            if not isinstance(question, str) or not has_text(question):
                raise self._refuse(
                    n, qid, f"'question' must be a non-empty string, got {question!r:.60}"
                )
            spans, level = self._evidence(n, qid, row)
            if not spans:
                self.report.add("dropped", f"{qid} (line {n})")
                continue
            queries.append(Query(qid, question, tuple(dict.fromkeys(spans)), level))
            judged_at[qid] = level
        if not lines:
            raise FolderFormatError(
                f"{self.file} holds no questions: write one JSON object a line, e.g.\n"
                f"  {EXAMPLE_LINES[0]}\n  {EXAMPLE_LINES[1]}"
            )
        if not queries:
            raise FolderFormatError(
                f"{self.file}: none of its {len(lines)} question(s) has evidence found in the "
                f"documents of {self.file.parent}:\n{self.report.text()}"
            )
        return queries, judged_at

    def _row(self, n: int, line: str) -> dict[str, Any]:
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise self._refuse(
                n,
                None,
                f"malformed JSON ({err.msg}, column {err.colno}): each line is one JSON "
                f"object, e.g. {EXAMPLE_LINES[0]}",
            ) from None
        if not isinstance(row, dict):
            raise self._refuse(
                n,
                None,
                f"expected a JSON object, got {type(row).__name__}: each line is one "
                f"object, e.g. {EXAMPLE_LINES[0]}",
            )
        unknown = sorted(set(row) - set(_KEYS))
        if unknown:
            close = {k: difflib.get_close_matches(k, _KEYS, n=1) for k in unknown}
            hints = ", ".join(
                f"{k!r}" + (f" (did you mean {c[0]!r}?)" if c else "") for k, c in close.items()
            )
            raise self._refuse(
                n,
                None,
                f"unknown key(s) {hints}: the keys are {', '.join(_KEYS)} (free text such "
                "as a topic goes in 'kind' or 'note', read and ignored)",
            )
        if surrogate_escape.search(line) and (bad := find_lone_surrogate(row)):
            where, text, at = bad
            raise self._refuse(n, None, surrogate_message(f"{where!r}", text, at))
        return row

    def _id(self, n: int, row: Mapping[str, Any], ordinal: int) -> str:
        qid = row.get("id")
        if qid is None:
            return f"q{ordinal}"
        if isinstance(qid, bool) or not isinstance(qid, str | int) or not str(qid).strip():
            raise self._refuse(
                n,
                None,
                f"'id' must be a non-empty string, got {qid!r:.40}: write it as a JSON string, "
                "or leave it out for q1, q2, ... by position",
            )
        return str(qid)

    def _items(self, n: int, qid: str, row: Mapping[str, Any], key: str) -> list[str]:
        value = row.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._refuse(
                n,
                qid,
                f"{key!r} must be a list of strings, got {value!r:.60}: e.g. "
                + ('"evidence": ["a quote"]' if key == "evidence" else '"relevant": ["doc-id"]'),
            )
        return value

    def _evidence(self, n: int, qid: str, row: Mapping[str, Any]) -> tuple[list[Span], Level]:
        quotes = self._items(n, qid, row, "evidence")
        ids = self._items(n, qid, row, "relevant")
        if not quotes and not ids:
            raise self._refuse(
                n,
                qid,
                "the question has neither 'evidence' quotes nor 'relevant' ids: give one of "
                f"them, e.g. {EXAMPLE_LINES[0]} or {EXAMPLE_LINES[1]}",
            )
        if quotes and ids:
            raise self._refuse(
                n,
                qid,
                "the question has both 'evidence' and 'relevant': a question is judged by one "
                "kind (quotes: at passages, sections and documents; ids: at sections or "
                "documents); keep one, or split it into two questions",
            )
        if quotes:
            return self._quotes(n, qid, quotes), "passages"
        spans: list[Span] = []
        level: Level = "sections"
        for ref in ids:
            found, whole = self._resolve(n, qid, ref)
            if found and whole:
                level = "documents"
            spans.extend(found)
        return spans, level

    def _quotes(self, n: int, qid: str, quotes: Sequence[str]) -> list[Span]:
        spans: list[Span] = []
        for quote in quotes:
            if len(" ".join(quote.split())) < MIN_QUOTE_CHARS:
                raise self._refuse(
                    n,
                    qid,
                    f"the quote {quote!r} is shorter than {MIN_QUOTE_CHARS} characters (the "
                    "gold set's rule: short quotes match too much): quote a whole sentence, "
                    "or name the document or section in 'relevant'",
                )
            found = locate(quote, self.corpus)
            if not found:
                self.report.add("quote_unfound", f"{qid} (line {n}) {quote[:60]!r}")
            elif len(found) > 1:
                where = ", ".join(dict.fromkeys(d for d, _, _ in found))
                self.report.add("quote_many", f"{qid} (line {n}) {len(found)} places in {where}")
            spans.extend(found)
        return spans

    def _resolve(self, n: int, qid: str, ref: str) -> tuple[list[Span], bool]:
        """The spans ``ref`` names, and whether it named a whole document."""
        doc_id, sep, rest = ref.partition(">")
        doc_id = clean_id(doc_id)
        if doc_id not in self.ids:
            self.report.add("id_unknown", f"{qid} (line {n}) {ref!r}{self._suggest(doc_id)}")
            return [], False
        doc = self.corpus[doc_id]
        if not sep:
            return [(doc_id, 0, len(doc.text))], True
        wanted = tuple(" ".join(t.split()) for t in rest.split(">"))
        sections = self._sections_of(doc)
        matched = [
            s
            for s in sections
            if tuple(" ".join(t.split()) for t in s.path[-len(wanted) :]) == wanted
        ]
        if not matched:
            paths = "; ".join(" > ".join(s.path) for s in sections[:8])
            more = f"; ... ({len(sections)} in all)" if len(sections) > 8 else ""
            self.report.add(
                "id_unknown",
                f"{qid} (line {n}) {ref!r} (no such heading path; {doc_id} has: {paths}{more})",
            )
            return [], False
        if len(matched) > 1:
            self.report.add(
                "section_many", f"{qid} (line {n}) {ref!r} names {len(matched)} sections"
            )
        return [(doc_id, s.start, s.end) for s in matched], False

    def _sections_of(self, doc: Document) -> list[Section]:
        if doc.id not in self._sections:
            h = build_hierarchy(Corpus("one", [doc]), heading_styles=self.styles)
            self._sections[doc.id] = h.sections[doc.id]
        return self._sections[doc.id]

    def _suggest(self, doc_id: str) -> str:
        ids = [d.id for d in self.corpus]
        stem = doc_id
        for suffix in SUFFIXES:
            stem = stem.removesuffix(suffix)
        if stem != doc_id and stem in ids:
            return f" (ids have no suffix: {stem!r})"
        close = difflib.get_close_matches(doc_id, ids, n=1, cutoff=0.6)
        return f" (did you mean {close[0]!r}?)" if close else ""
