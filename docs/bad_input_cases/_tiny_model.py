"""A tiny sentence-transformers model folder, and the in-place edits that must change its identity.

Shared by the encoder bad-input cases (``encoders.py`` beside this file) and the unit test
``tests/core/test_encoder_identity.py``, so the model and the edits are written once. The folder
holds a randomly initialised one-layer BERT (hidden size 8), a 13-word WordPiece tokenizer
and mean pooling: its vectors mean nothing, but every file a real folder has is there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a",
         "dog", "ran"]  # fmt: skip
TEXTS = ["The cat sat on the mat", "a dog ran", "the dog sat on the mat a cat ran on a mat"]


def build(folder: Path) -> Path:
    """Save the model under ``folder`` and return its sentence-transformers folder."""
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    transformers.BertTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    ).save_pretrained(folder / "hf")
    torch.manual_seed(0)
    transformers.BertModel(
        transformers.BertConfig(
            vocab_size=len(WORDS),
            hidden_size=8,
            num_hidden_layers=1,
            num_attention_heads=1,
            intermediate_size=16,
            max_position_embeddings=32,
        )
    ).save_pretrained(folder / "hf")
    SentenceTransformer(
        modules=[Transformer(str(folder / "hf"), max_seq_length=16), Pooling(8, "mean")]
    ).save(str(folder / "st"))
    return folder / "st"


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    """Rewrite the JSON file ``path`` after ``change`` edited its content in place."""
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def pooling_cls(folder: Path) -> None:
    edit_json(folder / "1_Pooling" / "config.json", lambda d: d.update(pooling_mode="cls"))


def normalize_module(folder: Path) -> None:
    edit_json(
        folder / "modules.json",
        lambda d: d.append(
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.base.modules.normalize.Normalize",
            }
        ),
    )


def keeps_case(folder: Path) -> None:
    # transformers builds the normalizer from tokenizer_config.json, not tokenizer.json's
    edit_json(folder / "tokenizer_config.json", lambda d: d.update(do_lower_case=False))


def window_8(folder: Path) -> None:
    edit_json(folder / "sentence_bert_config.json", lambda d: d.update(max_seq_length=8))


def half(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    save_file({k: v.half() for k, v in weights.items()}, folder / "model.safetensors")
    edit_json(folder / "config.json", lambda d: d.update(dtype="float16"))


def shifted_weights(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    name = sorted(weights)[0]
    weights[name] = weights[name] + 0.5
    save_file(weights, folder / "model.safetensors")


def default_prompt(folder: Path) -> None:
    edit_json(
        folder / "config_sentence_transformers.json",
        lambda d: d.update(prompts={"query": "a ", "document": ""}, default_prompt_name="query"),
    )
