"""MaxSim's token matrices on disk: bit for bit, once per identity, damage found and rebuilt."""

from __future__ import annotations

import logging
import os
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

import hierret.encoders.cache._shelf as shelf_mod
from hierret import _clock
from hierret.encoders import Encoder, EncoderIdentity, Role, load_encoder
from hierret.encoders.cache import (
    CachedEncoder,
    CacheNotWritableWarning,
    TokenIdentity,
    VectorCache,
    text_keys,
)
from hierret.search.rerank import MaxSimReranker, SentenceTransformerTokens, TokenEncoder
from hierret.study import joint

TEXTS = [
    "a cat sat on the mat",
    "dogs bark at the postman every single morning",
    "",  # no tokens: an empty matrix
    "birds sing",
    "fish swim in schools and breathe with gills",
]
QUERY = "where do cats sit"


class Toy(TokenEncoder):
    """Seeded token matrices, one row per word (float64, not normalised); counts calls."""

    name = "toy"

    def __init__(self, weights: str = "v1", dimension: int = 3) -> None:
        enc = EncoderIdentity("toy", "test", weights, "fp32", dimension, 64)
        self._identity = TokenIdentity(enc, "toy-rules-v1")
        self.dimension = dimension
        self.calls: list[list[str]] = []

    @property
    def identity(self) -> TokenIdentity:
        return self._identity

    def encode_tokens(self, texts: Sequence[str], role: Role) -> list[NDArray[Any]]:
        self.calls.append(list(texts))
        return [
            np.random.default_rng(zlib.crc32(f"{role}:{t}".encode())).normal(
                size=(len(t.split()), self.dimension)
            )
            for t in texts
        ]


def computed(tokens: Toy) -> list[str]:
    return [t for call in tokens.calls for t in call]


def shard_files(root: Path, tokens: TokenEncoder) -> list[Path]:
    assert tokens.identity is not None
    return sorted((root / tokens.identity.key()).glob("*.hvc"))


def test_stored_matrices_are_bit_identical_to_computed(tmp_path: Path) -> None:
    first = MaxSimReranker(Toy(), cache=VectorCache(tmp_path))
    made = first.token_vectors(TEXTS)
    fresh = MaxSimReranker(Toy(), cache=None).token_vectors(TEXTS)
    tokens = Toy()
    read = MaxSimReranker(tokens, cache=VectorCache(tmp_path)).token_vectors(TEXTS)
    assert computed(tokens) == []
    for a, b, c in zip(made, fresh, read, strict=True):
        assert a.dtype == b.dtype == c.dtype == np.float32
        assert a.shape == b.shape == c.shape
        assert a.tobytes() == b.tobytes() == c.tobytes()
        assert not c.flags.writeable
    assert read[2].shape == (0, 3)


def test_second_reranker_on_the_same_folder_computes_nothing(tmp_path: Path) -> None:
    tokens = Toy()
    with _clock.recording() as cold:
        scores = MaxSimReranker(tokens, cache=VectorCache(tmp_path)).score(QUERY, TEXTS)
    assert sorted(computed(tokens)) == sorted([QUERY, *dict.fromkeys(TEXTS)])
    again = Toy()
    with _clock.recording() as warm:
        rescored = MaxSimReranker(again, cache=VectorCache(tmp_path)).score(QUERY, TEXTS)
    assert again.calls == []
    np.testing.assert_array_equal(rescored, scores)
    label = "toy fp32 tokens"
    assert (cold.embedded[label], cold.cached[label]) == (len(TEXTS) + 1, 0)
    assert (warm.embedded[label], warm.cached[label]) == (0, len(TEXTS) + 1)
    assert "embed toy fp32 tokens" in warm.seconds


def test_only_the_texts_not_stored_are_computed(tmp_path: Path) -> None:
    MaxSimReranker(Toy(), cache=VectorCache(tmp_path)).prepare(TEXTS[:2])
    tokens = Toy()
    MaxSimReranker(tokens, cache=VectorCache(tmp_path)).prepare(TEXTS)
    assert computed(tokens) == TEXTS[2:]


