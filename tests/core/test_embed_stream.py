"""Streamed corpus input (``hierret.encoders.embed.stream``): the driver holds keys, not texts.

Without Ray: the driver's pass makes the in-driver path's keys, partitions and
vectors; shards by key merge into one run's cache; the driver's memory per
passage is tens of bytes, not the text. The Ray engine on streamed input is
tested in ``tests/core/test_embed_ray.py`` (its cluster).
"""

from __future__ import annotations

import gc
import json
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from hierret.cli import main
from hierret.datasets import load
from hierret.datasets.beir import BeirFormatError, corpus_documents
from hierret.encoders.cache import CachedEncoder, VectorCache, cached_encoder, text_keys
from hierret.encoders.embed import (
    CorpusSource,
    corpus_passages,
    embed_corpus,
    embed_texts,
    partitions,
    stream_partitions,
    streamable,
)
from hierret.structure.hierarchy import build_hierarchy

#: The fixture corpus has a line without text on purpose; load() warns that it drops it.
pytestmark = pytest.mark.filterwarnings("ignore::hierret.datasets.beir.BeirDataWarning")

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]


def write_corpus(folder: Path, n: int = 120) -> Path:
    """A BEIR folder of ``n`` documents of varied length (some repeated, one without
    text, a byte-order mark first, non-ASCII text): what ``load`` reads too."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        body = " ".join(f"{WORDS[(i * 7 + j) % 12]} {i % 5}." for j in range(8 + (i * 37) % 400))
        doc = {"_id": f"d{i}", "title": f"Títle {i % 9}" if i % 4 else "", "text": body}
        if i % 10 == 3:  # a repeated document: its passages are the same texts
            doc["text"], doc["title"] = lines and json.loads(lines[0])["text"], ""
        lines.append(json.dumps(doc, ensure_ascii=i % 2 == 0))
    lines.insert(5, json.dumps({"_id": "empty", "title": "", "text": " "}))
    (folder / "corpus.jsonl").write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n', encoding="utf-8")
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def in_driver_texts(folder: Path, max_chars: int = 500, overlap: int = 50) -> list[str]:
    bundle = load(str(folder), questions=False)
    return corpus_passages(build_hierarchy(bundle.corpus, max_chars, overlap))


def cache_bytes(root: Path, identity: object, texts: list[str]) -> bytes:
    keys = sorted(set(text_keys(identity, "passage", texts)))  # type: ignore[arg-type]
    vecs, found = VectorCache(root).get(identity, keys)  # type: ignore[arg-type]
    assert found.all()
    return b"".join(keys) + vecs.tobytes()


def test_the_drivers_pass_makes_the_in_driver_keys_and_partitions(tmp_path: Path) -> None:
    folder = write_corpus(tmp_path / "c")
    texts = in_driver_texts(folder)
    source = CorpusSource.of(str(folder), 500, 50)
    ident = cached_encoder("hash", VectorCache(tmp_path / "x")).identity
    loc = source.locate(ident)
    assert len(loc) == len(texts)
    assert loc.documents == 120
    assert loc.keys.tobytes() == b"".join(text_keys(ident, "passage", texts))
    assert [source.text(loc, r) for r in (0, 7, len(texts) - 1)] == [texts[0], texts[7], texts[-1]]
    distinct = list(dict.fromkeys(texts))
    assert len(distinct) < len(texts)  # repeated documents: the dedupe is exercised
    rows = np.sort(np.unique(loc.keys.view("V32").ravel(), return_index=True)[1])
    streamed = [[texts[r] for r in p] for p in stream_partitions(loc, rows, 64)]
    assert streamed == [[distinct[i] for i in p] for p in partitions(distinct, 64)]


def test_streamed_vectors_are_the_local_engines(tmp_path: Path) -> None:
    """A real model (batches padded to their longest text): the streamed partitions'
    batches are the in-driver engine's, so the vectors are too, bit for bit."""
    folder = write_corpus(tmp_path / "c", n=8)
    texts = in_driver_texts(folder)
    whole = cached_encoder("minilm-int8", VectorCache(tmp_path / "local"))
    embed_texts(texts, whole, show_progress=False)
    enc = CachedEncoder(whole.encoder, VectorCache(tmp_path / "streamed"))  # loaded once
    source = CorpusSource.of(str(folder), 500, 50)
    assert embed_corpus(source, enc, engine="local", show_progress=False).embedded > 8  # batches
    assert cache_bytes(tmp_path / "streamed", enc.identity, texts) == cache_bytes(
        tmp_path / "local", enc.identity, texts
    )


