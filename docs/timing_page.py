"""Write the site's "Where the time goes" page from the timing record of its run.

    python docs/timing_page.py --record build/site/src/notebooks/timing.json \\
        --out build/site/src/timing.md

`docs/execute.py` writes the record beside the notebooks it executed (and to
--results): each notebook's wall time, the seconds of each stage the package
timed (hierret.publish.timing), and the texts each encoder embedded or read from the
vector cache. The page shows them as a figure and a table, with the machine and
how loaded it was. Without a record (notebooks executed before timings were
recorded) the page says so and how to get one.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from hierret.publish import save
from hierret.publish.site_build import timing_figure, timing_table

TITLE = "# Where the time goes\n\n"
ROOT = Path(__file__).resolve().parent.parent


def _cell(value: Any, column: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if column == "share":
        return f"{value:.1%}"
    if column == "seconds":
        return f"{value:,.1f}"
    return f"{int(value):,d}"


def _table(record: dict[str, Any], site: Path) -> str:
    frame = timing_table(record)
    columns = list(frame.columns)
    lines = [
        "| notebook | stage | " + " | ".join(columns) + " |",
        "|---|---|" + "---:|" * len(columns),
    ]
    shown = None
    for (nb, stage), row in frame.iterrows():
        cells = [_cell(row[c], c) for c in columns]
        bold = stage == "total"
        name = f"**{stage}**" if bold else stage
        notebook = "" if nb == shown else _notebook_link(nb, site)  # on its first row only
        shown = nb
        lines.append(f"| {notebook} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _notebook_link(stem: str, site: Path) -> str:
    """A link to the notebook's page, when the site (the page's folder) has it."""
    page = site / "notebooks" / f"{stem}.ipynb"
    return f"[{stem}](notebooks/{stem}.ipynb)" if page.is_file() else stem


def _about(record: dict[str, Any], lead: str = "The notebooks this site shows") -> str:
    ident, machine = record["identity"], record["machine"]
    size = ident.get("size", "smoke" if ident.get("smoke") else "reference")  # older records
    run = "the reference parameters" if size == "reference" else f"{size}-size parameters"
    load = ident.get("load_average_before", [float("nan")])[0]
    after = ident.get("load_average_after", [float("nan")])[0]
    return (
        f"{lead} ran on {run}, executed by "
        f"{ident.get('executor', 'papermill')} on {machine['cpu']} "
        f"({ident.get('cpus', '?')} CPUs, load average {load:.1f} when the run started "
        f"and {after:.1f} when it ended; on a shared machine the absolute times are "
        "upper bounds)." + _e5_line(ident) + "\n\n"
    )


def _e5_line(ident: dict[str, Any]) -> str:
    """Which binary computed the exact e5 engine's vectors, when the record says."""
    binary = ident.get("e5_binary")
    return f" The exact e5 engine's vectors were computed by {binary}." if binary else ""


def _streamed_driver(v: dict[str, Any]) -> str:
    """The cost section's words on the streamed driver's memory (a BEIR corpus), from
    the record's streamed sizes; nothing when the record has none."""
    if "driver_streamed_b_per_passage" not in v:
        return ""
    sizes = [
        f"{v[f'driver_streamed_{i}_documents']:,d} documents ("
        f"{v[f'driver_streamed_{i}_passages']:,d} passages): "
        f"{v[f'driver_streamed_{i}_held_b_per_passage']:,.0f} B held when Ray receives "
        f"the locators, {v[f'driver_streamed_{i}_peak_b_per_passage']:,.0f} B at the peak"
        for i in range(int(v["driver_streamed_sizes"]))
    ]
    return (
        " streamed, as `hierret embed --engine ray` embeds a BEIR corpus (the driver keeps "
        "each passage's key and where it is, the workers read and chunk the texts), a "
        f"passage costs the driver {'; '.join(sizes)}. The tables take the streamed "
        f"driver at {v['driver_streamed_b_per_passage']:,.0f} B a passage plus "
        f"{v['driver_streamed_fixed_b'] / 2**20:,.1f} MiB, a bound from above fitted to "
        "those sizes (each stage's peak against the passages; the steepest slope and the "
        "largest fixed part), where the texts held in the driver would take "
        f"{v['msmarco_driver_gb_in_driver']:,.1f} GB for MS MARCO;"
    )


