"""An executed notebook readable outside the site: each glued value written where it is quoted.

The notebooks' prose quotes run values with myst-nb's ``{glue}`` role
(``{glue}`exercise_1_time```), which the site replaces with the value the
notebook glued (:func:`hierret.publish.report.glue`). Papermill's output and
JupyterLab render Markdown without MyST, so there the role shows as written.
:func:`inline_glue` rewrites an executed notebook's Markdown cells with each
role replaced by the value's plain text, as the site shows it; run it on a
papermill output::

    papermill notebooks/05_dr004_hierarchy.ipynb build/mine/05.ipynb -p size class
    python -m hierret.publish.readable build/mine/05.ipynb

Why a rewrite of the output and not Markdown made by code cells: the site
keeps one text per sentence, checked by ``sphinx-build -W`` (a role whose key
no cell glued fails the build), and the notebooks stay lessons whose prose is
Markdown a reader can edit, within the lesson limits of code lines. The
source notebook keeps its roles; the rewritten copy is for reading.

Examples
--------
>>> nb = {"cells": [
...     {"cell_type": "code", "source": "", "outputs": [{"output_type": "display_data",
...      "data": {"application/papermill.record/text/plain": "0.65"},
...      "metadata": {"scrapbook": {"name": "w", "mime_prefix": ""}}}]},
...     {"cell_type": "markdown", "source": "a weight of {glue}`w` ({glue:text}`w:.1f`)"}]}
>>> inline_glue(nb)["cells"][1]["source"]
'a weight of 0.65 (0.7)'
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hierret._files import atomic_write
from hierret.publish.report import GLUE_PREFIX

__all__ = ["glued_values", "inline_glue", "main"]

#: A myst-nb glue role in Markdown: ``{glue}`key```, ``{glue:text}`key:.3f```
#: (``{glue:md}`` and ``{glue:any}`` read as ``{glue}``).
ROLE = re.compile(r"\{glue(?::(?P<kind>any|text|md))?\}`(?P<key>[^`:]+)(?::(?P<fmt>[^`]*))?`")


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def glued_values(nb: Mapping[str, Any]) -> dict[str, str]:
    """Each glued key of an executed notebook and its plain text, as the site shows it.

    A key glued twice keeps the last value (myst-nb reads the last too).
    """
    out: dict[str, str] = {}
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            data = output.get("data", {})
            text = data.get(GLUE_PREFIX + "text/plain", data.get("text/plain"))
            if name is not None and text is not None:
                out[name] = "".join(text) if isinstance(text, list) else str(text)
    return out


def _formatted(text: str, fmt: str | None) -> str:
    """``{glue:text}``'s format applied to a number's text; other text as it is."""
    if not fmt:
        return text
    try:
        return format(float(text), fmt)
    except ValueError:
        return text


def inline_glue(nb: dict[str, Any]) -> dict[str, Any]:
    """Replace each glue role in ``nb``'s Markdown cells with its value (module notes).

    Parameters
    ----------
    nb : dict
        An executed notebook, as ``json.load`` reads it; changed in place.

    Returns
    -------
    dict
        ``nb``. A role whose key no cell glued (the notebook was not executed,
        or another notebook's key) is left as written.
    """
    values = glued_values(nb)

    def value(m: re.Match[str]) -> str:
        text = values.get(m["key"].strip())
        return m[0] if text is None else _formatted(text, m["fmt"])

    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown" and "{glue" in _source(cell):
            cell["source"] = ROLE.sub(value, _source(cell))
    return nb


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hierret.publish.readable IN [OUT]``: an executed notebook made readable.

    Writes ``OUT`` (default: ``IN`` itself, atomically); returns 0, or 2 with
    a message naming the problem when ``IN`` is not an executed notebook.
    """
    parser = argparse.ArgumentParser(
        prog="python -m hierret.publish.readable",
        description="Write each glued value where an executed notebook's prose quotes it.",
    )
    parser.add_argument("notebook", help="an executed notebook (papermill's output)")
    parser.add_argument("out", nargs="?", help="where to write (default: over the input)")
    args = parser.parse_args(argv)
    path = Path(args.notebook)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
            raise ValueError("no 'cells' list")
    except (OSError, ValueError) as err:
        print(
            f"readable: {path} is not a notebook ({err}): give the .ipynb papermill wrote",
            file=sys.stderr,
        )
        return 2
    if not glued_values(nb):
        print(
            f"readable: {path} holds no glued values: execute it first "
            f"(papermill {path} OUT.ipynb), then give OUT.ipynb",
            file=sys.stderr,
        )
        return 2
    text = json.dumps(inline_glue(nb), indent=1, ensure_ascii=False) + "\n"
    out = Path(args.out) if args.out else path
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, text)
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main(sys.argv[1:]))
