"""Sphinx configuration: the hierret "method and evaluation" site.

The nox sessions copy this folder into build/<site>/src, execute the notebooks
into src/notebooks (papermill, or nbval in the test session), and build with
warnings as errors. myst-nb
renders the executed notebooks as they are (no re-execution).
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

import hierret

sys.path.insert(0, str(Path(__file__).parent))  # terms.py and reading.py, the extensions

project = "hierret"
author = "hierret developers"
copyright = "2026, hierret developers"
release = version = hierret.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "sphinx.ext.mathjax",
    "terms",
    "reading",
]

exclude_patterns = [
    "_build",
    "_include",
    "**.ipynb_checkpoints",
    "execute.py",
    "check_decisions.py",
    "notebooks/results",
    "bad_input.py",
    "bad_input_cases",
    "browser_check.py",
    "timing_page.py",
    "bench_page.py",
    "reading.py",
    "_gallery",
]
suppress_warnings = ["myst.header"]
# The pages quote code in running text (warnings, reprs, parameter values): docutils'
# smart quotes turned query_prefix='a ' into query_prefix=’a ‘, which breaks when
# copied. Typographic quotes the prose wants are typed as such.
smartquotes = False

# Notebooks arrive executed (papermill or nbval): render their outputs, never re-run them.
nb_execution_mode = "off"
nb_render_markdown_format = "gfm"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
numfig = True

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autosummary_generate = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes" sections as fields: no duplicate object entries


def _run_banner(timing_file: Path) -> str:
    """Which run built these pages, for a banner on every page: the smoke run's numbers
    must not be read as the records' (the timing record says how the notebooks ran, when
    and from which commit; docs/execute.py writes it beside the executed notebooks)."""
    if not timing_file.is_file():
        return "No notebook run: the notebooks' pages are missing from this build."
    run = json.loads(timing_file.read_text(encoding="utf-8")).get("identity", {})
    changed = html.escape(", ".join(f"{k}={v!r}" for k, v in run.get("parameters", {}).items()))
    which = [f"hierret {hierret.__version__}"] + ([run["started"]] if run.get("started") else [])
    if commit := run.get("commit"):  # "+": the checkout had uncommitted changes
        which.append(
            f"commit {commit.rstrip('+')}" + (" with local changes" * commit.endswith("+"))
        )
    built = ", ".join(which)
    size = run.get("size", "smoke" if run.get("smoke") else "reference")  # older records
    kind = "reference" if size == "reference" and not changed else "sample"
    return f'<span class="hr-run hr-run-{kind}">{_banner_text(size, changed, built)}</span>'


def _banner_text(size: str, changed: str, built: str) -> str:
    """The banner's words for a run of ``size`` with ``changed`` parameters, ``built`` from
    a version, a start time and a commit."""
    if size == "smoke":
        return (
            f"<strong>Smoke run</strong> ({built}): every notebook ran on small samples for "
            "the tests, so its numbers show the method at work, not the findings; the "
            "decision records quote the reference run (<code>nox -s reproduce</code>)."
        )
    if size == "class":
        return (
            f"<strong>Class-size run</strong> ({built}): every notebook ran on the size for "
            "teaching (a few minutes each), not the reference run the decision records quote."
        )
    if changed:
        return (
            f"<strong>A run with changed parameters</strong> ({changed}; {built}): not the "
            "reference run."
        )
    return f"<strong>Reference run</strong> ({built}): every notebook on its reference parameters."


html_theme = "sphinx_book_theme"
html_title = "hierret: method and evaluation"
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": True,
    # one search box: the sidebar's (and the article bar's button on a phone), not a
    # second one in the header above it
    "navbar_persistent": [],
    "announcement": _run_banner(Path(__file__).parent / "notebooks" / "timing.json"),
}
# The page's colour mode before a reader picks one: without it the theme reads an empty
# mode on a first visit and logs a console error ("Got invalid theme mode").
html_context = {"default_mode": "light"}
html_static_path = ["_static"]
html_css_files = ["hierret.css"]


def _defined_in(app: object, modname: str, attribute: str) -> str:
    """The module viewcode links an object to: where it is defined, if that is hierret's.

    A type alias such as ``hierret.search.runs.Run = dict[str, Ranking]`` reports the module of
    its origin (``builtins``), for which viewcode would list a source page it never writes.
    """
    import importlib

    obj: object = importlib.import_module(modname)
    for part in attribute.split("."):
        obj = getattr(obj, part, None)
    real = getattr(obj, "__module__", None)
    return real if isinstance(real, str) and real.startswith("hierret") else modname


def _explorer_data(app: object) -> None:
    """The explorer's data script, from the explorer files the notebook runs wrote."""
    from pathlib import Path

    from hierret.study.site_build import explorer_script

    src = Path(app.srcdir)  # type: ignore[attr-defined]
    (src / "_static").mkdir(exist_ok=True)
    script = explorer_script(src / "notebooks" / "figures")
    (src / "_static" / "explorer-data.js").write_text(script, encoding="utf-8")


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("viewcode-follow-imported", _defined_in)
    app.connect("builder-inited", _explorer_data)
