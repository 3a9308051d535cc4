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

from hierret.publish import figures, timing

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
    frame = timing.table(record)
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
        "upper bounds).\n\n"
    )


def page(
    record: dict[str, Any] | None, figure_dir: Path, cold: dict[str, Any] | None = None
) -> str:
    """The page's Markdown (with the first run's record ``cold``, when there is one);
    the figures are saved in ``figure_dir``."""
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
        )
    return (
        text
        + "## The run behind these pages\n\n"
        + _section(record, figure_dir, "timing")
        + _cold(cold, figure_dir)
    )


def _section(record: dict[str, Any], figure_dir: Path, name: str, lead: str = "") -> str:
    figures.save(timing.figure(record), figure_dir, f"{name}.png", show=False)
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
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")  # a file, not a kernel's inline display
    record, cold = (
        json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        for path in (args.record, args.cold)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page(record, args.out.parent / "figures", cold), encoding="utf-8")
    print(f"[timing] {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
