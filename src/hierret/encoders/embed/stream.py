"""Streamed corpus input: ``hierret embed --engine ray`` without the corpus in the driver.

A BEIR corpus (``corpus.jsonl``) is embedded without the driver ever holding
its texts. The driver (:func:`embed_corpus`) reads the file once, one line at
a time (:func:`~hierret.datasets.beir.corpus_documents`), chunks each document
with the chunker and parameters ``hierret search`` uses
(:meth:`CorpusSource.passages`) and keeps, per passage, only its cache key and
where to find it again: the document's byte offset and line number in the file
(per document), the passage's index in its document and its length in
characters (:class:`Locators`, about 50 bytes a passage; measured by
``tests/benchmarks/driver_memory.py``). It must read the texts once to know
which the cache lacks (a key is a hash of the text); it keeps none.

The passages the cache lacks are cut into partitions as
:func:`~hierret.encoders.embed.ray.partitions` cuts texts (longest first, a stable
sort, :data:`~hierret.encoders.embed.ray.PARTITION_TEXTS` a partition), so each
partition holds the texts the in-driver engine would give it and the vectors
are the same bit for bit; a partition travels to the workers as locators
(integers, no text). Each Ray actor reads the documents its partition names
from the file (a seek to each line), chunks them the same way, checks each
text's key against the driver's (a corpus changed since the driver read it
is refused: nothing is stored under a wrong key) and returns ``(row,
vector)``; the driver, the cache's only writer, stores each partition as it
comes.

Every node reads the corpus: it must be at the same path on each (a shared
file system, or the same ``$HIERRET_DATA`` copied to every node). Corpora that
are not a BEIR ``corpus.jsonl`` (python-reference, Qasper, a folder of
documents: small by construction) and texts given directly (``embed_texts``,
``--plan``) keep the in-driver path, which needs no file on the nodes.

**Shards** are by cache key, as for :func:`~hierret.encoders.embed.local.embed_texts`
(:func:`~hierret.encoders.embed.local.shard_of`): a text that several documents hold
has one key, so exactly one of ``n`` jobs embeds it, and the shards' caches
merge into the one a single run makes (by document range, such a text would
be embedded by every job holding one of its documents, and a job's share
would depend on document lengths). Each job's driver reads the whole file to
make keys (cheap beside embedding) and keeps only its shard's.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from hierret.encoders.cache import CachedEncoder, VectorCache
>>> from hierret.encoders import HashEncoder
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = (Path(tmp.name) / "corpus.jsonl").write_text(
...     '{"_id": "d1", "title": "Cats", "text": "Cats purr."}\\n'
...     '{"_id": "d2", "text": "' + "Dogs bark. " * 40 + '"}\\n')
>>> source = CorpusSource.of(tmp.name, max_chars=200, overlap_chars=0)
>>> loc = source.locate(HashEncoder(dimension=8).identity)
>>> len(loc), loc.documents, [source.text(loc, i) for i in range(2)]
(4, 2, ['Cats\\n\\nCats purr.', 'Dogs bark. Dogs bark. Dogs bark. Dogs bark. Dogs bark. ...'])
>>> enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(Path(tmp.name) / "cache"))
>>> print(embed_corpus(source, enc, engine="local", show_progress=False))
4 texts (3 distinct): 0 in the cache, 3 embedded
>>> tmp.cleanup()
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret.encoders.base import Encoder, Role
from hierret.encoders.cache import CachedEncoder, text_keys
from hierret.encoders.cache._keys import Identity
from hierret.encoders.embed.local import (
    EmbedReport,
    check_engine,
    corpus_passages,
    parse_shard,
    progress_bar,
)
from hierret.encoders.embed.ray import PARTITION_TEXTS, RayOptions
from hierret.structure.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS
from hierret.structure.hierarchy import HEADING_STYLES, build_hierarchy
from hierret.structure.units import Corpus, Document

__all__ = [
    "CorpusSource",
    "Locators",
    "embed_corpus",
    "missing_rows",
    "stream_partitions",
    "stream_rows",
    "streamable",
]

#: Keys asked of the cache at a time (bounded memory: a list of bytes per key).
_ASK = 65_536
#: Documents chunked and hashed at a time by the driver's pass.
_DOCUMENTS_AT_ONCE = 1024


def streamable(corpus: str) -> Path | None:
    """The ``corpus.jsonl`` of ``corpus`` (a named BEIR dataset or a BEIR folder) when its
    passages can be streamed, else ``None`` (the in-driver path).

    A named BEIR dataset is looked for (and downloaded if absent) as
    :func:`~hierret.datasets.load` does.

    Examples
    --------
    >>> streamable("python-reference") is None, streamable("scifact-sections") is None
    (True, True)
    """
    from hierret.datasets.beir import BEIR_DOWNLOADS, locate_beir

    path = Path(corpus).expanduser()
    if path.is_dir():
        file = path / "corpus.jsonl"
        return file.resolve() if file.is_file() else None
    if corpus in BEIR_DOWNLOADS:
        return (locate_beir(corpus) / "corpus.jsonl").resolve()
    return None


@dataclass(frozen=True)
class Locators:
    """Where each passage of a corpus is, and its cache key: what the driver holds.

    Attributes
    ----------
    keys : ndarray of uint8, shape (n, 32)
        Each passage's cache key, in corpus order.
    document : ndarray of int32, shape (n,)
        Each passage's document: an index into ``offsets`` and ``lines``.
    passage : ndarray of int32, shape (n,)
        Each passage's index among its document's passages.
    length : ndarray of int64, shape (n,)
        Each passage's length in characters (partitions order by it).
    offsets, lines : ndarray of int64, shape (documents,)
        Each document's byte offset and line number in ``corpus.jsonl``.
    """

    keys: NDArray[np.uint8]
    document: NDArray[np.int32]
    passage: NDArray[np.int32]
    length: NDArray[np.int64]
    offsets: NDArray[np.int64]
    lines: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.passage)

    @property
    def documents(self) -> int:
        """Documents with text."""
        return len(self.offsets)

    def key(self, row: int) -> bytes:
        """The cache key of passage ``row``."""
        return bytes(self.keys[row].tobytes())

    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return sum(
            a.nbytes
            for a in (
                self.keys,
                self.document,
                self.passage,
                self.length,
                self.offsets,
                self.lines,
            )
        )


@dataclass(frozen=True)
class CorpusSource:
    """A BEIR ``corpus.jsonl`` and the chunking of its passages: what a worker needs
    to make a passage's text from its locator.

    Build it with :meth:`of`. Pickled to every Ray actor (a path and three
    numbers): the file must be at ``path`` on every node.

    Parameters
    ----------
    path : str
        The ``corpus.jsonl`` file (absolute).
    name : str
        The corpus's name, as :func:`~hierret.datasets.load` names it
        (``beir-scifact``); its documents' passages do not depend on it.
    max_chars, overlap_chars : int
        Passage size and overlap, as for ``hierret search``.
    """

    path: str
    name: str
    max_chars: int = DEFAULT_MAX_CHARS
    overlap_chars: int = DEFAULT_OVERLAP_CHARS

    @classmethod
    def of(
        cls,
        corpus: str,
        max_chars: int = DEFAULT_MAX_CHARS,
        overlap_chars: int = DEFAULT_OVERLAP_CHARS,
    ) -> CorpusSource:
        """The source of ``corpus`` (a named BEIR dataset or a BEIR folder), or
        :class:`ValueError` naming what can be streamed."""
        file = streamable(corpus)
        if file is None:
            raise ValueError(
                f"{corpus!r} is not a BEIR corpus (a folder with corpus.jsonl, or a BEIR name "
                "such as scifact): only those are streamed; embed its passages with "
                "embed_texts(corpus_passages(...)) instead"
            )
        if overlap_chars >= max_chars:
            raise ValueError(
                f"overlap_chars ({overlap_chars}) must be smaller than max_chars ({max_chars})"
            )
        from hierret.datasets.beir import BEIR_DOWNLOADS

        name = corpus if corpus in BEIR_DOWNLOADS else file.parent.name
        return cls(str(file), f"beir-{name}", max_chars, overlap_chars)

    def passages(self, document: Document) -> list[str]:
        """``document``'s passage texts, as ``hierret search`` makes them (units with text).

        Examples
        --------
        >>> CorpusSource("corpus.jsonl", "t", 40, 0).passages(Document("d", "", "One. " * 12))
        ['One. One. One. One. One. One. One. One.', 'One. One. One. One.']
        """
        one = Corpus(self.name, [document])
        return corpus_passages(
            build_hierarchy(one, self.max_chars, self.overlap_chars, heading_styles=HEADING_STYLES)
        )

    def documents(
        self, start: int = 0, stop: int | None = None, first: int = 1
    ) -> Iterator[tuple[int, int, Document]]:
        """``(line number, byte offset, document)`` of each document with text whose
        line starts in ``[start, stop)`` (ids are not checked: see
        :func:`~hierret.datasets.beir.corpus_documents`)."""
        from hierret.datasets.beir import corpus_documents

        for lineno, offset, doc in corpus_documents(
            self.path, start, stop, first=first, check_ids=False
        ):
            if isinstance(doc, Document):
                yield lineno, offset, doc

    def locate(self, identity: Identity, role: Role = "passage") -> Locators:
        """Every passage's key and locator, the file read once and no text kept."""
        keys, document, passage, length = bytearray(), array("i"), array("i"), array("q")
        offsets, lines = array("q"), array("q")
        texts: list[str] = []

        def flush() -> None:
            keys.extend(b"".join(text_keys(identity, role, texts)))
            texts.clear()

        for lineno, offset, doc in self.documents():
            d = len(offsets)
            offsets.append(offset)
            lines.append(lineno)
            for i, text in enumerate(self.passages(doc)):
                texts.append(text)
                document.append(d)
                passage.append(i)
                length.append(len(text))
            if len(offsets) % _DOCUMENTS_AT_ONCE == 0:
                flush()
        flush()
        return Locators(
            np.frombuffer(keys, dtype=np.uint8).reshape(-1, 32),
            np.frombuffer(document, dtype=np.int32),
            np.frombuffer(passage, dtype=np.int32),
            np.frombuffer(length, dtype=np.int64),
            np.frombuffer(offsets, dtype=np.int64),
            np.frombuffer(lines, dtype=np.int64),
        )

    def text(self, loc: Locators, row: int) -> str:
        """The text of passage ``row`` (read from the file: for checks, not for speed)."""
        return self.read(
            loc.offsets[loc.document[[row]]], loc.lines[loc.document[[row]]], loc.passage[[row]]
        )[0]

    def read(
        self,
        offsets: Sequence[int] | NDArray[np.int64],
        lines: Sequence[int] | NDArray[np.int64],
        passages: Sequence[int] | NDArray[np.int32],
    ) -> list[str]:
        """The texts of passages given by their document's byte offset and line
        number and their index in it, in the order given (each document read and
        chunked once)."""
        made: dict[int, list[str]] = {}
        out = []
        for offset, line, p in zip(offsets, lines, passages, strict=True):
            at = int(offset)
            if at not in made:
                found = next(self.documents(at, at + 1, int(line)), None)
                if found is None:
                    raise ValueError(
                        f"{self.path}: no document with text at byte {at} (line {int(line)}): "
                        "the file changed since its keys were made; run again"
                    )
                made[at] = self.passages(found[2])
            texts = made[at]
            if not 0 <= int(p) < len(texts):
                raise ValueError(
                    f"{self.path}: the document at line {int(line)} has {len(texts)} passages, "
                    f"not passage {int(p)}: the file changed since its keys were made; run again"
                )
            out.append(texts[int(p)])
        return out


