"""Write the site's "Speed against the peers" page from the ``bench`` result record.

    python docs/bench_page.py --out build/site/src/bench.md [--results data/results]

The record is what ``nox -s bench -- --record`` wrote to ``data/results/bench.json``
(``tests/benchmarks/run_all.py``). The page shows every ratio against a peer with
its goal and its equality check, the encoders' passages per second and the fraction of
the machine's measured matrix-multiply peak each reaches, the command
line's cold and warm runs, the chunker's time per character, how closely the fast
e5-small path agrees with the exact engine (the record ``e5_agreement``, from
``tests/benchmarks/e5_agreement.py``, beside DR-002's measured run-to-run
variation), the machine, and one figure (``bench-ratios.png`` beside the page),
all read from the records at every site build, so no number on the page is typed
by hand. Without a record the page says how to make one.
"""

from __future__ import annotations

import argparse
import html
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
FIGURE = "bench-ratios.png"
LINES_KB = (10, 20, 40, 80, 160)
#: The unbroken lines of bench_speed.py, by the key part of their kind.
KINDS = {"e_g": "`e.g. ` repeated", "words": "words"}
V = Mapping[str, Any]


class Row(NamedTuple):
    """One comparison: what it is, its speed-up over the peer, the goal, the check."""

    label: str
    speedup: Callable[[V], float]  # the peer's time / hierret's: above 1, hierret is faster
    goal: str
    met: Callable[[V, float], bool]  # the goal is met, given the values and the speed-up
    check: Callable[[V], str]
    peer: bool = True  # drawn in the figure: a comparison with another tool


def _flat(v: V, kind: str) -> float:
    """Largest over smallest time per character of the unbroken lines of one kind."""
    per_char = [v[f"speed_chunker_lines_{kind}_{kb}_kb_us_per_char"] for kb in LINES_KB]
    return max(per_char) / min(per_char)


def _rows(v: V) -> list[Row]:
    rows = [
        Row(
            f"BM25 index + query, {a} analyzer, vs rank_bm25",
            lambda v, a=a: v[f"bm25_{a}_speedup"],
            "",
            lambda v, s: True,
            lambda v, a=a: (
                f"max score difference {v[f'bm25_{a}_max_abs_score_diff']:.1e}, "
                f"same top 10 for {v[f'bm25_{a}_top10_identical_lists']:.1%} of queries"
            ),
        )
        for a in ("english", "whitespace")
        if f"bm25_{a}_speedup" in v
    ]
    rows += [
        Row(
            f"metrics vs {peer}",
            lambda v, p=p: 1 / v[f"metrics_ratio_vs_{p}"],
            "",
            lambda v, s: True,
            lambda v, p=p: f"max per-query difference {v[f'metrics_max_abs_diff_vs_{p}']:.1e}",
        )
        for peer, p in (("pytrec_eval", "pytrec_eval"), ("ranx", "ranx"))
        if f"metrics_ratio_vs_{p}" in v
    ]
    rows += [
        Row(
            "encoding path (cold cache) vs bare SentenceTransformer.encode",
            lambda v: v["encode_path_ratio_vs_bare"],
            "at least 0.95",
            lambda v, s: s >= 0.95,
            lambda v: f"max vector difference {v['encode_path_max_abs_diff_vs_bare']:.1e}",
        ),
        Row(
            "encoding path, warm cache, vs its cold run",
            lambda v: v["encode_path_hierret_min_s"] / v["encode_path_warm_min_s"],
            "no model call",
            lambda v, s: v["encode_path_warm_model_calls"] == 0,
            lambda v: (
                f"{v['encode_path_warm_model_calls']} model calls, max vector "
                f"difference {v['encode_path_warm_max_abs_diff']:.1e}"
            ),
            peer=False,
        ),
        Row(
            "English analyzer vs bm25s tokenize + PyStemmer",
            lambda v: 1 / v["speed_analyzer_ratio_vs_bm25s"],
            "at least 1",
            lambda v, s: s >= 1,
            lambda v: "",
        ),
        Row(
            "dense search vs numpy matrix product + argpartition",
            lambda v: 1 / v["speed_dense_ratio_vs_numpy"],
            "at least 1",
            lambda v, s: s >= 1,
            lambda v: (
                f"{v['speed_dense_units']:,} units, {v['speed_dense_queries']} queries; "
                "hierret also scores exactly, orders ties and returns ids"
            ),
        ),
        Row(
            "dense search vs FAISS IndexFlatIP",
            lambda v: 1 / v["speed_dense_ratio_vs_faiss"],
            "",
            lambda v, s: True,
            lambda v: "",
        ),
    ]
    return rows


