"""A Markdown file's front matter: the metadata block some tools put before the text.

Static-site generators and note apps (Jekyll, Hugo, Obsidian, MkDocs) start a
Markdown file with a block of metadata: YAML between two ``---`` lines (the
closing one may be ``...``), or TOML between two ``+++`` lines. It is not
text of the document: :func:`split_front_matter` reads it (a ``title`` names
the document) and returns the text after it, so the block is neither
embedded nor searched as a "(preamble)" section. A block that does not parse
as a mapping is left in the text (a ``---`` line is also a Markdown rule, or a
setext heading's underline).

Examples
--------
>>> text = "---\\ntitle: Install guide\\ntags: [a]\\n---\\n# Steps\\n"
>>> meta, body, cut = split_front_matter(text)
>>> meta["title"], body, cut
('Install guide', '# Steps\\n', 39)
>>> split_front_matter('+++\\ntitle = "Notes"\\n+++\\nText.\\n')[:2]
({'title': 'Notes'}, 'Text.\\n')
>>> split_front_matter("---\\n\\nA rule above, then text.\\n")[0]
{}
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

__all__ = ["front_matter_title", "split_front_matter"]

_YAML = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TOML = re.compile(r"\A\+\+\+[ \t]*\n(.*?\n)?\+\+\+[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(the front matter as a mapping, the text after it, characters cut from the start).

    ``({}, text, 0)`` when the text has no front matter, or a block that does
    not parse as a mapping.
    """
    for pattern, parse in ((_YAML, _yaml), (_TOML, _toml)):
        found = pattern.match(text)
        if found is None:
            continue
        meta = parse(found.group(1) or "")
        if meta is None:
            return {}, text, 0
        return meta, text[found.end() :], found.end()
    return {}, text, 0


def front_matter_title(meta: dict[str, Any]) -> str | None:
    """The ``title`` (any case of the key) of a front matter, as one line of text."""
    for key, value in meta.items():
        if isinstance(key, str) and key.lower() == "title" and value is not None:
            title = " ".join(str(value).split())
            return title or None
    return None


def _yaml(block: str) -> dict[str, Any] | None:
    import yaml  # type: ignore[import-untyped]

    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError:
        return None
    return meta if isinstance(meta, dict) else None


def _toml(block: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(block)
    except tomllib.TOMLDecodeError:
        return None