def test_identity_and_role_are_part_of_the_key(tmp_path: Path) -> None:
    MaxSimReranker(Toy(), cache=VectorCache(tmp_path)).prepare(TEXTS)
    other = Toy(weights="v2")
    MaxSimReranker(other, cache=VectorCache(tmp_path)).prepare(TEXTS)
    assert computed(other) == TEXTS  # other weights: nothing shared
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2
    queries = Toy()
    MaxSimReranker(queries, cache=VectorCache(tmp_path)).token_vectors(TEXTS[:1], "query")
    assert computed(queries) == TEXTS[:1]  # stored as a passage only
    ident = Toy().identity
    assert text_keys(ident, "query", ["x"]) != text_keys(ident, "passage", ["x"])
    assert text_keys(ident, "passage", ["x"]) != text_keys(ident.encoder, "passage", ["x"])


def damage_and_reread(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Any
) -> tuple[Toy, list[NDArray[np.float32]]]:
    """Store TEXTS, damage the one shard, read them with a new reranker."""
    expected = MaxSimReranker(Toy(), cache=VectorCache(tmp_path)).token_vectors(TEXTS)
    (shard,) = shard_files(tmp_path, Toy())
    damage(shard)
    tokens = Toy()
    with caplog.at_level(logging.WARNING, logger="hierret.encoders.cache"):
        got = MaxSimReranker(tokens, cache=VectorCache(tmp_path)).token_vectors(TEXTS)
    for a, b in zip(got, expected, strict=True):
        assert a.tobytes() == b.tobytes()  # a damaged matrix is never served
    rebuilt = Toy()
    MaxSimReranker(rebuilt, cache=VectorCache(tmp_path)).token_vectors(TEXTS)
    assert rebuilt.calls == []  # the damaged shard was rewritten
    assert shard not in shard_files(tmp_path, Toy())
    return tokens, got


def flip_byte(offset: Any) -> Any:
    """A damage: flip one bit of the byte at ``offset(shard size)``."""

    def flip(shard: Path) -> None:
        data = bytearray(shard.read_bytes())
        data[offset(len(data))] ^= 0x01
        shard.write_bytes(bytes(data))

    return flip


#: Bytes of TEXTS' matrices (3 float32 columns, a row a word) and their 48-byte records.
ROWS_BYTES, TABLE_BYTES = 4 * 3 * sum(len(t.split()) for t in TEXTS), 48 * len(TEXTS)


@pytest.mark.parametrize(
    ("where", "offset"),
    [
        ("in the last matrix's rows", lambda n: n - 5),
        ("in the first record's row count", lambda n: n - ROWS_BYTES - TABLE_BYTES + 40),
    ],
)
def test_flipped_bytes_are_detected_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str, offset: Any
) -> None:
    tokens, _ = damage_and_reread(tmp_path, caplog, flip_byte(offset))
    assert computed(tokens) == [TEXTS[-1] if "matrix" in where else TEXTS[0]]
    assert "corrupt record" in caplog.text
    assert Toy().identity.key() in caplog.text  # the message names the shard


def test_truncated_shard_is_detected_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def truncate(shard: Path) -> None:
        with shard.open("r+b") as f:
            f.truncate(shard.stat().st_size - 40)  # the last matrix loses rows

    tokens, _ = damage_and_reread(tmp_path, caplog, truncate)
    assert computed(tokens) == [TEXTS[-1]]
    assert "is truncated or padded" in caplog.text


