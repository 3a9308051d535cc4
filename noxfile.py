"""Sessions: tests, reproduce, docs, site_check, lint.

    nox -s tests        ruff, mypy, unit tests and doctests; then each notebook executed
                        once on smoke parameters, under nbval (every cell a test) and
                        into the smoke site, which is built from those very runs with -W
    nox -s reproduce    every notebook on its reference parameters (papermill),
                        the result records, the DECISIONS.md check, the site
    nox -s docs         rebuild the site from the last `reproduce` run
                        (`nox -s docs -- --smoke` executes smoke runs first,
                        `-- --size class` class-size runs: a class's site)
    nox -s site_check   the docs build, then every page checked in headless Chromium
                        (`-- --smoke` as for docs)
    nox -s lint         ruff (lint and format check) and mypy on the package
    nox -s bench        speed against the peers (not part of the tests)
    nox -s warm         every vector a reproduce embeds, embedded ahead (`-- -- --engine
                        ray --address HOST:6379`: on a Ray cluster); docs/warm.py
    nox -s variations   every notebook with one parameter changed, on smoke sizes
    nox -s sizes        every notebook at class size, then its exercises, timed
                        (`-- --record`: the times the notebooks show, to data/results;
                        `-- --size smoke` the smoke size's)

Data sets that cannot be downloaded are found through HIERRET_DATA; when it is
unset and a `shared/datasets` folder lies beside the checkout (as on the
project's machines), that folder is used.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
BUILD = ROOT / "build"
PYTHON = "3.11"
TORCH = "torch==2.13.0"  # the CPU build; install it first so nothing pulls a CUDA build
KERNEL = "hierret"
LINTED = ("src", "tests", "noxfile.py", "docs", "notebooks")
#: What a session that builds the site installs. Ray too: the bad-input page runs
#: `hierret embed --engine ray` against a Ray that fails to start or to join, and
#: without Ray installed those cases meet "Ray is not installed" instead, so the page
#: (and its check) would differ from the one the tests session builds.
SITE_EXTRAS = "notebooks,docs,models,ray"


def _env() -> dict[str, str]:
    env = {
        "PYTHONHASHSEED": "0",
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    shared = ROOT.parent / "shared" / "datasets"
    if "HIERRET_DATA" not in os.environ and shared.is_dir():
        env["HIERRET_DATA"] = str(shared)
    return env


def _install(session: nox.Session, extras: str) -> None:
    """PyTorch's CPU build, the package with ``extras``, and (with the notebooks extra,
    which holds ipykernel) the project's kernel."""
    session.install(TORCH)
    session.install("-e", f".[{extras}]")
    if "notebooks" not in extras.split(","):  # nothing here runs a notebook
        return
    session.run(
        "python",
        "-m",
        "ipykernel",
        "install",
        "--sys-prefix",
        "--name",
        KERNEL,
        "--display-name",
        "Python (hierret)",
        silent=True,
    )


def _assemble(site: Path, keep_notebooks: bool = False) -> Path:
    """Copy docs/ and DECISIONS.md into a fresh Sphinx source folder."""
    src = site / "src"
    if src.exists():
        for entry in src.iterdir():
            if not (keep_notebooks and entry.name == "notebooks"):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    shutil.copytree(ROOT / "docs", src, dirs_exist_ok=True)
    _copy_decisions(src)
    return src


def _copy_decisions(src: Path) -> None:
    (src / "_include").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "DECISIONS.md", src / "_include" / "DECISIONS.md")


def _execute(session: nox.Session, src: Path, *args: str) -> None:
    session.run(
        "python",
        "docs/execute.py",
        "--out",
        str(src / "notebooks"),
        "--kernel",
        KERNEL,
        *args,
        env=_env(),
    )