def page(
    record: dict[str, Any] | None,
    figure_dir: Path,
    cold: dict[str, Any] | None = None,
    scale: dict[str, Any] | None = None,
) -> str:
    """The page's Markdown (with the first run's record ``cold`` and the cost model's
    record ``scale``, when there are); the figures are saved in ``figure_dir``."""
    text = TITLE + (
        "Each notebook's wall time, cut into the stages the package times itself "
        "(`hierret.publish.timing`): loading a corpus, loading models, cutting the corpus into "
        "sections and passages, embedding with each encoder, embedding again in a fresh "
        "process (run-to-run variation), building indexes, ranking, reranking, judging "
        "the rankings, the statistics and rendering figures. A stage run inside another (a "
        "query embedded while ranking) counts for the inner one only; *other* is the "
        "rest: starting the kernel, imports, tables and the notebook's own code. For "
        "each encoder the table counts the texts sent to the model (*embedded*) and "
        "those read from the vector cache (*cached*); for late chunking (`embed <model> "
        "late`) the token windows it encoded.\n\n"
    )
    if record is None:
        return (
            text
            + (
                "This build has no timing record: its notebooks were executed "
                "before runs recorded their timings. `nox -s reproduce` (or `nox -s "
                "docs -- --smoke`) executes them again and writes one.\n"
            )
            + _cold(cold, figure_dir)
            + _scale(scale)
        )
    return (
        text
        + "## The run behind these pages\n\n"
        + _section(record, figure_dir, "timing")
        + _cold(cold, figure_dir)
        + _scale(scale)
    )


def _section(record: dict[str, Any], figure_dir: Path, name: str, lead: str = "") -> str:
    save(timing_figure(record), figure_dir, f"{name}.png", show=False)
    return (
        (_about(record, lead) if lead else _about(record))
        + f"```{{figure}} figures/{name}.png\n:alt: Each notebook's wall time as a bar "
        "cut into stages.\n:width: 90%\n\nWall seconds of each notebook by stage.\n"
        "```\n\n" + _table(record, figure_dir.parent)
    )


def _cold(record: dict[str, Any] | None, figure_dir: Path) -> str:
    if record is None:
        return ""
    ident = record["identity"]
    return (
        "\n## The first run, on an empty cache\n\n"
        "What the first `nox -s reproduce` on a machine costs: every notebook on its "
        "reference parameters, starting with an empty vector cache, so that every "
        "text is embedded and every cost measured (the `timing_cold` record, written "
        f"by hierret {record['hierret_version']}; the cache held "
        f"{ident.get('cache_bytes_after', 0) / 2**20:,.0f} MiB afterwards)."
        + (f" {ident['note'][0].upper()}{ident['note'][1:]}." if ident.get("note") else "")
        + "\n\n"
        + _section(record, figure_dir, "timing-cold", lead="Its notebooks")
    )


SCALE_ENCODERS = {
    "minilm": "all-MiniLM-L6-v2 (fp32)",
    "minilm_int8": "MiniLM int8 (ONNX)",
    "e5_small": "e5-small (4-bit)",
    "wordllama": "WordLlama",
}
SCALE_CORPORA = {
    "msmarco": "MS MARCO passages",
    "beir": "BEIR, all 18 datasets (17 corpora)",
    "beir_public": "BEIR, the 14 public datasets (13 corpora)",
}


def _duration(hours: float) -> str:
    """``hours`` in the unit a reader compares: minutes, hours or days."""
    if hours < 1:
        return f"{hours * 60:,.0f} min"
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"