def missing_rows(
    loc: Locators, encoder: CachedEncoder, shard: tuple[int, int] | None
) -> tuple[NDArray[np.intp], int, int]:
    """Rows of the distinct passages (of the shard) the cache lacks, in corpus order;
    with how many distinct passages there are (in the shard) and how many are cached."""
    if not len(loc):
        return np.empty(0, dtype=np.intp), 0, 0
    _, first = np.unique(np.ascontiguousarray(loc.keys).view("V32").ravel(), return_index=True)
    rows = np.sort(first)
    if shard is not None:
        head = np.ascontiguousarray(loc.keys[rows, :8]).view(">u8").ravel()
        rows = rows[head % np.uint64(shard[1]) == np.uint64(shard[0])]
    found = np.zeros(len(rows), dtype=bool)
    for s in range(0, len(rows), _ASK):
        part = rows[s : s + _ASK]
        found[s : s + _ASK] = encoder.cache.contains(encoder.identity, [loc.key(r) for r in part])
    return rows[~found], len(rows), int(found.sum())


def stream_partitions(
    loc: Locators, rows: NDArray[np.intp], size: int = PARTITION_TEXTS
) -> list[NDArray[np.intp]]:
    """``rows`` cut into partitions of ``size``, longest passage first (a stable sort):
    :func:`~hierret.encoders.embed.ray.partitions`' cut, on the lengths the driver kept.

    Examples
    --------
    >>> loc = Locators(np.zeros((4, 32), np.uint8), *(np.zeros(4, np.int32),) * 2,
    ...                np.array([1, 3, 2, 2]), np.zeros(1, np.int64), np.zeros(1, np.int64))
    >>> [p.tolist() for p in stream_partitions(loc, np.arange(4), size=2)]
    [[1, 2], [3, 0]]
    """
    order = rows[np.argsort(-loc.length[rows], kind="stable")]
    return [order[s : s + size] for s in range(0, len(order), size)]