def _sphinx(session: nox.Session, site: Path) -> Path:
    session.run(
        "python",
        "docs/bad_input.py",
        "--check",
        "--out",
        str(site / "src" / "bad-input.md"),
        env=_env(),
    )
    session.run(
        "python",
        "docs/timing_page.py",
        "--record",
        str(site / "src" / "notebooks" / "timing.json"),
        "--out",
        str(site / "src" / "timing.md"),
        env=_env(),
    )
    session.run("python", "docs/bench_page.py", "--out", str(site / "src" / "bench.md"), env=_env())
    html = site / "html"
    session.run(
        "sphinx-build",
        "-W",
        "--keep-going",
        "-q",
        "-b",
        "html",
        str(site / "src"),
        str(html),
        env=_env(),
    )
    index = html / "index.html"
    session.log(f"The site is at {index}  (open file://{index.resolve()})")
    return index


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Lint, unit tests and doctests, then the smoke notebooks and the smoke site (-W).

    Each notebook runs once: `docs/execute.py --smoke --nbval` injects the smoke
    parameters (papermill) into the site's notebooks folder and executes them there
    under nbval, every cell a test; the outputs nbval received are the site's pages
    and its timing record. `nox -s tests -- ARGS` passes ARGS to the unit tests' pytest.
    """
    _install(session, "test,notebooks,docs,models,lint,ray")  # ray: its tests run too
    session.run("ruff", "check", *LINTED)
    # two worker processes (mypy's -n, experimental in mypy 2): a clean clone has no cache,
    # and one process took 88 s of CPU; same verdict (`nox -s lint` runs it in one process)
    session.run("mypy", "-n", "2", "src/hierret")
    session.run(
        "pytest",
        "tests",
        "src/hierret",
        "-p",
        "no:cacheprovider",
        # on every core (pytest-xdist): a test file is one unit of work, the Ray files one
        # together, the long ones handed out first (tests/conftest.py); `nox -s tests --
        # -n 0` runs them in this process
        "-n",
        "auto",
        "--dist",
        "loadgroup",
        "--no-loadscope-reorder",
        "--durations=15",  # the slowest tests, so the command's time can be kept in check
        *session.posargs,
        env={**_env(), "HIERRET_SMOKE": "1"},
    )
    site = BUILD / "smoke-site"
    src = _assemble(site)
    _execute(session, src, "--smoke", "--nbval")
    _sphinx(session, site)


@nox.session(python=PYTHON)
def reproduce(session: nox.Session) -> None:
    """Run every notebook on its reference parameters, check DECISIONS.md, build the site.

    The run's result records go to build/site/results. Its findings must equal
    the published ones; machine facts (times, costs) are the reference
    machine's, kept in data/results, and the site shows this run's beside
    them. `nox -s reproduce -- --update-decisions` adopts the run as the new
    reference instead: its records replace data/results and the marked
    numbers in DECISIONS.md and README.md are rewritten from them (add
    `--keep-reference-facts` to adopt its findings only, keeping the reference
    machine's times and costs).
    """
    _install(session, SITE_EXTRAS)
    site = BUILD / "site"
    src = _assemble(site)
    results = site / "results"
    if results.exists():
        shutil.rmtree(results)
    _execute(session, src, "--results", str(results))
    update = ["--update"] if "--update-decisions" in session.posargs else []
    update += (
        ["--keep-reference-facts"] if update and "--keep-reference-facts" in session.posargs else []
    )
    check = ["python", "docs/check_decisions.py", "--results", str(results)]
    session.run(*check, *update, env=_env())
    _copy_decisions(src)
    session.run(*check, "--site-copy", str(src / "_include" / "DECISIONS.md"), env=_env())
    _sphinx(session, site)


def _run_size(posargs: list[str]) -> str:
    """The run size a `docs` session builds: `-- --smoke`, `-- --size class`, else reference."""
    if "--smoke" in posargs:
        return "smoke"
    if "--size" in posargs:
        i = posargs.index("--size")
        if i + 1 >= len(posargs) or posargs[i + 1] not in ("smoke", "class", "reference"):
            raise ValueError("--size takes smoke, class or reference: e.g. -- --size class")
        return posargs[i + 1]
    return "reference"


def _build_docs(session: nox.Session) -> Path:
    """The `docs` session's build: the last reproduce run, or runs of the size asked for
    (`-- --smoke`, `-- --size class`: executed first, into build/<size>-site)."""
    size = _run_size(list(session.posargs))
    smoke = size != "reference"  # runs of their own, executed here
    site = BUILD / (f"{size}-site" if smoke else "site")
    if not smoke and not any((site / "src" / "notebooks").glob("*.ipynb")):  # before installing
        session.error(
            "No executed notebooks in build/site: run `nox -s reproduce` first, "
            f"or `nox -s {session.name} -- --smoke` for a quick build on smoke "
            f"parameters (`-- --size class` for the class size)."
        )
    _install(session, SITE_EXTRAS)
    src = _assemble(site, keep_notebooks=not smoke)
    if smoke:
        _execute(session, src, "--size", size)
    elif (site / "results").is_dir():  # the last reproduce's machine facts beside the reference's
        session.run(
            "python",
            "docs/check_decisions.py",
            "--results",
            str(site / "results"),
            "--site-copy",
            str(src / "_include" / "DECISIONS.md"),
            env=_env(),
        )
    return _sphinx(session, site)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the site from the last reproduce run (or runs of a size: `-- --smoke`,
    `-- --size class` for a class's site, about the time of a class-size run of every
    notebook)."""
    _build_docs(session)


@nox.session(python=PYTHON)
def site_check(session: nox.Session) -> None:
    """Build the site as `docs` does, then check every page in headless Chromium.

    docs/browser_check.py drives the machine's Chromium (Debian: `apt install
    chromium`; or set $CHROMIUM) over the DevTools protocol, standard library
    only, nothing downloaded, every page at 1280 and 390 px: console errors, images,
    sideways overflow, stderr blocks, local paths, internal links, figure text size,
    typographic quotes in code, and the question explorer (a question picked, its
    rankings shown). The report goes to
    build/<site>/browser-check.json. `nox -s site_check -- --smoke` builds from
    smoke runs first.
    """
    index = _build_docs(session)
    report = index.parent.parent / "browser-check.json"
    session.run("python", "docs/browser_check.py", str(index.parent), "--json", str(report))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format check) and mypy --strict on the package.

    The lint extra holds what mypy needs beyond the package's own dependencies (the
    stubs, and IPython, which the package imports only inside a notebook). The format
    check leaves the notebooks out (see [tool.ruff.format] in pyproject.toml).
    """
    session.install(TORCH)
    session.install("-e", ".[lint,test]")
    session.run("ruff", "check", *LINTED)
    session.run("mypy", "src/hierret")
    session.run("ruff", "format", "--check", *LINTED)


@nox.session(python=PYTHON)
def warm(session: nox.Session) -> None:
    """Fill the vector cache with every vector a run of the notebooks embeds (docs/warm.py).

    `nox -s warm -- [--size class|smoke] [--only NB] -- [hierret embed options]`: the
    options after the second `--` go to `hierret embed --plan` (`--engine ray
    --address HOST:6379 --actors 2-32` embeds on a Ray cluster). A `reproduce` that
    follows with the same cache embeds nothing.
    """
    _install(session, "notebooks,docs,models,ray")
    session.run("python", "docs/warm.py", *session.posargs, env=_env())


@nox.session(python=PYTHON)
def variations(session: nox.Session) -> None:
    """Every notebook with one parameter changed, on smoke sizes (docs/variations.py).

    Each change must run, or be refused before any kernel starts with a message naming
    the parameter; the matrix goes to build/variations/variations.md. About half an
    hour on two cores; `-- --only 05_dr004_hierarchy` runs one notebook's.
    """
    _install(session, "notebooks,models")
    out = ["--out", str(BUILD / "variations"), "--kernel", KERNEL]
    session.run("python", "docs/variations.py", *out, *session.posargs, env=_env())


@nox.session(python=PYTHON)
def sizes(session: nox.Session) -> None:
    """Every notebook at class size, then each notebook's exercises, timed (docs/sizes.py).

    The times each notebook's head and exercises show. Notebooks, records and the timing
    records go to build/sizes/; `-- --record` copies the timing records (timing_class,
    timing_class_cold after an empty vector cache, timing_exercises) to data/results/.
    `-- --size smoke` times the smoke size instead. About half an hour on two cores with
    an empty vector cache.
    """
    _install(session, "notebooks,models")
    args = ["--out", str(BUILD / "sizes"), "--kernel", KERNEL]
    if "--record" in session.posargs:
        args += ["--results", str(ROOT / "data" / "results")]
    args += [a for a in session.posargs if a != "--record"]
    session.run("python", "docs/sizes.py", *args, env=_env())


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Speed against the peers (not part of the tests), gathered into one result record.

    BM25, metrics, analyzer, dense search, chunker, the encoding path, the encoder
    backends and `hierret search` (tests/benchmarks/run_all.py). Each benchmark's JSON
    and the record `bench.json` go to build/bench/; `-- --record` writes the record to
    data/results/ instead, where the site's benchmark page reads it. Other arguments
    go to run_all.py (`-- --repeat 5`, `-- --note "two other jobs running"`).
    """
    _install(session, "test,models,bench")
    args = [a for a in session.posargs if a != "--record"]
    if "--record" in session.posargs:
        args += ["--results", str(ROOT / "data" / "results")]
    session.run(
        "python", "tests/benchmarks/run_all.py", "--out", str(BUILD / "bench"), *args, env=_env()
    )
