"""docs/browser_check.py: a built site checked in headless Chromium, page by page."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import matplotlib
import pytest

from hierret.publish import figures

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[2]


def _checker() -> ModuleType:
    path = ROOT / "docs" / "browser_check.py"
    spec = importlib.util.spec_from_file_location("browser_check", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bc = _checker()


def _figure_png(tmp_path: Path, fontsize: float, width: float) -> bytes:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 2))
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=fontsize)
    ax.set_xlabel("x", fontsize=fontsize)
    figures.save(fig, tmp_path, f"fig-{fontsize:g}.png", show=False)
    return (tmp_path / f"fig-{fontsize:g}.png").read_bytes()


def test_the_figure_text_size_is_read_from_what_figures_save_writes(tmp_path: Path) -> None:
    _figure_png(tmp_path, 7, 4)
    meta = bc.png_text(tmp_path / "fig-7.png")
    assert (bc.FONT_KEY, bc.DPI_KEY) == (figures.FONT_KEY, figures.DPI_KEY)
    assert float(meta[bc.FONT_KEY]) == 7
    assert meta[bc.DPI_KEY] == str(figures.DPI)
    assert bc.png_text(tmp_path / "missing.png") == {}


def test_local_paths_and_log_lines_are_recognised() -> None:
    assert bc.LOCAL_PATH.search("from /work/venv/lib/python3.11/site-packages/tqdm")
    assert bc.LOCAL_PATH.search("see /root/.cache/x and C:\\Users\\me")
    assert not bc.LOCAL_PATH.search("build/site/src and data/results/ and a/tmp/b")
    assert bc.NOISE.search("INFO:hierret.datasets.beir:loaded scifact/test")
    assert bc.NOISE.search("auto.py:21: TqdmWarning: IProgress not found")
    assert not bc.NOISE.search("No warning here: the INFO column is fine")


def test_typographic_quotes_around_code_are_recognised() -> None:
    """What docutils' smart quotes made of the bad-input and bench pages' reprs."""
    for broken in ("query_prefix=’a ‘", "[‘passage: ‘, ‘query: ‘]"):
        assert bc.QUOTED_CODE.search(broken), broken
    assert bc.QUOTED_CODE.search("prefixes query=’’ passage=’’")
    assert not bc.QUOTED_CODE.search("the object is “compatible” with it")
    assert not bc.QUOTED_CODE.search("query_prefix='a ' and ['passage: ', 'query: ']")


_GOOD = """# Good

A table that fits, and a figure legible at its size.

| a | b |
|---|---|
| 1 | 2 |

![a figure](fig-10.png)

The reference calls the object “compatible” with the exception; in code,
`query_prefix='a '` stays as typed.

Every arm is scored on the same questions; a second arm is not linked again, and
`arm` in code never is.

[Back to the start](index.md)
"""

_GLOSSARY = """# Glossary

```{glossary}
arm
  One search configuration under comparison. Every question is answered under it.
```
"""

_BAD = """# Bad

<img src="nothing-here.png" alt="missing">
<img src="fig-4.png" alt="tiny text" style="width: 100%">

<a href="no-such-page.html">a dead link</a>, <a href="good.html#no-such-anchor">a dead anchor</a>

Built in /work/somewhere/build.

Typed by a smart-quoting editor: `query_prefix=’a ‘`; and prose
prefixes query=’’ passage=’’.

<div style="width: 3000px">too wide for any window</div>

<script>console.error("broken on purpose")</script>
"""

_INDEX = """# Tiny site

```{toctree}
good
bad
cells
explorer
no-data
glossary
```
"""

_NO_DATA = """# An explorer without its data

<div id="hr-explorer"></div>
<script src="_static/explorer.js"></script>
"""


def _explorer_data(folder: Path) -> None:
    """The explorer's data from a real run: two arms, two questions, two targets."""
    from hierret.encoders import HashEncoder
    from hierret.search.profile import Profile
    from hierret.search.searcher import Searcher
    from hierret.structure.hierarchy import build_hierarchy
    from hierret.structure.units import Corpus, Document, Query
    from hierret.study import casebook
    from hierret.study.experiment import run

    text = "Cats\n====\n\nCats purr.\n\nDogs\n====\n\nDogs bark.\n"
    h = build_hierarchy(Corpus("pets", [Document("d", "Pets", text)]))
    q = [
        Query("q1", "why do dogs bark", (("d", 28, 38),)),
        Query("q2", "do cats purr", (("d", 12, 22),)),
    ]
    result = run(
        {"passages": Profile(), "sections": Profile(level="sections")},
        q,
        searcher=Searcher(h, HashEncoder(dimension=16)),
        targets=["sections", "documents"],
        metrics=["hit@1"],
        family=[("sections", "passages")],
    )
    casebook.write("dr9", folder, {"pets": result})