def test_shards_by_key_merge_into_one_runs_cache(tmp_path: Path) -> None:
    folder = write_corpus(tmp_path / "c")
    texts = in_driver_texts(folder)
    source = CorpusSource.of(str(folder), 500, 50)
    whole = cached_encoder("hash", VectorCache(tmp_path / "one"))
    embed_corpus(source, whole, engine="local", show_progress=False)
    shares = []
    for i in range(3):  # three jobs, each its own cache: merged by copying the files
        enc = cached_encoder("hash", VectorCache(tmp_path / f"shard{i}"))
        report = embed_corpus(source, enc, engine="local", shard=(i, 3), show_progress=False)
        assert report.texts == len(texts)
        assert report.cached == 0
        shares.append(report.embedded)
        for file in (tmp_path / f"shard{i}").rglob("*"):
            if file.is_file():
                to = tmp_path / "merged" / file.relative_to(tmp_path / f"shard{i}")
                to.parent.mkdir(parents=True, exist_ok=True)
                assert not to.exists() or to.read_bytes() == file.read_bytes()
                shutil.copyfile(file, to)
    assert sum(shares) == len(set(texts))
    assert min(shares) > 0
    ident = whole.identity
    assert cache_bytes(tmp_path / "merged", ident, texts) == cache_bytes(
        tmp_path / "one", ident, texts
    )
    enc = cached_encoder("hash", VectorCache(tmp_path / "merged"))
    again = embed_corpus(source, enc, engine="local", show_progress=False)
    assert (again.embedded, again.cached) == (0, len(set(texts)))


def test_the_driver_holds_tens_of_bytes_a_passage_not_the_text(tmp_path: Path) -> None:
    """tracemalloc: what the driver's pass keeps (its locators and keys) against what
    the in-driver path keeps (the texts): the bound fails on the old path."""
    folder = write_corpus(tmp_path / "c", n=100)
    source = CorpusSource.of(str(folder), 500, 50)
    ident = cached_encoder("hash", VectorCache(tmp_path / "x")).identity

    def held(make: object) -> tuple[int, object]:
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            kept = make()  # type: ignore[operator]
            gc.collect()
            return tracemalloc.get_traced_memory()[0] - base, kept
        finally:
            tracemalloc.stop()

    streamed, loc = held(lambda: source.locate(ident))
    n = len(loc)  # type: ignore[arg-type]
    old, texts = held(lambda: in_driver_texts(folder))
    assert n == len(texts) > 300  # type: ignore[arg-type]
    assert streamed / n < 100, f"{streamed / n:.0f} B a passage held by the streamed driver"
    assert old / n > 400  # the texts themselves (about 480 characters each)


def test_only_a_beir_corpus_streams(tmp_path: Path) -> None:
    assert streamable("python-reference") is None
    assert streamable(str(tmp_path)) is None
    with pytest.raises(ValueError, match="only those are streamed"):
        CorpusSource.of("python-reference")
    folder = write_corpus(tmp_path / "c")
    assert streamable(str(folder)) == (folder / "corpus.jsonl").resolve()
    with pytest.raises(ValueError, match=r"overlap_chars \(500\) must be smaller"):
        CorpusSource.of(str(folder), 500, 500)


def test_a_range_read_gives_the_loaders_documents(tmp_path: Path) -> None:
    folder = write_corpus(tmp_path / "c")
    everything = list(corpus_documents(folder / "corpus.jsonl"))
    loaded = load(str(folder), questions=False).corpus
    assert [d for _, _, d in everything if not isinstance(d, str)] == list(loaded)
    lineno, offset, doc = everything[40]
    assert next(corpus_documents(folder / "corpus.jsonl", offset, first=lineno))[2] == doc
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": 3.5}\n', encoding="utf-8")
    with pytest.raises(BeirFormatError, match=r"bad.jsonl:2: field 'text' must be a string"):
        list(corpus_documents(bad, check_ids=False))


def test_a_worker_reading_a_changed_file_is_refused(tmp_path: Path) -> None:
    folder = write_corpus(tmp_path / "c")
    source = CorpusSource.of(str(folder), 500, 50)
    loc = source.locate(cached_encoder("hash", VectorCache(tmp_path / "x")).identity)
    shutil.copy(folder / "corpus.jsonl", tmp_path / "kept")
    (folder / "corpus.jsonl").write_text('{"_id": "d0", "text": "short"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="the file changed since its keys were made"):
        source.text(loc, len(loc) - 1)


def test_the_command_line_streams_a_beir_folder_with_engine_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--engine ray`` on a BEIR folder takes the streamed path (Ray itself is replaced:
    its runs are tested in tests/core/test_embed_ray.py)."""
    import hierret.encoders.embed.ray as engine

    folder = write_corpus(tmp_path / "c")
    asked: list[object] = []

    def stream(name: object, kw: object, identity: object, options: object, source: object):  # type: ignore[no-untyped-def]
        asked.append(source)

        def run(rows, keys, role):  # type: ignore[no-untyped-def]
            return iter(())

        return run

    monkeypatch.setattr(engine, "ray_stream", stream)
    argv = ["embed", "--corpus", str(folder), "--encoder", "hash", "--engine", "ray"]
    assert main([*argv, "--no-progress", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert isinstance(asked[0], CorpusSource)
    assert asked[0].name == "beir-c"
    assert "beir-c: " in capsys.readouterr().out


def test_a_node_without_the_corpus_says_so_before_loading_a_model(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    from hierret.encoders import HashEncoder
    from hierret.encoders.embed.ray import _StreamEmbedder

    gone = CorpusSource(str(tmp_path / "corpus.jsonl"), "beir-x")
    ident = HashEncoder(dimension=8).identity.as_dict()
    with pytest.raises(FileNotFoundError, match=r"has no file .*corpus.jsonl: the corpus is read"):
        _StreamEmbedder(gone, name="no-such-model", kw={}, identity=ident, role="passage")
