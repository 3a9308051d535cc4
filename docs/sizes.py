"""A smaller run size, run and timed: every notebook at class (or smoke) size, then the exercises.

    python docs/sizes.py --out build/sizes [--size class|smoke] [--results data/results]
        [--kernel hierret] [--only 05_dr004_hierarchy] [--no-size-run]

First every notebook runs at the size through ``docs/execute.py --size SIZE``
(its records and notebooks go to ``--out``; its timing record, ``timing_class``,
and ``timing_class_cold`` when the vector cache was empty, are that size's row
in each notebook's table of sizes). Then, at class size, the exercises: a
notebook lists them in the metadata of its last cell (``exercises``: the
parameters each changes; the prose beside them gives the command). A student
runs the notebook at class size first, then an exercise, so each exercise runs
after that run in the same vector cache: its wall time is what the exercise
costs a class, new embeddings included. Each goes through ``docs/execute.py
--size class`` with its parameters, checked before any kernel starts, into its
own folder.

The exercises' times go into the ``timing_exercises`` record
(``timing-exercises.json``); every value is a machine fact.
:func:`hierret.publish.timing.run_times` shows each size's times in each
notebook's head, and :func:`~hierret.publish.timing.exercise_table` the exercises'
times in the cell under them. With
``--results`` the size's timing records (and the exercises') are copied there
too: ``nox -s sizes -- --record`` writes them to data/results, where the
notebooks read them. Start from an empty vector cache (``HIERRET_CACHE``) to
measure a first run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from hierret.publish.site_build import EXERCISES_RECORD, SIZE_RECORDS, exercises_of, write_results

ROOT = Path(__file__).resolve().parent.parent


def argv_of(changes: dict[str, Any]) -> list[str]:
    """``docs/execute.py``'s ``-p`` arguments for an exercise's parameters.

    Examples
    --------
    >>> argv_of({"chunk_chars": [600], "beir": None, "maxsim_reduce": "sum"})
    ['-p', 'chunk_chars', '[600]', '-p', 'beir', 'None', '-p', 'maxsim_reduce', 'sum']
    """
    out = []
    for name, value in changes.items():
        out += ["-p", name, value if isinstance(value, str) else repr(value)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--results", type=Path, help="folder to copy the timing records to")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--only", action="append", default=[], help="notebook stem(s)")
    ap.add_argument(
        "--no-size-run", action="store_true", help="the size's run is done (same cache)"
    )
    ap.add_argument("--size", choices=["class", "smoke"], default="class")
    args = ap.parse_args(argv)
    import execute  # docs/execute.py: run as a script, this folder is on sys.path

    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    notebooks = [nb for nb in notebooks if not args.only or nb.stem in args.only]
    values: dict[str, float] = {}
    listed: dict[str, list[dict[str, Any]]] = {}
    common = ["--kernel", args.kernel, "--size", args.size]
    runs = args.out / args.size
    if not args.no_size_run:  # what the students ran first
        only = [a for nb in notebooks for a in ("--only", nb.stem)] if args.only else []
        code = execute.main(["--out", str(runs), *common, *only, "--results", str(runs)])
        if code:
            return code
    load = os.getloadavg()  # the exercises' load, as the size runs record theirs
    for nb in notebooks if args.size == "class" else []:
        listed[nb.stem] = exercises_of(nb)
        for n, changes in enumerate(listed[nb.stem], 1):
            out = args.out / f"{nb.stem}-{n}"
            print(f"[sizes] {nb.stem} exercise {n}: {changes}", flush=True)
            start = time.perf_counter()
            code = execute.main(["--out", str(out), *common, "--only", nb.stem, *argv_of(changes)])
            if code:
                return code
            values[f"{nb.stem}_exercise_{n}_wall_s"] = round(time.perf_counter() - start, 1)
    identity = {
        "size": "class",
        "after": "a class-size run of the same notebook (its vectors cached)",
        "exercises": listed,
        "kernel": args.kernel,
        "cpus": os.cpu_count(),
        "load_average_before": load,
        "load_average_after": os.getloadavg(),
    }
    made = [runs / f for f in SIZE_RECORDS[args.size]]
    if listed:
        made.append(
            write_results(
                args.out / EXERCISES_RECORD,
                "timing_exercises",
                values,
                identity,
                facts=values,
            )
        )
    if args.results:
        for record in made:
            if record.is_file():
                shutil.copyfile(record, args.results / record.name)
                print(f"[sizes] {record.name} -> {args.results}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