def _scale(record: dict[str, Any] | None) -> str:
    """The cost model of embedding at scale (the ``cost_model`` record), when there is one."""
    if record is None:
        return ""
    v, ident = record["values"], record["identity"]
    workers, measured = ident["workers"], ident["measured_workers"]
    eff, load = v["efficiency_minilm_int8"], ident.get("load_average") or [math.nan] * 2
    machines = ", ".join(f"{r} on {cpu}" for r, cpu in ident["throughputs_from"].items())
    text = (
        "\n## Embedding past one machine: the cost model\n\n"
        "What `hierret embed` would take on corpora this machine cannot hold, predicted by "
        "`hierret.study.scale.CostModel` (the `cost_model` record, written by "
        "`docs/cost_model.py` with hierret "
        f"{record['hierret_version']} on {record['machine']['cpu']}):\n\n"
        "*time = start-up + model load + texts / (workers × throughput × efficiency) + "
        "write*\n\n"
        f"- **start-up** {v['startup_s']:.1f} s: a local Ray cluster ({v['ray_init_s']:.1f} s) "
        f"and its actor pool (Ray's wall time for 2,000 texts of the hash encoder, "
        f"{v['ray_hash_2_s']:.1f} s with 2 actors, less the local engine's "
        f"{v.get('earlier_local_hash_s', v['local_hash_s']):.2f} s);\n"
        "- **model load**: each encoder loaded in a fresh process (table);\n"
        f"- **efficiency** {eff:.2f}: {v['texts_measured']} SciFact abstracts embedded by one "
        "MiniLM int8 worker process (one thread) alone, then by two at once, each keeping "
        f"{eff:.0%} of its pace, in CPU seconds (the hash encoder, which does no arithmetic "
        f"to speak of: {v['efficiency_hash']:.2f}). In wall time each kept "
        f"{v['efficiency_minilm_int8_wall']:.0%} (hash: {v['efficiency_hash_wall']:.0%}), "
        "which measures the machine's load as much as the workers: it is shared (load "
        f"average {load[0]:.1f} when the measurements began, {load[1]:.1f} when they ended), "
        "and other people's work takes wall time from a worker, not CPU time. Measured at "
        f"{' and '.join(map(str, measured))} workers, all this machine's cores allow; "
        "assumed to hold beyond (the columns marked †), which nothing here measured: "
        "more workers are an optimistic bound;\n"
        "- **throughput**: each encoder's passages per second in the `bench` and `dr002` "
        f"records ({machines}), lowest and highest, measured with all {v['cores']} cores "
        "of the machine: one worker's is that rate / (cores × efficiency), so that the "
        "model gives the record's own rate at 2 workers;\n"
        f"- **write** {v['write_s_per_text'] * 1e6:.0f} µs a vector: the driver, the cache's "
        "only writer, storing vectors of dimension 384 (it does not shrink with workers);\n"
        f"- **driver memory** {v['driver_peak_b_per_passage']:,.0f} B a passage at the "
        f"driver's peak (chunking the corpus), {v['driver_held_b_per_passage']:,.0f} B when "
        "Ray receives the texts, with the texts in the driver "
        "(`tests/benchmarks/driver_memory.py` on SciFact);" + _streamed_driver(v) + " the "
        "tables' *driver GB* is one job's peak; `--shard i/n` splits it over n jobs;\n"
        f"- **texts are passages**: SciFact's {v['scifact_documents']:,d} documents make "
        f"{v['scifact_passages']:,d} passages ({v['passages_per_document']:.2f} a document, "
        "measured); the BEIR corpora, counted in documents, are taken at SciFact's rate "
        "(assumed), MS MARCO's passages at one each (assumed).\n\n"
        "| encoder | load s | records' passages/s | one worker's passages/s | "
        "dimension | bytes a vector |\n|---|---:|---:|---:|---:|---:|\n"
    )
    for enc, label in SCALE_ENCODERS.items():
        text += (
            f"| {label} | {v[f'{enc}_load_s']:.1f} | {v[f'{enc}_pps_low']:,.1f}–"
            f"{v[f'{enc}_pps_high']:,.1f} | {v[f'{enc}_worker_pps_slow']:,.1f}–"
            f"{v[f'{enc}_worker_pps_fast']:,.1f} | {v[f'{enc}_dimension']} | "
            f"{v[f'{enc}_record_bytes']:,d} |\n"
        )
    text += (
        "\nPredicted wall time, fastest–slowest (the records' highest and lowest rates), "
        "the vectors' size in the cache and the driver's peak memory, one table per corpus; "
        "corpus sizes from the BEIR paper's Table 1 (`data/scale/beir-corpora.json`; "
        "BioASQ, Signal-1M, TREC-NEWS and Robust04 are not public), each corpus counted "
        f"once ({v['beir_corpora_counted']} of the 18: Climate-FEVER searches FEVER's "
        "Wikipedia). † efficiency assumed, not measured. A GPU is not measured (none on "
        "this machine): no GPU row.\n"
    )
    head = " | ".join(f"{w} worker{'s' * (w > 1)}{'' if w in measured else ' †'}" for w in workers)
    for corpus, name in SCALE_CORPORA.items():
        docs = v[f"{corpus}_documents"]
        text += (
            f"\n**{name}** ({v[f'{corpus}_texts']:,d} texts, from {docs:,d} documents):\n\n"
            f"| encoder | {head} | vectors GB | driver GB |\n|---|"
            + "---:|" * (len(workers) + 2)
            + "\n"
        )
        for enc, label in SCALE_ENCODERS.items():
            cells = [
                f"{_duration(v[f'{enc}_{corpus}_{w}w_fast_h'])}–"
                f"{_duration(v[f'{enc}_{corpus}_{w}w_slow_h'])}"
                for w in workers
            ]
            text += (
                f"| {label} | "
                + " | ".join(cells)
                + f" | {v[f'{enc}_{corpus}_gb']:,.1f} | {v[f'{corpus}_driver_gb']:,.1f} |\n"
            )
    ratio = v["ray_over_local_minilm_int8"]
    local_int8 = v.get("earlier_local_minilm_int8_s", v["local_minilm_int8_s"])
    if not v.get("ray_measured", 1):
        text += f"\nRay's terms are not from this measurement: {ident['ray']}.\n"
    text += (
        f"\nRay against the local engine on this machine: 512 abstracts with MiniLM int8 "
        f"took {v['ray_minilm_int8_2_s']:.1f} s on 2 Ray actors (one thread each, the "
        f"cluster already up) and {local_int8:.1f} s on the local engine (one "
        f"process, two threads), Ray {ratio:.2f}× the local time. The same two cores do the "
        "arithmetic either way; Ray adds its actor pool, each actor's model load and the "
        "transfer of every partition"
        + (
            ", which is why it is slower here.\n"
            if ratio >= 1
            else (
                ", and still came out faster here, probably because on a loaded machine two "
                "single-threaded processes lose less to other people's work than one process "
                "whose two threads wait for each other at every operation.\n"
            )
        )
    )
    text += "\nMeasured here:\n\n" + "".join(f"- {m}\n" for m in ident["measured"])
    text += "\nAssumed:\n\n" + "".join(f"- {a}\n" for a in ident["assumed"])
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--record", required=True, type=Path, help="timing.json of the run")
    ap.add_argument("--out", required=True, type=Path, help="the page to write (.md)")
    ap.add_argument(
        "--cold",
        type=Path,
        default=ROOT / "data" / "results" / "timing-cold.json",
        help="the timing_cold record of a first run (default: the committed one)",
    )
    ap.add_argument(
        "--cost-model",
        type=Path,
        default=ROOT / "data" / "results" / "cost-model.json",
        help="the cost_model record (default: the committed one; docs/cost_model.py)",
    )
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")  # a file, not a kernel's inline display
    record, cold, scale = (
        json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        for path in (args.record, args.cold, args.cost_model)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page(record, args.out.parent / "figures", cold, scale), encoding="utf-8")
    print(f"[timing] {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
