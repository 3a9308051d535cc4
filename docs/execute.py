"""Execute the notebooks of `notebooks/` with papermill into a Sphinx source folder.

Used by the nox sessions; usable alone:

    python docs/execute.py --out build/site/src/notebooks [--smoke] [--results data/results]
        [--only 01_structure] [-p NAME VALUE ...]

Each notebook runs with its working directory set to the output folder, so
paths in the published notebooks stay relative. Figures are saved under
`figures/` beside the executed notebooks; result records go to --results.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

import papermill as pm

ROOT = Path(__file__).resolve().parent.parent


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

    args.out.mkdir(parents=True, exist_ok=True)
    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    if args.only:
        notebooks = [nb for nb in notebooks if nb.stem in args.only]
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars are for people, not for pages
    for nb in notebooks:
        declared = pm.inspect_notebook(str(nb))
        params: dict[str, object] = {"smoke": args.smoke, "figures_dir": "figures"}
        if args.results:
            params["results_dir"] = os.path.relpath(args.results.resolve(), args.out.resolve())
        params.update({k: _value(v) for k, v in args.p})
        params = {k: v for k, v in params.items() if k in declared}
        print(f"[execute] {nb.name} {params}", flush=True)
        pm.execute_notebook(str(nb), str(args.out / nb.name), parameters=params,
                            kernel_name=args.kernel, cwd=str(args.out), progress_bar=False,
                            log_output=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
