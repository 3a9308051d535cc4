"""Whatever changes a vector changes the encoder identity (so the cache key and the index
guard): pooling, normalisation, tokenizer, token window, weights, prefixes; and a model's
default prompt, which the identity does not record, is not applied. A tiny local
sentence-transformers model (a 1-layer BERT with random weights, 8 dimensions), no download."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hierret.cache import CachedEncoder, VectorCache
from hierret.encoders import SentenceTransformerEncoder

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a",
         "dog", "ran"]  # fmt: skip
TEXTS = ["The cat sat on the mat", "a dog ran", "the dog sat on the mat a cat ran on a mat"]


def build_tiny_model(folder: Path) -> Path:
    """Save a sentence-transformers folder: tiny BERT, WordPiece tokenizer, mean pooling."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, BertTokenizerFast

    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    hf = folder / "hf"
    BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                      cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]").save_pretrained(hf)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=8, num_hidden_layers=1,
                        num_attention_heads=1, intermediate_size=16, max_position_embeddings=32)
    BertModel(config).save_pretrained(hf)
    model = SentenceTransformer(modules=[Transformer(str(hf), max_seq_length=16),
                                         Pooling(8, "mean")])
    model.save(str(folder / "st"))
    return folder / "st"


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentence_transformers")
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def folder(original: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny model, to edit in place."""
    return Path(shutil.copytree(original, tmp_path / "model"))


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _pooling_cls(folder: Path) -> None:
    edit_json(folder / "1_Pooling" / "config.json", lambda d: d.update(pooling_mode="cls"))


def _normalize_module(folder: Path) -> None:
    edit_json(folder / "modules.json", lambda d: d.append({
        "idx": 2, "name": "2", "path": "2_Normalize",
        "type": "sentence_transformers.base.modules.normalize.Normalize"}))


def _tokenizer_keeps_case(folder: Path) -> None:
    # transformers builds the normalizer from tokenizer_config.json, not tokenizer.json's
    edit_json(folder / "tokenizer_config.json", lambda d: d.update(do_lower_case=False))


def _window_8(folder: Path) -> None:
    edit_json(folder / "sentence_bert_config.json", lambda d: d.update(max_seq_length=8))


def _weights(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    name = sorted(weights)[0]
    weights[name] = weights[name] + 0.5
    save_file(weights, folder / "model.safetensors")


# each edit, and whether it changes the unit vectors (a Normalize module does not: hierret
# normalises anyway; the identity changes all the same)
EDITS = {"pooling mean -> cls": (_pooling_cls, True),
         "a Normalize module": (_normalize_module, False),
         "tokenizer keeps case": (_tokenizer_keeps_case, True),
         "max_seq_length 16 -> 8": (_window_8, True),
         "weights": (_weights, True)}  # fmt: skip


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
    edit_json(folder / "tokenizer.json", lambda d: d["normalizer"].update(lowercase=False))
    after = SentenceTransformerEncoder(str(folder), show_progress=False)
    assert after.identity == before.identity  # the identity reads the tokenizer as loaded
    np.testing.assert_array_equal(after.encode_passages(TEXTS), vectors)


def test_the_constructor_settings_change_the_identity(folder: Path) -> None:
    base = SentenceTransformerEncoder(str(folder), show_progress=False).identity
    others = [
        SentenceTransformerEncoder(str(folder), max_length=8, show_progress=False).identity,
        SentenceTransformerEncoder(str(folder), query_prefix="q: ", show_progress=False).identity,
        SentenceTransformerEncoder(str(folder), passage_prefix="p: ",
                                   show_progress=False).identity,
    ]
    assert len({base.key(), *(o.key() for o in others)}) == 4


def test_a_default_prompt_is_not_applied_and_the_warning_says_so(folder: Path) -> None:
    plain = SentenceTransformerEncoder(str(folder), show_progress=False)
    vectors = plain.encode_passages(TEXTS)

    def prompted(doc: dict) -> None:
        doc.update(prompts={"query": "a ", "document": ""}, default_prompt_name="query")

    edit_json(folder / "config_sentence_transformers.json", prompted)
    with pytest.warns(UserWarning, match=r"default prompt 'query' \('a '\).*not applied"):
        enc = SentenceTransformerEncoder(str(folder), show_progress=False)
    assert enc.identity == plain.identity  # the identity does not record the prompt, so
    np.testing.assert_array_equal(enc.encode_passages(TEXTS), vectors)  # it must not apply
    with pytest.warns(UserWarning, match="default prompt"):
        as_prefix = SentenceTransformerEncoder(str(folder), query_prefix="a ",
                                               show_progress=False)
    assert as_prefix.identity != plain.identity
    assert not np.array_equal(as_prefix.encode_queries(TEXTS), plain.encode_queries(TEXTS))
