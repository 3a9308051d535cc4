"""Sphinx extension: the first use of each glossary term on a page links to the glossary.

The glossary (glossary.md) defines the words the records and notebooks use
(nDCG@10, arm, lifting, Holm...). Rather than a ``{term}`` role typed into every
page and notebook, this extension finds, on each page but the glossary and the API
reference, the first running-text use of each term (or of a form of it: "lifted"
for *lifting*, "Holm-adjusted" for *Holm adjustment*) and turns it into a link to
the term's entry, with the definition's first sentence as the link's title (shown
on hover). Code, headings, links and notebook outputs are left alone.

Enabled in conf.py (``extensions``); the patterns are :data:`TERMS`.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx import addnodes

#: Glossary term (as glossary.md spells it) -> the forms that count as a use of it.
TERMS: dict[str, str] = {
    "nDCG@10": r"\bnDCG(?:@10)?(?![\w@])",
    "hit@1": r"\bhit@1\b",
    "target": r"\btargets?\b",
    "arm": r"\barms?\b",
    "lifting": r"\blift(?:ing|ed|s)?\b",
    "RRF": r"\bRRF\b|\breciprocal rank fusion\b",
    "raw span": r"\braw[- ]?spans?\b",
    "centroid": r"\bcentroids?\b",
    "oracle": r"\boracle\b",
    "fusion": r"\bfusion\b",
    "pool": r"\b(?:candidate )?pools?\b",
    "late chunking": r"\blate[- ]chunk(?:ing|ed)\b",
    "auto-merging": r"\bauto-?merg(?:ing|ed|es)\b",
    "router": r"\brouters?\b",
    "MaxSim": r"\bMaxSim\b",
    "holds": r"(?<=[\"“*])holds\b|\bverdicts? (?:is |of )?\"?holds\b",
    "not established": r"\bnot established\b",
    "non-inferior": r"\bnon-inferior\b(?!ity)",
    "inconclusive": r"\binconclusive\b",
    "fragile": r"\bfragile\b",
    "provisional labels": r"\bprovisional\b",
    "Wilson interval": r"\bWilson\b",
    "Newcombe interval": r"\bNewcombe(?:'s)?\b",
    "McNemar's test": r"\bMcNemar(?:'s)?\b",
    "bootstrap": r"\bbootstrap\b",
    "randomisation test": r"\brandomi[sz]ation\b",
    "Holm adjustment": r"\bHolm(?:'s)?\b",
    "family": r"\bfamil(?:y|ies)\b",
    "minimum detectable effect": r"\b(?:minimum )?detectable\b",
    "margin": r"\b(?:declared|equivalence|non-inferiority) margins?\b",
    "non-inferiority": r"\bnon-inferiority\b",
    "equivalence (TOST)": r"\bTOST\b|\bequivalence\b",
}
#: Pages whose text is not linked: the glossary itself and generated reference pages.
SKIPPED_PAGES = ("glossary", "api", "genindex", "search", "py-modindex")
#: Text inside these is never linked (code, links, headings, raw HTML, signatures).
_SKIPPED_PARENTS = (
    nodes.literal,
    nodes.FixedTextElement,
    nodes.reference,
    nodes.title,
    nodes.raw,
    nodes.term,
    nodes.caption,
    addnodes.desc,
    addnodes.pending_xref,
)
_PATTERNS = {term: re.compile(pattern) for term, pattern in TERMS.items()}


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=\.)\s", " ".join(text.split()), maxsplit=1)[0]
    return sentence if sentence.endswith(".") else sentence + "."


def _read_glossary(app: Any, doctree: nodes.document) -> None:
    """Keep each glossary term's first sentence (the links' titles)."""
    if app.env.docname != "glossary":
        return
    titles = app.env.hr_term_titles = {}
    for item in doctree.findall(nodes.definition_list_item):
        terms = list(item.findall(nodes.term))
        definitions = list(item.findall(nodes.definition))
        if terms and definitions:
            titles[terms[0].astext()] = _first_sentence(definitions[0].astext())


def _merge(app: Any, env: Any, docnames: Any, other: Any) -> None:
    env.hr_term_titles = {
        **getattr(env, "hr_term_titles", {}),
        **getattr(other, "hr_term_titles", {}),
    }


def _skipped(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _SKIPPED_PARENTS) or "cell_output" in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def _link_terms(app: Any, doctree: nodes.document, docname: str) -> None:
    """Link the first use of each term on the page ``docname``."""
    if docname in SKIPPED_PAGES or docname.startswith("_"):
        return
    std = app.env.get_domain("std")
    titles = getattr(app.env, "hr_term_titles", {})
    pending = {}
    for term in TERMS:
        found = std.objects.get(("term", term)) or std.objects.get(("term", term.lower()))
        if found is not None:
            uri = app.builder.get_relative_uri(docname, found[0]) + "#" + found[1]
            pending[term] = (uri, titles.get(term, term))
    for text in list(doctree.findall(nodes.Text)):
        if not pending:
            return
        if _skipped(text):
            continue
        rest, pieces = str(text), []
        while pending:
            hits = [(m.start(), m, t) for t in pending if (m := _PATTERNS[t].search(rest))]
            if not hits:
                break
            _, match, term = min(hits, key=lambda h: h[0])
            uri, title = pending.pop(term)
            pieces.append(nodes.Text(rest[: match.start()]))
            pieces.append(
                nodes.reference(
                    "",
                    match.group(),
                    internal=True,
                    refuri=uri,
                    reftitle=title,
                    classes=["hr-term"],
                )
            )
            rest = rest[match.end() :]
        if pieces:  # by identity: equal Text nodes compare equal
            parent = text.parent
            at = next(i for i, child in enumerate(parent.children) if child is text)
            parent[at : at + 1] = [*pieces, nodes.Text(rest)]


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", _read_glossary)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _link_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