def test_read_only_cache_warns_once_and_scores_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = MaxSimReranker(Toy(), cache=None).score(QUERY, TEXTS)

    def denied(folder: Path, executable: bool = False) -> tuple[int, Path]:
        raise PermissionError(13, "Permission denied", str(folder))

    monkeypatch.setattr(shelf_mod, "create_temp", denied)  # chmod would not stop root
    # nothing kept in memory: the second score tries to store again
    rr = MaxSimReranker(Toy(), cache=VectorCache(tmp_path), cache_size=0)
    with pytest.warns(CacheNotWritableWarning, match="Token matrices are computed but not"):
        scores = rr.score(QUERY, TEXTS)
    np.testing.assert_array_equal(scores, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per reranker
        np.testing.assert_array_equal(rr.score(QUERY, TEXTS), expected)
    assert not any(tmp_path.rglob("*.hvc"))


def test_a_token_encoder_without_identity_stays_in_memory(tmp_path: Path) -> None:
    class Anonymous(Toy):
        @property
        def identity(self) -> None:  # type: ignore[override]
            return None

    assert MaxSimReranker(Anonymous()).disk is None
    with pytest.raises(ValueError, match=r"declares no identity.*cache=None"):
        MaxSimReranker(Anonymous(), cache=VectorCache(tmp_path))
    with pytest.raises(ValueError, match="cache must be"):
        MaxSimReranker(Toy(), cache="disk")  # type: ignore[arg-type]


def test_put_matrices_validates(tmp_path: Path) -> None:
    cache, ident = VectorCache(tmp_path), Toy().identity
    keys = text_keys(ident, "passage", ["a", "b"])
    with pytest.raises(ValueError, match="expected \\(n, 3\\)"):
        cache.put_matrices(ident, keys, [np.zeros((2, 4), np.float32)] * 2)
    with pytest.raises(ValueError, match="1 matrices for 2 keys"):
        cache.put_matrices(ident, keys, [np.zeros((2, 3), np.float32)])
    with pytest.raises(TypeError, match="expected a TokenIdentity"):
        cache.get_matrices(ident.encoder, keys)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected an EncoderIdentity"):
        cache.get(ident, keys)  # type: ignore[arg-type]


def test_cold_latency_copies_keep_nothing_on_disk(tmp_path: Path) -> None:
    warm = MaxSimReranker(Toy(), cache=VectorCache(tmp_path))
    cold = joint.unprepared(warm)
    assert isinstance(cold, MaxSimReranker)
    assert cold.disk is None


# --- MiniLM: the default finds the CachedEncoder's cache ------------------------------------


class Counting(SentenceTransformerTokens):
    """MiniLM's token vectors, counting the texts sent to the model."""

    def __init__(self, encoder: Encoder) -> None:
        super().__init__(encoder)
        self.sent: list[str] = []

    def encode_tokens(self, texts: Sequence[str], role: Role) -> list[NDArray[np.float32]]:
        self.sent.extend(texts)
        return super().encode_tokens(texts, role)


@pytest.mark.slow
def test_minilm_matrices_from_disk_match_the_model_bit_for_bit(tmp_path: Path) -> None:
    minilm = CachedEncoder(load_encoder("minilm"), VectorCache(tmp_path))
    texts = ["The finally clause always runs.", "Dogs bark.", "!!", TEXTS[1]]
    first = Counting(minilm)
    rr = MaxSimReranker(first)  # the default: the CachedEncoder's cache
    assert rr.disk is minilm.cache
    made = rr.token_vectors(texts)
    assert first.sent == texts
    again = Counting(minilm)
    read = MaxSimReranker(again).token_vectors(texts)
    assert again.sent == []
    assert [m.tobytes() for m in read] == [m.tobytes() for m in made]
    assert [m.shape for m in read] == [m.shape for m in made]
    fresh = MaxSimReranker(Counting(minilm), cache=None).token_vectors(texts)
    for a, b in zip(read, fresh, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)  # a new forward pass, other batches
    ident = first.identity
    assert ident.encoder == minilm.identity
    assert "skip_punctuation=True" in ident.tokens
    assert (tmp_path / ident.key() / "identity.json").exists()
    assert os.path.isdir(tmp_path / ident.key())
