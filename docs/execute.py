"""Execute the notebooks of `notebooks/` with papermill into a Sphinx source folder.

Used by the nox sessions; usable alone:

    python docs/execute.py --out build/site/src/notebooks [--smoke] [--results data/results]
        [--only 01_structure] [-p NAME VALUE ...]

Each notebook runs with its working directory set to the output folder, so
paths in the published notebooks stay relative. Figures are saved under
`figures/` beside the executed notebooks; result records go to --results.

Nothing runs unless every --only names a notebook, every -p names a parameter
of some notebook run, and each value has the type that parameter's default has
in every notebook declaring it (hierret.params); each notebook then checks its
parameters in its own first cells too.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import sys
from pathlib import Path

import papermill as pm

from hierret.params import ParameterError, check_parameters, notebook_parameters

ROOT = Path(__file__).resolve().parent.parent
_LIST_HINT = """ (give a list or dict as a Python literal: -p {name} "['a', 'b']")"""


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="folder for executed notebooks")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--smoke", action="store_true", help="small, fast parameters")
    ap.add_argument("--results", type=Path, help="folder for the result records (JSON)")
    ap.add_argument("--only", action="append", default=[], help="notebook stem(s) to run")
    ap.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="override a parameter of every notebook that has it")
    args = ap.parse_args(argv)

    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    stems = [nb.stem for nb in notebooks]
    for stem in args.only:
        if stem not in stems:
            close = difflib.get_close_matches(stem, stems, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            ap.error(f"--only {stem!r}: no such notebook{hint}; the notebooks are: "
                     f"{', '.join(stems)}")
    if args.only:
        notebooks = [nb for nb in notebooks if nb.stem in args.only]
    declared = {nb: notebook_parameters(nb) for nb in notebooks}
    overrides = {k: _value(v) for k, v in args.p}
    known: dict[str, object] = {}  # each name with its default in the first notebook declaring it
    for defaults in declared.values():
        known.update({k: v for k, v in defaults.items() if k not in known})
    where = notebooks[0].stem if len(notebooks) == 1 else "the notebooks run"
    try:  # every -p is checked before any notebook runs: a name some notebook declares,
        check_parameters(overrides, known, where=where, list_hint=_LIST_HINT)
        for nb, defaults in declared.items():  # and a value each notebook declaring it takes
            check_parameters({k: v for k, v in overrides.items() if k in defaults}, defaults,
                             where=nb.stem, list_hint=_LIST_HINT)
    except ParameterError as err:
        ap.error(str(err))

    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars are for people, not for pages
    for nb in notebooks:
        params: dict[str, object] = {"smoke": args.smoke, "figures_dir": "figures"}
        if args.results:
            params["results_dir"] = os.path.relpath(args.results.resolve(), args.out.resolve())
        params.update(overrides)
        params = {k: v for k, v in params.items() if k in declared[nb]}
        print(f"[execute] {nb.name} {params}", flush=True)
        pm.execute_notebook(str(nb), str(args.out / nb.name), parameters=params,
                            kernel_name=args.kernel, cwd=str(args.out), progress_bar=False,
                            log_output=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