def stream_rows(loc: Locators, parts: list[NDArray[np.intp]]) -> list[dict[str, NDArray[Any]]]:
    """What Ray receives for each partition (:func:`~hierret.encoders.embed.ray.ray_stream`):
    its rows, and their documents' byte offsets and line numbers and passage
    indices; integers only, no text.

    Examples
    --------
    >>> loc = Locators(np.zeros((2, 32), np.uint8), np.array([0, 0], np.int32),
    ...                np.array([0, 1], np.int32), np.array([5, 9]), np.array([0]), np.array([1]))
    >>> sorted(stream_rows(loc, [np.array([1, 0])])[0])
    ['line', 'offset', 'passage', 'pos']
    """
    rows: list[dict[str, NDArray[Any]]] = []
    for p in parts:
        doc = loc.document[p]
        rows.append(
            {
                "pos": p.astype(np.int64),
                "offset": loc.offsets[doc],
                "line": loc.lines[doc],
                "passage": loc.passage[p],
            }
        )
    return rows


def _local_batches(
    encoder: Encoder, source: CorpusSource, loc: Locators, parts: list[NDArray[np.intp]], role: Role
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.float32]]]:
    """The local engine on streamed input: each partition read and embedded here."""
    for part in parts:
        doc = loc.document[part]
        texts = source.read(loc.offsets[doc], loc.lines[doc], loc.passage[part])
        for idx, vecs in encoder.encode_batches(texts, role):
            yield part[np.asarray(idx, dtype=np.intp)], vecs