def _times(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio < 100 else f"{ratio:,.0f}×"


def _time(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def ratio_table(v: V) -> list[str]:
    out = ["| comparison | hierret's speed-up | goal | met | check |", "|---|---:|---|---|---|"]
    for row in _rows(v):
        s = row.speedup(v)
        met = ("yes" if row.met(v, s) else "**no**") if row.goal else ""
        out.append(f"| {row.label} | {_times(s)} | {row.goal} | {met} | {row.check(v)} |")
    for kind, text in KINDS.items():
        flat = _flat(v, kind)
        out.append(
            f"| chunker, one line of {text}, CPU time per character from "
            f"{LINES_KB[0]} to {LINES_KB[-1]} kB | {flat:.2f} (largest ÷ smallest) "
            f"| at most 1.5 | {'yes' if flat <= 1.5 else '**no**'} | |"
        )
    return out


def encoder_table(v: V, identity: V) -> list[str]:
    """Each backend's texts per second: on the whole abstracts and, when the record has
    them, on the passages the studies embed (the same abstracts cut at 900 characters)."""
    names = [n.replace("-", "_") for n in identity.get("encoders", {})]
    cut = bool(names) and all(f"encode_passages_{n}_pps" in v for n in names)
    head = "| backend | whole abstracts / s | median time |"
    out = [head + (" passages / s | median time |" if cut else "") + " identity |"]
    out.append("|---|---:|---:|" + ("---:|---:|" if cut else "") + "---|")
    for name, ident in identity.get("encoders", {}).items():
        cells = ""
        for kind in ("backends", "passages") if cut else ("backends",):
            b = f"encode_{kind}_{name.replace('-', '_')}"
            cells += f" {v[b + '_pps']:.1f} | {_time(v[b + '_median_s'])} |"
        out.append(f"| `{name}` |{cells} {_folded(str(ident))} |")
    return out


def efficiency_table(v: V, identity: V) -> list[str]:
    """Each transformer's FLOPs per text and the fraction of the machine's measured GEMM
    peak it reached (when the record has them: ``bench_peak.py``)."""
    if "peak_fp32_peak_gflops" not in v:
        return []
    peaks = {"fp32": ("peak_fp32_peak_gflops", "GFLOP/s"), "int8": ("peak_int8_peak_gops", "GOP/s")}
    measured = [
        f"{a} {v[k]:.0f} {unit}" for a, (k, unit) in peaks.items() if k in v
    ]  # fmt: skip
    out = [
        "",
        "How near each engine comes to what this machine can multiply: its floating-point "
        "operations per text counted from the model's shape (layers, hidden size, feed-forward "
        "size; attention's n² term) and the texts' token counts (`tests/benchmarks/"
        "bench_peak.py`), times its passages per second, as a fraction of the best matrix "
        f"multiply measured here at the encoders' shapes ({v['peak_tokens']:.0f} × 384 by "
        f"384 × 1,536 and the other projections, torch, {v['peak_threads']:.0f} threads): "
        + ", ".join(measured)
        + ". Engines with int8 arithmetic are measured against the int8 peak (torch's "
        "int8 GEMM uses whatever matrix units the CPU has, AMX where there is one), and every "
        "engine against the fp32 peak as a common yardstick.",
        "",
        "| backend | texts | texts / s | tokens / text | GFLOP / text | GFLOP/s | arithmetic "
        "| fraction of its arithmetic's peak | fraction of the fp32 peak |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    kinds = {"backends": "whole abstracts", "passages": "passages"}
    for name, arithmetic in identity.get("arithmetic", {}).items():
        for kind, texts in kinds.items():
            b = f"encode_{kind}_{name.replace('-', '_')}"
            if b + "_gflops" not in v:  # a record from before passages were measured
                continue
            fraction = v.get(b + "_fraction_of_peak")
            of_fp32 = v[b + "_gflops"] / v["peak_fp32_peak_gflops"]
            out.append(
                f"| `{name}` | {texts} | {v[b + '_pps']:.1f} | {v[b + '_tokens_mean']:.0f} | "
                f"{v[b + '_gflop_per_text']:.2f} | {v[b + '_gflops']:.1f} | {arithmetic} | "
                f"{_share(fraction)} | {_share(of_fp32)} |"
            )
    return out


#: The agreement record's corpora, as the page names them.
AGREEMENT_CORPORA = {
    "python_reference": "Python reference",
    "scifact_1000": "SciFact sample",
}


def agreement_table(agreement: V | None, dr002: V | None) -> list[str]:
    """``e5-small-torch`` against the exact ``e5-small`` engine on DR-002's corpora, and
    whether the largest difference lies within what DR-002 measured a CPU model to
    change in the engine (``variation_e5_small_cpu_maxabs``): the bar another path
    must clear to replace the engine, with identical top-10 rankings."""
    if agreement is None:
        return []
    v = agreement["values"]
    corpora = [c for c in AGREEMENT_CORPORA if f"{c}_units" in v]
    out = [
        "",
        "## e5-small through PyTorch",
        "",
        "`e5-small-torch` runs e5-small's own 4-bit weights, expanded once to float32, "
        "through PyTorch, with the engine's tokenizer, windows, pooling and activation "
        "rounding (`hierret.encoders.e5_torch`). Both engines embedded DR-002's corpora "
        "and questions (`tests/benchmarks/e5_agreement.py`): the cosine between their "
        "vectors of each text, the largest difference of one element, and how many "
        "questions' dense top 10 differ.",
        "",
        "| corpus | cosine, texts: smallest (mean) | cosine, questions: smallest (mean) "
        "| largest element difference | questions whose top 10 differs: in members, in order |",
        "|---|---:|---:|---:|---:|",
    ]
    for c in corpora:
        g = {k.removeprefix(c + "_"): x for k, x in v.items() if k.startswith(c + "_")}
        maxabs = max(g["units_maxabs"], g["questions_maxabs"])
        out.append(
            f"| {AGREEMENT_CORPORA[c]}: {g['units']:,} texts, {g['questions']:,} questions "
            f"| {g['units_cos_min']:.6f} ({g['units_cos_mean']:.6f}) "
            f"| {g['questions_cos_min']:.6f} ({g['questions_cos_mean']:.6f}) | {maxabs:.4f} "
            f"| {g['top10_set_differs']}, {g['top10_order_differs']} |"
        )
    out.append("")
    bar = (dr002 or {}).get("values", {}).get("variation_e5_small_cpu_maxabs")
    if bar is None:
        return [*out, "DR-002's record is not here, so the page cannot say whether the "
                "difference lies within the engine's own variation.", ""]  # fmt: skip
    worst = max(max(v[f"{c}_units_maxabs"], v[f"{c}_questions_maxabs"]) for c in corpora)
    differ = sum(v[f"{c}_top10_set_differs"] + v[f"{c}_top10_order_differs"] for c in corpora)
    within = worst <= bar and differ == 0
    verdict = (
        "**within** it, and every top 10 is identical: the PyTorch path may replace the engine"
        if within
        else "**not within** it"
        + (" (the largest difference exceeds it)" if worst > bar else "")
        + (", and some top 10s differ" if differ else "")
        + ": so `e5-small-torch` keeps its own identity, and `e5-small` (the exact engine) "
        "stays the one every record uses"
    )
    out += [
        f"DR-002 measured what a CPU model changes in the engine itself (its wheel's binary "
        f"against the exact build): a largest element difference of {bar:.4f}. The PyTorch "
        f"path's largest difference here, {worst:.4f}, is {verdict}.",
        "",
        f"Load when this comparison began: {agreement['identity']['load_1min_at_start']:.1f} "
        f"(one-minute average); CPU: {agreement['machine']['cpu']}.",
        "",
    ]
    return out


def _folded(identity: str) -> str:
    """An encoder's identity folded: its model in sight, the rest (precision, digests,
    engine versions, compiler flags) one click away, as literal text.

    >>> _folded("m/x (st, fp32, prefixes query='')")
    "<details><summary>m/x, st, fp32</summary><code>st, fp32, prefixes query=''</code></details>"
    """
    head, _, rest = identity.partition(" (")
    if not rest:
        return f"<code>{html.escape(identity, quote=False)}</code>"
    rest = rest.removesuffix(")")
    summary = html.escape(", ".join([head, *rest.split(", ")[:2]]))  # model, engine, precision
    body = html.escape(rest, quote=False)
    return f"<details><summary>{summary}</summary><code>{body}</code></details>"


def _share(fraction: float | None) -> str:
    """A fraction as a percentage, one decimal below 10%."""
    if fraction is None:
        return "not measured"
    return f"{fraction:.1%}" if fraction < 0.1 else f"{fraction:.0%}"


def _default_batch() -> int:
    """:class:`~hierret.encoders.OnnxEncoder`'s default batch size, from its signature."""
    from hierret.encoders import OnnxEncoder

    return int(inspect.signature(OnnxEncoder).parameters["batch_size"].default)


def batch_table(v: V) -> list[str]:
    """Passages per second of the ONNX backends by batch size (when the record has them)."""
    names = ("minilm-int8", "minilm-w8a8")
    sizes = sorted(
        {
            int(k.rsplit("_", 2)[-2])
            for k in v
            if k.startswith("encode_batches_") and k.endswith("_pps")
        }
    )
    if not sizes:
        return []
    out = [
        "| backend | " + " | ".join(f"batch {b}" for b in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name in names:
        key = f"encode_batches_{name.replace('-', '_')}"
        cells = [f"{v[f'{key}_{b}_pps']:.1f}" for b in sizes if f"{key}_{b}_pps" in v]
        out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return [
        "",
        "Passages per second by batch size (the ONNX vectors do not depend on it; "
        f"the default batch is {_default_batch()}). `minilm-int8` stores int8 weights but "
        "computes in float32 (onnxruntime turns the weights back into float32 once, at "
        "load); `minilm-w8a8` runs the same weights with int8 arithmetic.",
        "",
        *out,
    ]


def cli_table(v: V) -> list[str]:
    return [
        "| `hierret search` | wall time | peak memory |",
        "|---|---:|---:|",
        f"| cold (empty vector cache) | {_time(v['encode_cli_cold_wall_s'])} | "
        f"{v['encode_cli_cold_peak_mb']:.0f} MB |",
        f"| warm, a question asked before (best of the repeats) | "
        f"{_time(v['encode_cli_warm_min_s'])} | {v['encode_cli_warm_peak_mb']:.0f} MB |",
        *(
            [
                f"| warm, a new question (best of the repeats) | "
                f"{_time(v['encode_cli_warm_new_question_min_s'])} | "
                f"{v['encode_cli_warm_new_question_peak_mb']:.0f} MB |",
            ]
            if "encode_cli_warm_new_question_min_s" in v
            else []
        ),
        "",
        "Warm, every passage vector is in the vector cache and the encoder's identity "
        "in its manifest beside them, so a question asked before is answered without "
        "loading the model (no torch import); a new question loads the model to embed "
        "it, which is most of its time.",
    ]


def chunker_table(v: V) -> list[str]:
    out = ["| text | µs of CPU per character (min) |", "|---|---:|"]
    for times in (1, 4, 16):
        out.append(f"| corpus ×{times} | {v[f'speed_chunker_corpus_{times}x_us_per_char']:.3f} |")
    for kind, text in KINDS.items():
        for kb in LINES_KB:
            us = v[f"speed_chunker_lines_{kind}_{kb}_kb_us_per_char"]
            out.append(f"| one line of {text}, {kb} kB | {us:.3f} |")
    return out


def figure(v: V, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hierret.publish import save
    from hierret.publish.site_build import WIDTH

    rows = [row for row in _rows(v) if row.peer]
    fig, ax = plt.subplots(figsize=(WIDTH, 0.45 * len(rows) + 1.2))  # the site's width
    speedups = [row.speedup(v) for row in rows]
    bars = ax.barh(
        range(len(rows)), speedups, color=["#4c72b0" if s >= 1 else "#dd8452" for s in speedups]
    )
    ax.bar_label(bars, [_times(s) for s in speedups], padding=3, fontsize=9)
    ax.set_xlim(min(min(speedups) / 2, 0.5), max(speedups) * 4)
    ax.set_yticks(range(len(rows)), [row.label for row in rows], fontsize=9)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xlabel("hierret's speed-up over the peer (peer's time ÷ hierret's, log scale)")
    fig.tight_layout()
    save(fig, path.parent, path.name, show=False)


def page(
    record: V | None, figure_path: Path, agreement: V | None = None, dr002: V | None = None
) -> str:
    head = ["# Speed against the peers", ""]
    if record is None:
        return "\n".join(
            [
                *head,
                "No benchmark record yet: run `nox -s bench -- --record`, "
                "which writes `data/results/bench.json`, then build the site.",
                "",
            ]
        )
    v, identity = record["values"], record["identity"]
    figure(v, figure_path)
    machine = record["machine"]
    text = [
        *head,
        "`nox -s bench` measures hierret side by side with the tools a user would pick "
        "instead, in one run, and `-- --record` keeps the result as the record "
        "`data/results/bench.json`, from which this page is generated at every site build. "
        "Each time is the smallest of the repeats after one warm-up call; a speed-up "
        "above 1 means hierret is faster. Absolute times depend on the machine and on what "
        "else it was doing (below), so compare the ratios.",
        "",
        "## Ratios and checks",
        "",
        *ratio_table(v),
        "",
        f"```{{figure}} {figure_path.name}",
        ":alt: Horizontal bars of hierret's speed-up over each peer, log scale, line at 1.",
        ":width: 90%",
        "",
        "hierret's speed-up over each peer (bars right of the line: hierret is faster).",
        "```",
        "",
        "## Encoders",
        "",
        f"Texts per second of each backend on the same {v['encode_path_texts']} SciFact "
        "abstracts (title and text), without a cache: whole, and cut into the passages the "
        "studies embed (the chunker's defaults: at most 900 characters, up to 180 of "
        "overlap), where a record has both. A passage is shorter than a whole abstract, and "
        "attention's share of the work, which grows with the square of the length, smaller.",
        "",
        *encoder_table(v, identity),
        *efficiency_table(v, identity),
        *batch_table(v),
        *agreement_table(agreement, dr002),
        "",
        "## The command line",
        "",
        *cli_table(v),
        "",
        "## The chunker",
        "",
        *chunker_table(v),
        "",
        "## The machine",
        "",
        f"* CPU: {machine['cpu']}; {identity['cpus_usable']} of {identity['cpus']} cores usable",
        f"* load when the run began: {identity['load_1min_at_start']:.1f} (one-minute average); "
        f"{identity['load_note']}",
        f"* repeats: {identity['repeat']}; Python {machine['python']}, numpy {machine['numpy']}, "
        f"torch {machine['torch']}",
        "* peers: " + ", ".join(f"{k} {val}" for k, val in identity["peers"].items()),
        *(
            [f"* the exact e5 engine ran on {identity['e5_binary']}"]
            if identity.get("e5_binary")
            else []
        ),
        "",
    ]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, required=True, help="the page to write (Markdown)")
    ap.add_argument("--results", type=Path, default=ROOT / "data" / "results")
    args = ap.parse_args(argv)
    record, agreement, dr002 = (
        json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        for path in (args.results / f for f in ("bench.json", "e5-agreement.json", "dr002.json"))
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = page(record, args.out.parent / FIGURE, agreement, dr002)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
