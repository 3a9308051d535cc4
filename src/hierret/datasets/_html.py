"""An HTML page saved under a Markdown or text name, turned into the text a reader sees.

A page saved from a browser as ``page.md`` (or a ``.txt`` export that is
really HTML) would be indexed with its tags, scripts and styles, and its
headings would not be found. :func:`looks_like_html` recognises a whole HTML
page (a ``<!DOCTYPE html>``, ``<html>``, ``<head>`` or ``<body>`` first;
Markdown with some inline HTML is not one), and :func:`html_to_text` keeps
what a browser shows, with the standard library's HTML parser: the text,
entities decoded, paragraphs and list items on lines of their own, and each
``<h1>``..``<h6>`` as a Markdown ``#`` heading, so that sections are found;
scripts, styles, the head (but its ``<title>``) and comments are dropped.

Examples
--------
>>> page = ("<!DOCTYPE html><html><head><title>Guide</title><style>p{}</style></head>"
...         "<body><h1>Install</h1><p>Run <b>make</b> &amp; wait.</p>"
...         "<h2>Logs</h2><ul><li>one</li><li>two</li></ul><script>x()</script></body></html>")
>>> looks_like_html(page), looks_like_html("# Notes\\n\\nSome <b>bold</b> text.")
(True, False)
>>> title, text = html_to_text(page)
>>> title
'Guide'
>>> print(text)
# Install
<BLANKLINE>
Run make & wait.
<BLANKLINE>
## Logs
<BLANKLINE>
- one
- two
<BLANKLINE>
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text", "looks_like_html"]

_PAGE = re.compile(
    r"\A\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b",
    re.I | re.S,
)  # an XHTML page may start with its XML declaration
_SKIP = {"script", "style", "head", "template", "noscript", "svg"}
_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside",
    "table", "tr", "ul", "ol", "dl", "dt", "dd", "blockquote", "pre", "figure",
    "figcaption", "form", "hr", "address",
}  # fmt: skip


def looks_like_html(text: str) -> bool:
    """Whether ``text`` is a whole HTML page (not Markdown holding some tags)."""
    return _PAGE.match(text[:4096]) is not None


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.in_title = False
        self.title = ""
        self.heading = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skipping += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = int(tag[1])
            self.parts.append("\n\n" + "#" * self.heading + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCK:
            self.parts.append("\n\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skipping = max(self.skipping - 1, 0)
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading = 0
            self.parts.append("\n\n")
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if self.skipping:
            return
        if self.heading:  # a heading stays on its line
            data = " ".join(data.split()) + (" " if data[-1:].isspace() else "")
        self.parts.append(data)


def html_to_text(page: str) -> tuple[str, str]:
    """(the page's ``<title>``, or ``""``; its text, headings as Markdown ``#`` lines)."""
    parser = _Text()
    parser.feed(page)
    parser.close()
    text = "".join(parser.parts)
    lines = [" ".join(line.split()) for line in text.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return " ".join(parser.title.split()), text + "\n"
