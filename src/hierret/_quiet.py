"""Importing a model library without changing what a notebook prints.

Two of the libraries hierret loads models with reach beyond themselves when
imported, and on an executed notebook page both show up as stderr blocks:

- ``transformers`` (and so ``sentence_transformers``) imports ``tqdm.auto``,
  which, in a Jupyter kernel without ``ipywidgets``, warns ``TqdmWarning:
  IProgress not found`` with the path of tqdm's file on the build machine;
- ``wordllama`` calls :func:`logging.basicConfig` at ``INFO`` on import, which
  gives the root logger a stderr handler, so that every library's ``INFO``
  line is printed from then on (``INFO:sentence_transformers...:Loading
  SentenceTransformer model from /path/...``).

:func:`quiet_import` wraps such an import: that one warning is not shown, and
the root logger's handlers and level are put back as they were. Nothing else
is silenced: hierret's own warnings and errors still reach the user.

Examples
--------
>>> import logging
>>> before = list(logging.getLogger().handlers)
>>> with quiet_import():
...     logging.basicConfig(level=logging.INFO)  # what wordllama does on import
>>> logging.getLogger().handlers == before
True
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["quiet_import"]


@contextmanager
def quiet_import() -> Iterator[None]:
    """Run the imports in the ``with`` block without tqdm's widget warning or logging set-up."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            yield
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
