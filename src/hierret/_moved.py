"""Old module paths, kept importable for one release: each loads its new module, with a warning.

Issue 40 grouped the package's flat top level into concept packages
(:mod:`hierret.structure`, ``hierret.vectors``, ``hierret.embed``,
:mod:`hierret.search`); then the floors' cap of eight packages at the top put
``vectors``, ``rankers`` and ``rerank`` inside :mod:`hierret.search`, ``cache`` and
``embed`` inside :mod:`hierret.encoders`, and ``stats`` inside
:mod:`hierret.evaluation`. Code written against a module's old path
(``import hierret.units``) keeps working until the next release: ``import hierret``
puts :class:`MovedFinder` first on :data:`sys.meta_path`, and an import of a path in
:data:`MOVED` gets the new module itself (``hierret.units is
hierret.structure.units``), with one :class:`DeprecationWarning` naming the new
path, raised the first time the old path is imported in a process. No file is left
at the old path, so the top level stays as small as the concepts. Standard library
only: ``import hierret`` loads nothing else for it.

Examples
--------
>>> import sys, warnings
>>> sys.modules.pop("hierret.units", None) and None
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     import hierret.units
>>> import hierret.structure.units
>>> hierret.units is hierret.structure.units
True
>>> [str(w.message) for w in caught]  # doctest: +NORMALIZE_WHITESPACE
['hierret.units is now hierret.structure.units: import it from there
  (the old path goes in the next release)']
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import FrameType, ModuleType

#: Each old module path and the module that now holds its code.
MOVED = {
    "hierret.units": "hierret.structure.units",
    "hierret.chunking": "hierret.structure.chunking",
    "hierret.hierarchy": "hierret.structure.hierarchy",
    "hierret.levels": "hierret.search.vectors.levels",
    "hierret.late": "hierret.search.vectors.late",
    "hierret.index": "hierret.search.vectors.index",
    "hierret.embed_ray": "hierret.encoders.embed.ray",
    "hierret.profile": "hierret.search.profile",
    "hierret.runs": "hierret.search.runs",
    "hierret.lifting": "hierret.search.lifting",
    "hierret.hits": "hierret.search.hits",
    # the floors: at most eight packages at the top, so six went inside their concept's
    "hierret.vectors": "hierret.search.vectors",
    "hierret.vectors._exact": "hierret.search.vectors._exact",
    "hierret.vectors.index": "hierret.search.vectors.index",
    "hierret.vectors.late": "hierret.search.vectors.late",
    "hierret.vectors.levels": "hierret.search.vectors.levels",
    "hierret.rankers": "hierret.search.rankers",
    "hierret.rankers.analyzer": "hierret.search.rankers.analyzer",
    "hierret.rankers.bm25": "hierret.search.rankers.bm25",
    "hierret.rankers.fusion": "hierret.search.rankers.fusion",
    "hierret.rerank": "hierret.search.rerank",
    "hierret.rerank.base": "hierret.search.rerank.base",
    "hierret.rerank.cross_encoder": "hierret.search.rerank.cross_encoder",
    "hierret.rerank.dense": "hierret.search.rerank.dense",
    "hierret.rerank.maxsim": "hierret.search.rerank.maxsim",
    "hierret.rerank.selection": "hierret.search.rerank.selection",
    "hierret.cache": "hierret.encoders.cache",
    "hierret.cache._encoder": "hierret.encoders.cache._encoder",
    "hierret.cache._errors": "hierret.encoders.cache._errors",
    "hierret.cache._format": "hierret.encoders.cache._format",
    "hierret.cache._keys": "hierret.encoders.cache._keys",
    "hierret.cache._plan": "hierret.encoders.cache._plan",
    "hierret.cache._shelf": "hierret.encoders.cache._shelf",
    "hierret.cache._store": "hierret.encoders.cache._store",
    "hierret.embed": "hierret.encoders.embed",
    "hierret.embed.local": "hierret.encoders.embed.local",
    "hierret.embed.ray": "hierret.encoders.embed.ray",
    "hierret.embed.stream": "hierret.encoders.embed.stream",
    "hierret.stats": "hierret.evaluation.stats",
    "hierret.stats._common": "hierret.evaluation.stats._common",
    "hierret.stats.comparison": "hierret.evaluation.stats.comparison",
    "hierret.stats.evidence": "hierret.evaluation.stats.evidence",
    "hierret.stats.folds": "hierret.evaluation.stats.folds",
    "hierret.stats.montecarlo": "hierret.evaluation.stats.montecarlo",
    "hierret.stats.multiplicity": "hierret.evaluation.stats.multiplicity",
    "hierret.stats.proportions": "hierret.evaluation.stats.proportions",
    "hierret.stats.resampling": "hierret.evaluation.stats.resampling",
    "hierret.stats.settings": "hierret.evaluation.stats.settings",
}


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the paths of :data:`MOVED` and loads each as its new module (one object).

    Examples
    --------
    >>> MovedFinder().find_spec("hierret.cli", None) is None
    True
    >>> MovedFinder().find_spec("hierret.units", None).name
    'hierret.units'
    """

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old path that this finder loads; ``None`` for any other name."""
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def exec_module(self, module: ModuleType) -> None:
        """Put the new module where the old path's placeholder is; warn that the path goes.

        The import system returns what :data:`sys.modules` holds under the name once this
        returns: the new module itself, run once under its own name and spec."""
        old = module.__name__
        new = MOVED[old]
        warnings.warn(
            f"{old} is now {new}: import it from there (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
        sys.modules[old] = importlib.import_module(new)


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the import statement.

    :func:`warnings.warn` skips the import system's own frames as it counts; this
    module's frames are counted and passed over here."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (_importlib(frame) or frame.f_globals is globals()):
        frame = frame.f_back
        level += frame is not None and not _importlib(frame)
    return level


def _importlib(frame: FrameType) -> bool:
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def install() -> None:
    """Put one :class:`MovedFinder` first on :data:`sys.meta_path` (again: nothing changes)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
