"""Sphinx extension: the pages built from the run, and reading aids on the records' tables.

Pages written when the build starts (``builder-inited``), from the build's own files:

* ``_include/results.md``: the results table atop DECISIONS.md
  (:mod:`hierret.publish.summary`), for the home page, its record links pointing
  into the records' page;
* ``gallery.md``: every figure of the executed notebooks, with the caption and
  alt text its cell declares (myst-nb's ``mystnb.figure.caption`` and
  ``mystnb.image.alt`` cell metadata, which the notebook's own page shows too),
  each linking to the notebook section that drew it.

On every notebook page (``doctree-read``), a line under its title: this run's time for
the notebook (the timing record ``docs/execute.py`` wrote beside the notebooks), the
executed notebook to download, and its source in the repository (the package's
``Source`` or ``Repository`` URL when it declares one; otherwise a relative link into
the checkout the site was built in, which a copy of the site elsewhere does not have).

On the records' tables (``doctree-resolved``): every *verdict* cell gets a class by its
verdict (``hr-verdict-holds``...; the colours are in ``_static/hierret.css``); every
claims row an anchor (``#dr001-c1``), to which the record's ``[C1]`` citations link; a
claims row's test shows a short name (:func:`short_key`) with the full result-record key
on hover; the results table's key claims link to their rows, and each record's row
gains its casebook and its view in the question explorer. The Markdown stays as
GitHub shows it: full keys, plain citations.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes

from hierret.publish.site_build import heading_slug, results_table

#: A notebook page of the site (the records' notebooks; not "your own documents").
NOTEBOOK = re.compile(r"^notebooks/(\d\d_\w+)$")
_CITE = re.compile(r"\[((?:DR-\d+ )?C\d+(?:,\s*(?:DR-\d+ )?C\d+)*)\]")
_RECORD = re.compile(r"^(DR-\d+)\b")


def short_key(key: str) -> str:
    """A claims row's test key as the table shows it: without its record and ``test_``,
    a word repeated at once said once, a break allowed after each ``_``.

    Examples
    --------
    >>> short_key("dr004.test_pyref_900_rawspan_section_section_chunk_section")
    'pyref_\\u200b900_\\u200brawspan_\\u200bsection_\\u200bchunk_\\u200bsection'
    >>> short_key("dr001.hit1_sec")
    'hit1_\\u200bsec'
    """
    field = key.partition(".")[2] or key
    words = field.removeprefix("test_").split("_")
    kept = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
    return "_\u200b".join(kept)


def verdict_class(text: str) -> str:
    """The CSS class of a verdict cell: ``hr-verdict-`` and the verdict's words.

    Examples
    --------
    >>> verdict_class("not established (could detect ≥ 0.08)")
    'hr-verdict-not-established'
    >>> verdict_class("non-inferior (margin 0.02)"), verdict_class("holds")
    ('hr-verdict-non-inferior', 'hr-verdict-holds')

    A *holds* that does not survive its alternative analyses
    (:mod:`hierret.publish.robustness`) is coloured apart, a robust one as any holds:

    >>> verdict_class("holds (fragile: Wilcoxon 0.066; across 3 corpora 0.12)")
    'hr-verdict-holds-fragile'
    >>> verdict_class("holds (robust: Wilcoxon 0.0021; one corpus)")
    'hr-verdict-holds'
    """
    if text.startswith("holds (fragile"):
        return "hr-verdict-holds-fragile"
    words = text.split("(")[0].strip().lower()
    return "hr-verdict-" + re.sub(r"[^a-z]+", "-", words).strip("-")


def row_anchor(record: str, claim: str) -> str:
    """The anchor of a claims row: ``row_anchor("DR-001", "C1") == "dr001-c1"``."""
    return f"{record.replace('-', '').lower()}-{claim.lower()}"


# -- pages written at the start of the build ------------------------------------------


def results_page(decisions: str) -> str:
    """The results table of ``decisions`` (DECISIONS.md's text) for the home page: its
    record links point into the records' page (``decisions.md``)."""
    block = results_table(decisions)
    if block is None:
        return "*DECISIONS.md has no results table.*\n"
    return block.replace("](#", "](decisions.md#").strip() + "\n"


def _heading_slugs(cells: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(cell index, heading text, anchor) of each heading up to level 3, in order, as
    MyST names them (repeated slugs numbered ``-1``, ``-2``...)."""
    seen: set[str] = set()
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            m = re.match(r"^(#{1,3}) (.+)$", line)
            if not m:
                continue
            text = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", r"\1", m[2]).strip()
            slug = base = heading_slug(text)
            n = 0
            while slug in seen:
                n += 1
                slug = f"{base}-{n}"
            seen.add(slug)
            out.append((i, text, slug))
    return out


def _figures(path: Path) -> list[dict[str, str]]:
    """Every PNG a notebook's cells show: its bytes' digest, caption, alt text, the
    section that shows it (text and anchor)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    headings = _heading_slugs(cells)
    found = []
    for i, cell in enumerate(cells):
        outputs = cell.get("outputs", [])
        pngs = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
        if not pngs:
            continue
        meta = cell.get("metadata", {}).get("mystnb", {})
        alt = meta.get("image", {}).get("alt", "")
        caption = meta.get("figure", {}).get("caption", "")
        before = [h for h in headings if h[0] <= i]
        _, section, anchor = before[-1] if before else (0, path.stem, "")
        for png in pngs:
            data = base64.b64decode("".join(png) if isinstance(png, list) else png)
            found.append(
                {
                    "digest": hashlib.sha256(data).hexdigest(),
                    "data": base64.b64encode(data).decode(),
                    "alt": alt or f"A figure of the section {section}.",
                    "caption": caption or alt or f"From the section {section}.",
                    "section": section,
                    "anchor": anchor,
                }
            )
    return found


def _title(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return path.stem


def gallery_page(src: Path) -> str:
    """The figure gallery: each notebook's figures, captioned, linked to their section.

    A figure the notebook also saved under ``notebooks/figures`` is shown from that file;
    one it only showed is written to ``_gallery/``.
    """
    parts = [
        "# Figure gallery\n\n"
        "Every figure the notebooks drew in the run this site was built from, notebook "
        "by notebook, each with its caption and a link to the section that draws it "
        "and explains how to read it.\n"
    ]
    saved = {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.relative_to(src).as_posix()
        for p in sorted((src / "notebooks" / "figures").glob("*.png"))
    }
    notebooks = sorted(p for p in (src / "notebooks").glob("*.ipynb") if NOTEBOOK.match(
        f"notebooks/{p.stem}"))  # fmt: skip
    for path in notebooks:
        figures = _figures(path)
        if not figures:
            continue
        parts.append(f"\n## {_title(path)}\n")
        for n, fig in enumerate(figures, 1):
            image = saved.get(fig["digest"])
            if image is None:
                out = src / "_gallery" / f"{path.stem}-{n}.png"
                out.parent.mkdir(exist_ok=True)
                out.write_bytes(base64.b64decode(fig["data"]))
                image = out.relative_to(src).as_posix()
            alt = " ".join(fig["alt"].split())
            target = f"notebooks/{path.name}" + (f"#{fig['anchor']}" if fig["anchor"] else "")
            parts.append(
                f"\n```{{figure}} {image}\n:alt: {alt}\n:width: 100%\n\n"
                f"{fig['caption']} Drawn in [{fig['section']}]({target}).\n```\n"
            )
    return "".join(parts)


def _write_pages(app: Any) -> None:
    src = Path(app.srcdir)
    decisions = src / "_include" / "DECISIONS.md"
    text = decisions.read_text(encoding="utf-8") if decisions.is_file() else ""
    (src / "_include").mkdir(exist_ok=True)
    (src / "_include" / "results.md").write_text(results_page(text), encoding="utf-8")
    (src / "gallery.md").write_text(gallery_page(src), encoding="utf-8")


# -- each notebook page's run time, download and source --------------------------------


def _duration(seconds: float) -> str:
    """``_duration(33.2) == "33 s"``, ``_duration(122.3) == "2 min 2 s"``."""
    s = round(seconds)
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60} s"


def _run_time(src: Path, stem: str) -> str:
    timing = src / "notebooks" / "timing.json"
    if not timing.is_file():
        return "no timing record in this build"
    record = json.loads(timing.read_text(encoding="utf-8"))
    wall = record.get("values", {}).get(f"{stem}_wall_s")
    size = record.get("identity", {}).get("size", "reference")
    return f"{_duration(float(wall))} (this site's {size} run)" if wall else "not timed"


def repository_url() -> str:
    """The package's declared source repository URL, or ``""`` (none is declared)."""
    try:
        urls = metadata.metadata("hierret").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return ""
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("source", "repository", "code", "github"):
            return url.strip().rstrip("/")
    return ""


def _source_link(app: Any, stem: str) -> nodes.Node:
    """The notebook's source in the repository: a link when one can be made."""
    shown = f"notebooks/{stem}.ipynb"
    if url := repository_url():
        return nodes.reference("", shown, refuri=f"{url}/blob/HEAD/{shown}")
    src = Path(app.srcdir).resolve()
    for folder in src.parents:
        source = folder / "notebooks" / f"{stem}.ipynb"
        if source.is_file() and (folder / "pyproject.toml").is_file():
            out = Path(app.outdir).resolve() / "notebooks"
            return nodes.reference("", shown, refuri=os.path.relpath(source, out))
    return nodes.literal("", shown)


def _notebook_facts(app: Any, doctree: nodes.document) -> None:
    """The line under a notebook page's title: run time, download, source."""
    m = NOTEBOOK.match(app.env.docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if m is None or section is None:
        return
    stem = m[1]
    download = addnodes.download_reference(
        "", "", nodes.literal("", f"{stem}.ipynb"), reftarget=f"{stem}.ipynb",
        refdoc=app.env.docname, refexplicit=True, refdomain="", reftype="download",
    )  # fmt: skip
    line = nodes.paragraph(
        "",
        "",
        nodes.strong("", "Run time: "),
        nodes.Text(f"{_run_time(Path(app.srcdir), stem)} · "),
        nodes.strong("", "Download "),
        nodes.Text("the executed notebook: "),
        download,
        nodes.Text(" · "),
        nodes.strong("", "Source: "),
        _source_link(app, stem),
        nodes.Text(" in the repository"),
        classes=["hr-page-facts"],
    )
    title = section.next_node(nodes.title)
    at = section.index(title) + 1 if title is not None and title.parent is section else 0
    section.insert(at, line)


# -- the records' tables ----------------------------------------------------------------


def _header(table: nodes.table) -> list[str]:
    head = next(iter(table.findall(nodes.thead)), None)
    row = next(iter(head.findall(nodes.row)), None) if head is not None else None
    return [e.astext().strip().lower() for e in row.children] if row is not None else []


def _record_of(node: nodes.Node) -> str:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section):
            title = parent.next_node(nodes.title)
            if title is not None and (m := _RECORD.match(title.astext())):
                return m[1]
        parent = parent.parent
    return ""


def _body_rows(table: nodes.table) -> list[nodes.row]:
    return [r for body in table.findall(nodes.tbody) for r in body.children]


def _claims_table(table: nodes.table, columns: list[str]) -> None:
    record = _record_of(table)
    test = columns.index("test")
    for row in _body_rows(table):
        claim = row.children[0].astext().strip()
        if record and re.fullmatch(r"C\d+", claim):
            row["ids"].append(row_anchor(record, claim))
        for code in list(row.findall(nodes.literal)):
            key = code.astext()
            if code.parent.parent is row.children[test] and re.fullmatch(r"dr\d+\.\w+", key):
                short = nodes.literal("", short_key(key), classes=["hr-key"])
                code.replace_self(nodes.abbreviation("", "", short, explanation=key))
            elif "_" in key:  # a family's name: it too breaks only after an underscore
                code.replace_self(
                    nodes.literal("", key.replace("_", "_\u200b"), classes=["hr-key"])
                )


def _link(text: str, uri: str, title: str = "") -> nodes.reference:
    extra = {"reftitle": title} if title else {}
    return nodes.reference("", text, internal=True, refuri=uri, **extra)


def _results_table(app: Any, table: nodes.table, columns: list[str], docname: str) -> None:
    key = columns.index("key comparison")
    here = "" if docname == "decisions" else app.builder.get_relative_uri(docname, "decisions")
    for row in _body_rows(table):
        m = _RECORD.match(row.children[0].astext().strip())
        cell = row.children[key]
        first = next(iter(cell.findall(nodes.Text)), None)
        claim = re.match(r"C\d+", str(first)) if first is not None else None
        if m is None or first is None or claim is None:
            continue
        record = m[1]
        anchor = f"{here}#{row_anchor(record, claim[0])}"
        first.parent.replace(first, [_link(claim[0], anchor, "its row in the claims table"),
                                     nodes.Text(str(first)[claim.end():])])  # fmt: skip
        name = record.replace("-", "").lower()
        pages = next(iter(row.children[-1].findall(nodes.paragraph)), None)
        book = f"notebooks/figures/casebook-{name}"
        if pages is None or book not in app.env.found_docs:
            continue
        explorer = app.builder.get_relative_uri(docname, "explorer") + f"#r={name}"
        pages += [
            nodes.inline("", " · ", classes=["hr-sep"]),
            _link("casebook", app.builder.get_relative_uri(docname, book)),
            nodes.inline("", " · ", classes=["hr-sep"]),
            _link("explorer", explorer, f"{record}'s questions under every arm"),
        ]


def _citations(doctree: nodes.document) -> None:
    """``[C1, C2]`` in a record's text: each id a link to its claims row."""
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if isinstance(parent, (nodes.literal, nodes.reference, nodes.FixedTextElement)):
            continue
        record = _record_of(text) if _CITE.search(str(text)) else ""
        if not record:
            continue
        pieces: list[nodes.Node] = []
        rest = str(text)
        for m in _CITE.finditer(str(text)):
            before, _, rest = rest.partition(m[0])
            pieces.append(nodes.Text(before + "["))
            for i, cited in enumerate(c.strip() for c in m[1].split(",")):
                pieces += [nodes.Text(", ")] if i else []
                other, _, claim = cited.rpartition(" ")  # "DR-001 C4": another record's row
                anchor = row_anchor(other or record, claim)
                pieces.append(_link(cited, f"#{anchor}", "the claim's row"))
            pieces.append(nodes.Text("]"))
        parent.replace(text, [*pieces, nodes.Text(rest)])


def _tables(app: Any, doctree: nodes.document, docname: str) -> None:
    for table in list(doctree.findall(nodes.table)):
        columns = _header(table)
        if "verdict" in columns:
            at = columns.index("verdict")
            for row in _body_rows(table):
                cell = row.children[at]
                cell["classes"] += ["hr-verdict", verdict_class(cell.astext())]
        if {"id", "test", "verdict"} <= set(columns):
            table["classes"].append("hr-claims")
            _claims_table(table, columns)
        if "key comparison" in columns:
            table["classes"].append("hr-results")
            _results_table(app, table, columns, docname)
    if docname == "decisions":
        _citations(doctree)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write_pages)
    # before Sphinx's own doctree-read collectors (priority 500): the download link added
    # here must be registered by the download collector
    app.connect("doctree-read", _notebook_facts, priority=100)
    app.connect("doctree-resolved", _tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
