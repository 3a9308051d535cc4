"""Execute the notebooks of `notebooks/` with papermill into a Sphinx source folder.

Used by the nox sessions; usable alone:

    python docs/execute.py --out build/site/src/notebooks [--size class | --smoke]
        [--results data/results]
        [--only 01_structure] [--nbval] [-p NAME VALUE ...]

Each notebook runs with its working directory set to the output folder, so
paths in the published notebooks stay relative. Figures are saved under
`figures/` beside the executed notebooks; result records go to --results.

With --nbval (the test session) papermill only writes each notebook with its
parameters injected, and pytest's nbval plugin executes it there, every cell a
test that fails on an error; the outputs nbval received are written back into
the notebook, so the one execution both checks the notebooks and gives the site
its pages. Without it papermill executes them.

--size runs every notebook at that size (its parameter ``size``: smoke, class or
reference, the default; hierret.study.sizes says what each changes); --smoke is
--size smoke. Either way the package times its own stages in each kernel
(hierret.publish.timing: load, chunk, embed per encoder, index, rank, statistics,
figures...) and counts the texts each encoder embedded or read from the vector
cache; the `timing` record of the run (each notebook's wall time, stages and counts,
with the machine's description, its load, the vector cache's size before and
after, when the run started and the commit it ran, which the site's banner names)
is written beside the executed notebooks as `timing.json` (at reference size;
`timing-class.json`, `timing-smoke.json` at the others), and to --results as well
when given. A run of every notebook that starts with an empty vector cache is also
written as the size's cold record (`timing-cold.json`, `timing-class-cold.json`...):
what a first run costs. Each notebook's head shows these records' times
(hierret.publish.timing.run_times).

Nothing runs unless --out (and --results, when given) is a folder that can be
written or created (not a file, not inside one), every --only names a notebook,
every -p names a parameter of some notebook run, and each value has the type that
parameter's default has in every notebook declaring it (hierret.study.params); each
notebook then checks its parameters in its own first cells too.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
import pytest

from hierret import VectorCache
from hierret.publish.site_build import (
    TIMING_ENV,
    Timings,
    read_timing,
    timing_name,
    timing_values,
    write_results,
)
from hierret.study.site_build import (
    NOTEBOOK_ENV,
    SIZES,
    ParameterError,
    check_parameters,
    notebook_parameters,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "examples" / "handbook"
#: DR-001 and DR-004 on the repository's example folder, for the site's page "Your own
#: documents": output name to (notebook, its changed parameters, the page's title). They
#: run with every full run (no --only, no -p), write no record and save no figure file:
#: the reference run's stay as they are.
EXAMPLES: dict[str, tuple[str, dict[str, object], str]] = {
    "own-dr001": (
        "02_dr001_chunking",
        {"corpus": EXAMPLE, "beir": None},
        "DR-001 on your own documents: the example folder",
    ),
    "own-dr004": (
        "05_dr004_hierarchy",
        {"corpora": [EXAMPLE], "weight_sweep_corpus": EXAMPLE},
        "DR-004 on your own documents: the example folder",
    ),
}
_LIST_HINT = """ (give a list or dict as a Python literal: -p {name} "['a', 'b']")"""
#: Seconds a kernel may take to start, and nbval to wait for a cell's outputs after its
#: reply: guards against a hung kernel only (papermill's and nbval's defaults, 60 s and 5 s,
#: are reached on a machine that other work keeps busy, with no defect in a notebook). No
#: cell has a time limit (papermill's default; nbval's is 2,000 s, kept).
KERNEL_WAIT_S = 600


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class NbvalOutputs:
    """pytest plugin: nbval's outputs of each cell written back into its notebook file.

    Also points ``$HIERRET_TIMING`` at ``timing_dir/<stem>.json`` before each
    notebook's kernel starts, and keeps each notebook's wall time (kernel start
    to kernel stop) in :attr:`wall`.
    """

    def __init__(self, timing_dir: Path, kernel: str) -> None:
        self.timing_dir, self.kernel = timing_dir, kernel
        self.wall: dict[str, float] = {}
        self._start: dict[str, float] = {}
        self._count: dict[str, int] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> None:  # before the kernel starts
        stem = Path(item.parent.path).stem
        if hasattr(item, "output_timeout"):  # nbval's wait for a cell's outputs, fixed at 5 s
            item.output_timeout = KERNEL_WAIT_S
        if stem not in self._start:
            os.environ[TIMING_ENV] = str(self.timing_dir / f"{stem}.json")
            # nbval's kernel keeps no input history: check_notebook reads the file instead
            os.environ[NOTEBOOK_ENV] = str(item.parent.path)
            self._start[stem], self._count[stem] = time.perf_counter(), 0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: Any) -> Iterator[None]:
        try:
            yield
        finally:
            outputs = getattr(item, "test_outputs", None)
            if outputs is not None:  # None: the cell was skipped
                stem = Path(item.parent.path).stem
                self._count[stem] += 1
                item.cell.outputs, item.cell.execution_count = outputs, self._count[stem]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any) -> Iterator[None]:
        try:
            yield  # the notebook's kernel stops in the teardown after its last cell
        finally:
            if nextitem is None or nextitem.parent is not item.parent:
                self._write(item)

    def _write(self, item: Any) -> None:
        stem = Path(item.parent.path).stem
        self.wall[stem] = time.perf_counter() - self._start[stem]
        # the notebook keeps the kernel it names (python3, which every Jupyter has), not the
        # one it ran on here: a reader who downloads it from the site can run it as it is
        nbformat.write(item.parent.nb, str(item.parent.path))


@contextmanager
def _restored(value: str | None) -> Iterator[None]:
    """``$HIERRET_TIMING`` as it was before the block (each kernel is given its own), and
    ``$HIERRET_NOTEBOOK`` unset (it names the notebook each kernel runs)."""
    try:
        yield
    finally:
        os.environ.pop(NOTEBOOK_ENV, None)
        if value is None:
            os.environ.pop(TIMING_ENV, None)
        else:
            os.environ[TIMING_ENV] = value


def _run_nbval(paths: list[Path], kernel: str, timing_dir: Path) -> tuple[int, dict[str, float]]:
    plugin = NbvalOutputs(timing_dir, kernel)
    with _restored(os.environ.get(TIMING_ENV)):
        code = pytest.main(
            [
                *map(str, paths),
                "--nbval-lax",
                "--nbval-kernel-name",
                kernel,
                "--nbval-kernel-startup-timeout",
                str(KERNEL_WAIT_S),
                "-p",
                "no:cacheprovider",
                "-c",
                str(ROOT / "pyproject.toml"),
                "--rootdir",
                str(ROOT),
            ],
            plugins=[plugin],
        )
    return int(code), plugin.wall


def _git(*args: str) -> str:
    """What ``git args`` prints in the checkout, stripped (raises when git fails)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