def embed_corpus(
    source: CorpusSource,
    encoder: CachedEncoder,
    *,
    role: Role = "passage",
    engine: str = "ray",
    show_progress: bool | None = None,
    model: str | Callable[..., Encoder] | None = None,
    model_kw: dict[str, Any] | None = None,
    ray: RayOptions | None = None,
    shard: tuple[int, int] | None = None,
) -> EmbedReport:
    """Embed the passages of ``source`` that ``encoder``'s cache lacks, streamed:
    the driver holds keys and locators, the workers read and chunk the texts.

    Parameters
    ----------
    source : CorpusSource
        The corpus file and its chunking.
    encoder : CachedEncoder
        The encoder and the cache to fill (this process is its only writer).
    role : {"passage", "query"}
    engine : {"ray", "local"}, default "ray"
        ``"ray"``: Ray actors read, chunk and embed their partitions
        (:func:`~hierret.encoders.embed.ray.ray_stream`); ``"local"``: the same partitions
        read and embedded in this process.
    show_progress, model, model_kw, ray, shard
        As for :func:`~hierret.encoders.embed.local.embed_texts` (``shard`` by cache key).

    Returns
    -------
    EmbedReport
        ``texts`` counts the corpus's passages.

    Raises
    ------
    ValueError
        ``engine="ray"`` without ``model``; a bad shard; the file changed
        between the driver's pass and a worker's read.
    CacheNotWritableError, CacheWriteError
        As for :func:`~hierret.encoders.embed.local.embed_texts`.
    """
    check_engine(engine)
    if shard is not None:
        parse_shard(f"{shard[0]}/{shard[1]}")
    if engine == "ray" and model is None:
        raise ValueError("engine='ray' needs model=, the encoder name each actor loads")
    start = time.perf_counter()
    options = ray or RayOptions()
    loc = source.locate(encoder.identity, role)
    todo, distinct, cached = missing_rows(loc, encoder, shard)
    if len(todo):
        encoder.cache.check_writable(encoder.identity)  # before any model is loaded
    parts = stream_partitions(loc, todo, options.batch_size)
    bar = progress_bar(distinct, cached, show_progress)
    embedded, stored_before = 0, encoder.stats.stored
    try:
        if parts:
            if engine == "ray":
                from hierret.encoders.embed.ray import ray_stream

                assert model is not None
                run = ray_stream(model, model_kw or {}, encoder.identity, options, source)
                batches = run(stream_rows(loc, parts), loc.keys, role)
            else:
                batches = _local_batches(encoder.encoder, source, loc, parts, role)
            for rows, vecs in batches:
                encoder._store_or_raise([loc.key(r) for r in rows], vecs, stored_before)
                embedded += len(rows)
                bar.update(len(rows))
    finally:
        bar.close()
    return EmbedReport(len(loc), distinct, cached, embedded, time.perf_counter() - start)
