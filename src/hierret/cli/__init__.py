"""The ``hierret`` command line: try hierarchical search on the embedded corpus.

::

    python -m hierret search "how does finally work?" --profile sections --k 5

searches a corpus (``--corpus``: a name or path that :func:`hierret.datasets.load`
takes, your own folder of documents with or without ``questions.jsonl``; default: the
Python Language Reference) with a profile a decision record recommends
(``--profile``, :data:`hierret.search.profile.RECOMMENDED`: the default, dense ranking of
passages, or DR-004's ``sections``), each option overriding one of its fields, and
prints each hit's rank, score, unit id, span, section path and a one-line snippet.
Vectors are cached on disk (:class:`~hierret.encoders.cache.VectorCache`, ``$HIERRET_CACHE``
or ``--cache-dir``), so only the first call embeds the corpus (with a progress bar
for a real model). The model's identity is kept beside the vectors
(:func:`~hierret.encoders.cache.cached_encoder`), so a later call loads the model, and
imports torch, only when a text is missing from the cache: a question asked before
is answered from the cache alone. Everything printed
that comes from data (ids, titles, section paths, snippets, names, error
messages quoting them) goes through :func:`printable`: control characters are
shown as escapes (``\\x1b``), never obeyed by the terminal.

``hierret embed`` fills the cache ahead of searching: the passages of a corpus
(those ``search`` ranks), batch by batch, with a progress bar counted in texts
(:func:`hierret.encoders.embed.local.embed_texts`); Ctrl-C keeps every batch stored. Storing is
its point: a cache that cannot be written, or a write that fails part way (a
full disk), ends it with exit status 2 and the fix, never a success that stored
nothing. ``--engine ray`` joins the cluster at ``--address`` (else
``$RAY_ADDRESS``, else a local Ray), with ``--actors N`` or ``MIN-MAX``,
``--cpus-per-actor``, ``--gpus-per-actor`` and ``--batch-size``; a Ray that
cannot be started or joined is exit status 2 with the cause and the fix, no
traceback. ``--shard I/N`` embeds one of N disjoint parts of the distinct
texts (:func:`hierret.encoders.embed.local.shard_of`).

Where its parts live: ``_parser`` (the arguments, their types, and the profile the
options make), ``_text`` (what is printed: data made safe for a terminal, one hit per
block), ``_run`` (:func:`main` and the two commands). Each name loads its module on
first use (PEP 562), so ``python -m hierret`` pays for the command it runs.

Examples
--------
>>> import tempfile
>>> from hierret.cli import main
>>> tmp = tempfile.TemporaryDirectory()
>>> main(["embed", "--encoder", "hash", "--no-progress", "--cache-dir", tmp.name])
... # doctest: +ELLIPSIS
python-reference: ... passages, 603 distinct texts for hash-64: 0 were in the cache, 603 ...
0
>>> main(["search", "finally clause", "--encoder", "hash", "--k", "1",
...       "--cache-dir", tmp.name])  # doctest: +ELLIPSIS
python-reference: ...
 1  ...
0
>>> tmp.cleanup()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.cli._parser import build_parser, profile_from_args
    from hierret.cli._run import CLOSED_PIPE, main
    from hierret.cli._text import format_hit, printable

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "CLOSED_PIPE": "hierret.cli._run",
    "main": "hierret.cli._run",
    "build_parser": "hierret.cli._parser",
    "profile_from_args": "hierret.cli._parser",
    "format_hit": "hierret.cli._text",
    "printable": "hierret.cli._text",
}

__all__ = ["CLOSED_PIPE", "build_parser", "format_hit", "main", "printable", "profile_from_args"]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
