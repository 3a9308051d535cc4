"""Whatever changes a vector changes the encoder identity (so the cache key and the index
guard): pooling, normalisation, tokenizer, token window, weights, prefixes; and a model's
default prompt, which the identity does not record, is not applied. A tiny local
sentence-transformers model (a 1-layer BERT with random weights, 8 dimensions), no download."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hierret.encoders import SentenceTransformerEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))  # the shared tiny model
from bad_input_cases import _tiny_model as tiny

TEXTS = tiny.TEXTS


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentence_transformers")
    return tiny.build(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def folder(original: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny model, to edit in place."""
    return Path(shutil.copytree(original, tmp_path / "model"))


# each edit, and whether it changes the unit vectors (a Normalize module does not: hierret
# normalises anyway; the identity changes all the same)
EDITS = {"pooling mean -> cls": (tiny.pooling_cls, True),
         "a Normalize module": (tiny.normalize_module, False),
         "tokenizer keeps case": (tiny.keeps_case, True),
         "max_seq_length 16 -> 8": (tiny.window_8, True),
         "weights": (tiny.shifted_weights, True)}  # fmt: skip


@pytest.mark.parametrize(("edit", "moves"), EDITS.values(), ids=EDITS.keys())
def test_editing_the_folder_in_place_changes_the_identity(
    folder: Path, tmp_path: Path, edit: Callable[[Path], None], moves: bool
) -> None:
    cache = VectorCache(tmp_path / "cache")
    before = SentenceTransformerEncoder(str(folder), show_progress=False)
    old = CachedEncoder(before, cache).encode_passages(TEXTS)
    edit(folder)
    after = SentenceTransformerEncoder(str(folder), show_progress=False)
    assert moves != np.allclose(after.encode_passages(TEXTS), old, atol=1e-6)
    assert after.identity != before.identity
    assert after.identity.key() != before.identity.key()
    cached = CachedEncoder(after, cache)
    np.testing.assert_array_equal(cached.encode_passages(TEXTS), after.encode_passages(TEXTS))
    assert cached.stats.hits == 0  # nothing served from the vectors of the folder as it was


def test_an_edit_the_loader_ignores_keeps_identity_and_vectors(folder: Path) -> None:
    before = SentenceTransformerEncoder(str(folder), show_progress=False)
    vectors = before.encode_passages(TEXTS)
    tiny.edit_json(folder / "tokenizer.json", lambda d: d["normalizer"].update(lowercase=False))
    after = SentenceTransformerEncoder(str(folder), show_progress=False)
    assert after.identity == before.identity  # the identity reads the tokenizer as loaded
    np.testing.assert_array_equal(after.encode_passages(TEXTS), vectors)


def test_the_constructor_settings_change_the_identity(folder: Path) -> None:
    base = SentenceTransformerEncoder(str(folder), show_progress=False).identity
    others = [
        SentenceTransformerEncoder(str(folder), max_length=8, show_progress=False).identity,
        SentenceTransformerEncoder(str(folder), query_prefix="q: ", show_progress=False).identity,
        SentenceTransformerEncoder(str(folder), passage_prefix="p: ", show_progress=False).identity,
    ]
    assert len({base.key(), *(o.key() for o in others)}) == 4


def test_a_default_prompt_is_not_applied_and_the_warning_says_so(folder: Path) -> None:
    plain = SentenceTransformerEncoder(str(folder), show_progress=False)
    vectors = plain.encode_passages(TEXTS)

    def prompted(doc: dict) -> None:
        doc.update(prompts={"query": "a ", "document": ""}, default_prompt_name="query")

    tiny.edit_json(folder / "config_sentence_transformers.json", prompted)
    with pytest.warns(UserWarning, match=r"default prompt 'query' \('a '\).*not applied"):
        enc = SentenceTransformerEncoder(str(folder), show_progress=False)
    assert enc.identity == plain.identity  # the identity does not record the prompt, so
    np.testing.assert_array_equal(enc.encode_passages(TEXTS), vectors)  # it must not apply
    with pytest.warns(UserWarning, match="default prompt"):
        as_prefix = SentenceTransformerEncoder(str(folder), query_prefix="a ", show_progress=False)
    assert as_prefix.identity != plain.identity
    assert not np.array_equal(as_prefix.encode_queries(TEXTS), plain.encode_queries(TEXTS))