def _commit() -> str | None:
    """The checkout's commit (short hash), ``+`` when it has uncommitted changes; ``None``
    outside a git checkout (a source archive): the site's banner names the run by it."""
    try:
        head = _git("rev-parse", "--short=10", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+" if dirty else "")


def _e5_binary() -> str | None:
    """Which binary the exact e5 engine runs on this machine (a machine fact)."""
    try:
        from hierret.encoders import load_encoder

        return str(load_encoder("e5-small", show_progress=False).binary)
    except (ImportError, RuntimeError, OSError, AttributeError):
        return None


def _cache_bytes() -> int:
    """Bytes in the vector cache folder the kernels use (0: none yet, a cold run)."""
    root = VectorCache().root  # the default cache folder; nothing is created
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0


def _write_timing(
    runs: dict[str, tuple[float, Timings]],
    identity: dict[str, Any],
    out: Path,
    results: Path | None = None,
) -> None:
    """Write the run's timing record: as `timing` beside the executed notebooks (the
    site's timing page and banner read it), and in ``results`` under its size's name
    (`timing`, `timing_class`, `timing_smoke`). A run of every notebook that started
    on an empty cache is also its size's cold record (`timing_cold`, timing-cold.json:
    the first-run cost the README quotes; `timing_class_cold`...), beside the notebooks
    at reference size only (the site's first-run section is the reference's)."""
    values, layout = timing_values(runs)
    size, cold = str(identity["size"]), identity["cache_bytes_before"] == 0 and len(runs) > 1
    plan = [(out, "timing")] + [(out, "timing_cold")] * (cold and size == "reference")
    if results is not None:
        plan.append((results, timing_name(size, cold=False)))
        plan += [(results, timing_name(size, cold=True))] * cold
    for folder, name in plan:
        path = write_results(  # every value of a timing record is a machine fact
            folder / f"{name.replace('_', '-')}.json",
            name,
            values,
            {**layout, **identity},
            facts=values,
        )
        print(f"[execute] {name} record: {path}", flush=True)


def _absolute(value: object) -> object:
    """A relative path that exists here, made absolute: each kernel runs in --out."""
    if isinstance(value, list):
        return [_absolute(v) for v in value]
    if isinstance(value, str) and value and not Path(value).is_absolute() and Path(value).exists():
        return str(Path(value).resolve())
    return value


def _check_as_notebook(path: Path, given: dict[str, object]) -> None:
    """Run the notebook's check cell (the one after its parameters cell) here, on
    its defaults and the values given, as papermill would inject them: every
    rule it declares fails before any kernel starts, with the notebook named."""
    cells = [c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
    i = next(n for n, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    source, check = cells[i].source, cells[i + 1].source
    if "check_notebook(" not in check and "Lesson.begin(" not in check:
        return  # a notebook that checks nothing (a Lesson checks as check_notebook does)
    injected = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items())
    namespace: dict[str, object] = {"In": ["", source, injected, check]}
    exec(source, namespace)  # the defaults (the parameters cell holds assignments only)
    namespace.update(given)
    try:
        exec(check, namespace)
    except ParameterError as err:
        raise ParameterError(f"{path.stem}: {err}") from None


def _relative(value: object, folder: Path) -> object:
    """A path of the repository as the kernel (running in ``folder``) reaches it: relative,
    so no machine path ends up in a published notebook."""
    if isinstance(value, list):
        return [_relative(v, folder) for v in value]
    return os.path.relpath(value, folder.resolve()) if isinstance(value, Path) else value


def _retitle(path: Path, title: str, stem: str) -> None:
    """Give an example run its own title: a first cell names it and what it reruns; the
    notebook's own title becomes a section (one H1 a page)."""
    notebook = nbformat.read(str(path), as_version=4)
    first = notebook.cells[0]
    first.source = "#" + first.source if first.source.startswith("# ") else first.source
    intro = (
        f"# {title}\n\nThe notebook `notebooks/{stem}.ipynb`, run by the site build on the "
        "repository's example folder `data/examples/handbook` (see *Your own documents*). "
        "Everything below is that notebook, unchanged; its last section compares this run "
        "with the published record."
    )
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(intro))
    nbformat.write(notebook, str(path))


def _output_folder(path: Path, what: str) -> str | None:
    """Why ``path`` cannot be the folder ``what`` is written to (``None`` when it can):
    checked before anything runs (nothing is made), so a run of hours does not end on a
    traceback where it writes."""
    shown = f"{what} {path}"
    for parent in [path, *path.parents]:  # the first part of the path that exists
        if parent.exists() or parent.is_symlink():
            break
    if parent.is_symlink() and not parent.exists():
        return f"{shown}: {parent} is a symbolic link to nothing; give a folder"
    if not parent.is_dir():
        where = "is" if parent == path else f"is inside {parent}, which is"
        return (
            f"{shown} {where} a file, not a folder: give a folder (created if needed), "
            "e.g. a new one beside that file"
        )
    try:  # a file made and removed where the first missing folder would be made
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as err:
        where = "" if parent == path else f" ({parent} cannot be written to make it)"
        return (
            f"{shown} cannot be written{where}: {err.strerror or err}; give a folder you may "
            "write to"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="docs/execute.py", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--out", required=True, type=Path, help="folder for executed notebooks")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument(
        "--size",
        choices=SIZES,
        default="reference",
        help="run size of every notebook (hierret.study.sizes): smoke, class or reference",
    )
    ap.add_argument("--smoke", action="store_true", help="the same as --size smoke")
    ap.add_argument("--results", type=Path, help="folder for the result records (JSON)")
    ap.add_argument("--only", action="append", default=[], help="notebook stem(s) to run")
    ap.add_argument(
        "--nbval",
        action="store_true",
        help="execute under pytest's nbval, every cell a test (the test session)",
    )
    ap.add_argument(
        "-p",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override a parameter of every notebook that has it",
    )
    args = ap.parse_args(argv)
    args.size = "smoke" if args.smoke else args.size
    for path, what in ((args.out, "--out"), (args.results, "--results")):
        problem = _output_folder(path, what) if path is not None else None
        if problem:
            ap.error(problem)
    figures = args.out / "figures"  # each notebook's figures_dir, relative to --out
    if figures.exists() and not figures.is_dir():
        ap.error(f"{figures} is a file: the notebooks save their figures in a folder of that name")
    for name, value in args.p:  # -p figures_dir / results_dir: folders too, relative to --out
        if name.endswith("_dir") and value not in ("None", ""):
            parsed = _value(value)
            folder = Path(parsed if isinstance(parsed, str) else value).expanduser()
            problem = _output_folder(args.out / folder, f"-p {name}")
            if problem:
                ap.error(problem)

    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    stems = [nb.stem for nb in notebooks]
    for stem in args.only:
        if stem not in stems:
            close = difflib.get_close_matches(stem, stems, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            ap.error(
                f"--only {stem!r}: no such notebook{hint}; the notebooks are: {', '.join(stems)}"
            )
    if args.only:
        notebooks = [nb for nb in notebooks if nb.stem in args.only]
    declared = {nb: notebook_parameters(nb) for nb in notebooks}
    overrides = {k: _absolute(_value(v)) for k, v in args.p}
    known = {k: None for defaults in declared.values() for k in defaults}  # names only here
    where = notebooks[0].stem if len(notebooks) == 1 else "the notebooks run"
    try:  # every -p is checked before any notebook runs: a name some notebook declares,
        check_parameters(overrides, known, where=where, list_hint=_LIST_HINT)
        for nb, defaults in declared.items():  # a value each notebook declaring it takes
            given = {k: v for k, v in overrides.items() if k in defaults}
            typed = {k: v for k, v in given.items() if v is not None}  # None: the notebook's say
            check_parameters(typed, defaults, where=nb.stem, list_hint=_LIST_HINT)
            _check_as_notebook(nb, given)  # and its own check, as its kernel would run it:
    except ParameterError as err:  # its choices, and the rules between its parameters
        ap.error(str(err))

    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars are for people, not for pages
    load, before = os.getloadavg(), os.environ.get(TIMING_ENV)
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    commit = _commit()  # the code the run starts from (a commit made meanwhile is not it)
    cache_before = _cache_bytes()
    code, wall = 0, {}
    plan = [(nb, nb.stem) for nb in notebooks]
    examples = {} if args.only or overrides else EXAMPLES  # a full run shows them too
    plan += [(ROOT / "notebooks" / f"{nb}.ipynb", name) for name, (nb, _, _) in examples.items()]
    with tempfile.TemporaryDirectory(prefix="hierret-timing-") as tmp, _restored(before):
        timing_dir = Path(tmp)
        for nb, name in plan:
            params: dict[str, object] = {"size": args.size, "figures_dir": "figures"}
            if args.results:
                params["results_dir"] = os.path.relpath(args.results.resolve(), args.out.resolve())
            params.update(overrides)
            if name in examples:  # no record, no figure file: the reference run's stand
                params |= {"figures_dir": None, "results_dir": None}
                params |= {k: _relative(v, args.out) for k, v in examples[name][1].items()}
            params = {k: v for k, v in params.items() if k in notebook_parameters(nb)}
            print(f"[execute] {name} {params}", flush=True)
            os.environ[TIMING_ENV] = str(timing_dir / f"{name}.json")
            start = time.perf_counter()
            pm.execute_notebook(
                str(nb),
                str(args.out / f"{name}.ipynb"),
                parameters=params,
                kernel_name=args.kernel,
                start_timeout=KERNEL_WAIT_S,
                # nbclient waits 4 s for a cell's output messages, and papermill makes that
                # wait's end an error: on a loaded machine a cell's last output can come
                # later (a reproduce failed so at load 7, its cell done and correct)
                iopub_timeout=KERNEL_WAIT_S,
                cwd=str(args.out),
                progress_bar=False,
                log_output=False,
                prepare_only=args.nbval,
            )
            wall[name] = time.perf_counter() - start
            if name in examples:
                _retitle(args.out / f"{name}.ipynb", examples[name][2], nb.stem)
        if args.nbval:
            code, wall = _run_nbval(
                [args.out / f"{name}.ipynb" for _, name in plan], args.kernel, timing_dir
            )
        runs = {  # the timing record is the studies' (the examples are the page's)
            stem: (seconds, read_timing(timing_dir / f"{stem}.json"))
            for stem, seconds in wall.items()
            if stem not in examples
        }
    identity = {
        "size": args.size,
        "parameters": overrides,
        "started": started,  # the site's banner: which run built its pages, when, from what
        "commit": commit,
        "kernel": args.kernel,
        "executor": "nbval" if args.nbval else "papermill",
        "cpus": os.cpu_count(),
        "load_average_before": load,
        "load_average_after": os.getloadavg(),
        "cache_bytes_before": cache_before,  # 0: every vector was computed in this run
        "cache_bytes_after": _cache_bytes(),
        "e5_binary": _e5_binary(),  # the fast build where checked here, else the IEEE one
    }
    _write_timing(runs, identity, args.out, args.results)
    return code


if __name__ == "__main__":
    sys.exit(main())
