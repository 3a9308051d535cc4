"""Section and document vectors: window pooling, own spans, centroids, fallbacks, reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _toy import CountingEncoder
from numpy.typing import NDArray

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.search.vectors.levels import PoolingReport, embed_spans, unit_vectors
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document


def unit(v: NDArray[Any]) -> NDArray[np.float64]:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


WORDS = " ".join(f"w{i}" for i in range(23))  # 23 hash tokens

TEXT = (
    "Top\n***\n\nIntro words about cats and their habits.\n\n"
    "Alpha\n=====\n\nAlpha text on sleeping cats. More alpha text here about naps.\n\n"
    "Alpha one\n---------\n\nDeep text on purring and kneading and whiskers.\n\n"
    "Beta\n====\n\nBeta text about dogs that bark at the mail carrier every day.\n"
)


def toy(max_chars: int = 60, overlap: int = 10) -> Hierarchy:
    docs = [Document("d", "Doc", TEXT), Document("e", "E", "Plain words with no heading.")]
    return build_hierarchy(Corpus("toy", docs), max_chars=max_chars, overlap_chars=overlap)


def test_pooling_is_renormalised_mean_of_window_vectors() -> None:
    enc = CountingEncoder(dimension=32, window=5)
    spans = enc.token_window_spans(WORDS)
    windows = [WORDS[s:e] for s, e in spans]
    assert len(windows) == 5
    assert "".join(windows) == WORDS
    (vec,), (n,) = embed_spans(enc, [WORDS])
    assert n == 5
    assert enc.calls == [windows]  # the windows, in one batch, nothing else
    expected = unit(enc.encode_passages(windows).astype(np.float64).mean(axis=0))
    np.testing.assert_allclose(vec, expected, atol=1e-6)
    assert vec.dtype == np.float32
    assert abs(float(vec @ vec) - 1.0) < 1e-5


def test_windows_respect_prefix_and_special_tokens() -> None:
    enc = HashEncoder(dimension=16, window=8, passage_prefix="passage: ", special_tokens=2)
    _, (n,) = embed_spans(enc, [WORDS])
    windows = [WORDS[s:e] for s, e in enc.token_window_spans(WORDS)]
    assert n == len(windows) > 1
    assert max(enc.count_tokens(windows)) <= 8


def test_span_inside_window_is_embedded_once_as_one_text() -> None:
    enc = CountingEncoder(dimension=16, window=64)
    (vec,), (n,) = embed_spans(enc, [WORDS])
    assert n == 1
    assert enc.calls == [[WORDS]]
    np.testing.assert_array_equal(vec, enc.encode_passages([WORDS])[0])


def test_short_span_shares_the_cache_with_identical_passage(tmp_path: Path) -> None:
    enc = CachedEncoder(CountingEncoder(dimension=16, window=64), VectorCache(tmp_path))
    enc.encode_passages([WORDS])
    assert enc.stats.misses == 1
    embed_spans(enc, [WORDS])
    assert (enc.stats.misses, enc.stats.hits) == (1, 1)


def test_embed_spans_batches_every_window_in_one_call() -> None:
    enc = CountingEncoder(dimension=16, window=5)
    vecs, counts = embed_spans(enc, [WORDS, "a b", WORDS[:20]])
    assert len(enc.calls) == 1
    assert counts == [5, 1, len(enc.token_window_spans(WORDS[:20]))]
    np.testing.assert_allclose(vecs[0], embed_spans(enc, [WORDS])[0][0], atol=1e-6)


def test_rawspan_sections_embed_their_own_span() -> None:
    h = toy()
    enc = HashEncoder(dimension=64, window=512)
    ids, vecs, report = unit_vectors(h, enc, "sections", "rawspan")
    units = h.units("sections")
    assert ids == [u.id for u in units]
    own = enc.encode_passages([h.text(u) for u in units])
    np.testing.assert_allclose(vecs, own, atol=1e-6)
    top = h.sections["d"][0]
    assert top.own_end < top.end  # its own span leaves out the subsections
    assert report.n_embedded == len(units)
    assert report.n_pooled == 0
    assert not report.fallback


def test_rawspan_documents_pool_long_documents() -> None:
    h = toy()
    enc = HashEncoder(dimension=64, window=20)
    ids, vecs, report = unit_vectors(h, enc, "documents", "rawspan")
    assert ids == ["d", "e"]
    n_d = len(enc.token_window_spans(TEXT))
    assert report.windows == {"d": n_d, "e": 1}
    assert n_d > 1
    np.testing.assert_allclose(vecs[0], embed_spans(enc, [TEXT])[0][0], atol=1e-6)
    assert report.pooled == {"d": n_d}
    assert report.max_windows == n_d


def test_centroid_is_renormalised_mean_of_assigned_passages() -> None:
    h = toy()
    enc = HashEncoder(dimension=64)
    pv = enc.encode_passages([h.text(p) for p in h.passages])
    ids, vecs, report = unit_vectors(h, enc, "sections", "centroid", pv)
    for sid, vec in zip(ids, vecs, strict=True):
        rows = [i for i, p in enumerate(h.passages) if p.parent == sid]
        if rows:
            np.testing.assert_allclose(vec, unit(pv[rows].mean(axis=0)), atol=1e-6)
        else:
            assert sid in report.fallback
    docs, dvecs, drep = unit_vectors(h, enc, "documents", "centroid", pv)
    for did, vec in zip(docs, dvecs, strict=True):
        rows = [i for i, p in enumerate(h.passages) if p.doc_id == did]
        np.testing.assert_allclose(vec, unit(pv[rows].mean(axis=0)), atol=1e-6)
    assert drep.n_embedded == 0
    assert drep.fallback == ()


def test_centroid_encodes_passages_when_not_given() -> None:
    h = toy()
    enc = HashEncoder(dimension=64)
    pv = enc.encode_passages([h.text(p) for p in h.passages])
    _, given, _ = unit_vectors(h, enc, "sections", "centroid", pv)
    _, computed, _ = unit_vectors(h, enc, "sections", "centroid")
    np.testing.assert_array_equal(given, computed)


def test_section_without_passages_falls_back_to_its_own_text() -> None:
    text = (
        "Alpha\n=====\n\n"
        + "Words about alpha. " * 8
        + "\n\nBeta\n====\n\n"
        + "Beta one\n--------\n\n"
        + "Words about beta. " * 8
        + "\n"
    )
    h = build_hierarchy(Corpus("t", [Document("d", "D", text)]), max_chars=200, overlap_chars=0)
    holders = {p.parent for p in h.passages}
    empty = [s.id for s in h.sections["d"] if s.id not in holders]
    assert empty, "the toy must have a section without passages"
    enc = HashEncoder(dimension=64)
    ids, vecs, report = unit_vectors(h, enc, "sections", "centroid")
    assert report.fallback == tuple(empty)
    assert set(report.windows) == set(empty)
    sec = {u.id: u for u in h.units("sections")}
    for sid in empty:
        expected = enc.encode_passages([h.text(sec[sid])])[0]
        np.testing.assert_allclose(vecs[ids.index(sid)], expected, atol=1e-6)


def test_passage_vectors_whole_or_pooled() -> None:
    h = toy(max_chars=200, overlap=0)
    enc = HashEncoder(dimension=32, window=12)
    texts = [h.text(p) for p in h.passages]
    _, vecs, report = unit_vectors(h, enc, "passages", "first-window")  # as Searcher embeds them
    np.testing.assert_array_equal(vecs, enc.encode_passages(texts))
    over = [p.id for p, n in zip(h.passages, enc.count_tokens(texts), strict=True) if n > 12]
    assert over
    assert report.truncated == tuple(over)
    assert report.strategy == "first-window"
    ids, pooled, prep = unit_vectors(h, enc, "passages", "rawspan")
    for i, pid in enumerate(ids):
        if pid in over:
            np.testing.assert_allclose(pooled[i], embed_spans(enc, [texts[i]])[0][0], atol=1e-6)
        else:
            np.testing.assert_array_equal(pooled[i], vecs[i])
    assert set(prep.pooled) == set(over)
    assert not prep.truncated
    assert "cut at the window" in str(report)


def test_bad_arguments() -> None:
    h = toy()
    enc = HashEncoder(dimension=8)
    with pytest.raises(ValueError, match="unknown strategy"):
        unit_vectors(h, enc, "sections", "mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="passages"):
        unit_vectors(h, enc, "passages", "centroid")
    with pytest.raises(ValueError, match="expected"):
        unit_vectors(h, enc, "sections", "centroid", np.zeros((1, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="unknown level"):
        unit_vectors(h, enc, "paragraphs")  # type: ignore[arg-type]


def test_report_summaries() -> None:
    r = PoolingReport("sections", "rawspan", 256, 4, {"a": 1, "b": 3, "c": 5, "d": 1})
    assert (r.n_embedded, r.n_pooled, r.max_windows) == (4, 2, 5)
    assert r.mean_pooled_windows == 4.0
    assert "2 over the 256-token window pooled" in str(r)
    empty = PoolingReport("documents", "centroid", 256, 3)
    assert (empty.max_windows, empty.mean_pooled_windows, empty.n_pooled) == (0, 0.0, 0)
