"""The embedded default corpus: the Python Language Reference topics.

Every CPython ships the reference topics that ``help()`` shows in
``pydoc_data.topics``. hierret builds its default corpus from them at run time,
so nothing is copied into the repository; the fingerprint records the Python
version, because the texts change between releases.
"""

from __future__ import annotations

import platform

from hierret.structure.units import Corpus, Document

__all__ = ["load_python_reference"]


def load_python_reference() -> Corpus:
    """Load the ``python-reference`` corpus from this interpreter's ``pydoc_data``.

    Returns
    -------
    Corpus
        One document per topic, sorted by topic name; the title is the topic's
        first line.

    Examples
    --------
    >>> corpus = load_python_reference()
    >>> len(corpus) > 50
    True
    >>> corpus["try"].title
    'The "try" statement'
    """
    from pydoc_data.topics import topics

    docs = [
        Document(id=name, title=text.strip().splitlines()[0].strip(), text=text)
        for name, text in sorted(topics.items())
    ]
    return Corpus("python-reference", docs, extra_identity=f"python-{platform.python_version()}")