def _notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    wide = "x = " + " + ".join(["1"] * 80)  # far past 88 characters
    code = nbformat.v4.new_code_cell(
        wide,
        outputs=[
            nbformat.v4.new_output(
                "stream", name="stderr", text="INFO:hierret.datasets.beir:loaded scifact/test\n"
            )
        ],
    )
    nb.cells = [nbformat.v4.new_markdown_cell("# Cells"), code]
    nbformat.write(nb, path)


def _build(tmp_path: Path) -> Path:
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed")
    pytest.importorskip("myst_nb", reason="the docs extra (myst-nb) is not installed")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copytree(ROOT / "docs" / "_static", src / "_static")
    shutil.copy(ROOT / "docs" / "conf.py", src / "conf.py")
    for extension in ("terms.py", "reading.py"):  # conf.py's own extensions
        shutil.copy(ROOT / "docs" / extension, src / extension)
    _notebook(src / "cells.ipynb")
    _explorer_data(src / "notebooks" / "figures")
    page = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")  # the site's own page
    (src / "explorer.md").write_text(page.replace("(casebooks.md)", "(index.md)"), encoding="utf-8")
    for name, text in {
        "index.md": _INDEX,
        "good.md": _GOOD,
        "bad.md": _BAD,
        "no-data.md": _NO_DATA,
        "glossary.md": _GLOSSARY,
    }.items():
        (src / name).write_text(text, encoding="utf-8")
    for size, width in ((10, 6.0), (4, 9.0)):
        (src / f"fig-{size}.png").write_bytes(_figure_png(tmp_path, size, width))
    html = tmp_path / "html"
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(html)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    return html


@pytest.mark.slow
def test_every_check_on_a_tiny_built_site(tmp_path: Path) -> None:
    chromium = bc.find_chromium()
    if chromium is None:
        pytest.skip(
            "no Chromium on this machine (Debian: apt install chromium, or set "
            "$CHROMIUM): the browser check of the built site was not run"
        )
    html = _build(tmp_path)
    for png in ("fig-10.png", "fig-4.png"):  # sphinx copies images to _images; raw HTML not
        shutil.copy(
            html / "_images" / png if (html / "_images" / png).exists() else tmp_path / png,
            html / png,
        )
    pages = ["index.html", "good.html", "bad.html", "cells.html", "explorer.html", "no-data.html"]
    report = bc.check_site(html, chromium, pages=[html / p for p in pages])
    failed = {
        check: [f for f in fails if f.startswith(("bad.html", "cells.html", "no-data"))]
        for check, fails in report.failures.items()
    }
    good = [
        f
        for fails in report.failures.values()
        for f in fails
        if f.startswith(("index.html", "good.html", "explorer.html"))
    ]
    assert good == [], good
    assert report.pages == pages
    assert any("stderr block" in f for f in failed["stderr"])
    assert any("INFO:hierret" in f for f in failed["stderr"])
    assert any("code cell overflows" in f for f in failed["overflow"])
    assert any("broken on purpose" in f for f in failed["console"])
    assert any("nothing-here.png" in f for f in failed["images"])
    assert any("fig-4.png" in f for f in failed["fonts"])
    assert report.counts["fonts"] >= 2  # the good figure was measured too
    assert any("scrolls sideways" in f for f in failed["overflow"])
    assert any(f.startswith("bad.html at 390 px: the page scrolls") for f in failed["overflow"])
    assert any(f.startswith("bad.html at 390 px: figure text") for f in failed["fonts"])
    assert report.counts["fonts"] >= 4  # both figures, at both widths
    assert any("/work/somewhere" in f for f in failed["paths"])
    assert any("no-such-page.html" in f for f in failed["links"])
    assert any("#no-such-anchor" in f for f in failed["links"])
    assert any("in code: 'query_prefix=’a" in f for f in failed["quotes"]), failed["quotes"]
    assert any("around code-like text" in f for f in failed["quotes"])
    assert report.counts["explorer"] == 2  # a question picked in the first and last set
    assert failed["explorer"] == [
        "no-data.html: the explorer did not start: no data "
        "(window.HIERRET_EXPLORER; _static/explorer-data.js)"
    ]
    assert not report.ok
    good_html = (html / "good.html").read_text(encoding="utf-8")
    link = (  # the first use of a glossary term links to it, titled by its first sentence
        '<a class="hr-term reference internal" href="glossary.html#term-arm" '
        'title="One search configuration under comparison.">arm</a>'
    )
    assert good_html.count("hr-term") == 1
    assert link in good_html
    summary = report.summary()
    assert "console" in summary
    assert "some checks FAILED" in summary
