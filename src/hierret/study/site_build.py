"""What the site build (``docs/*.py``) uses from :mod:`hierret.study`: a face of names.

Apart from the notebooks' face (:mod:`hierret.study`), so that each lists what
its readers call: :data:`SIZES`, :func:`check_parameters`,
:func:`notebook_parameters` and :class:`ParameterError` (a run's parameters
checked before it starts), :func:`explorer_script` (the casebook explorer's
script), :class:`CostModel`, :func:`distinct_corpora`, :func:`passages`,
:func:`efficiency`, :func:`record_bytes`,
:func:`throughput_range` and :func:`worker_throughput` (embedding past one
machine, predicted). Each name loads its module on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.study.casebook import explorer_script
    from hierret.study.params import (
        NOTEBOOK_ENV,
        SIZES,
        ParameterError,
        check_parameters,
        notebook_parameters,
    )
    from hierret.study.scale import (
        CostModel,
        distinct_corpora,
        efficiency,
        passages,
        record_bytes,
        throughput_range,
        worker_throughput,
    )

#: Each name and the module that defines it.
SITE = {
    "NOTEBOOK_ENV": "hierret.study.params",
    "SIZES": "hierret.study.params",
    "ParameterError": "hierret.study.params",
    "check_parameters": "hierret.study.params",
    "notebook_parameters": "hierret.study.params",
    "explorer_script": "hierret.study.casebook",
    "CostModel": "hierret.study.scale",
    "distinct_corpora": "hierret.study.scale",
    "passages": "hierret.study.scale",
    "efficiency": "hierret.study.scale",
    "record_bytes": "hierret.study.scale",
    "throughput_range": "hierret.study.scale",
    "worker_throughput": "hierret.study.scale",
}

__all__ = [
    "NOTEBOOK_ENV",
    "SIZES",
    "CostModel",
    "ParameterError",
    "check_parameters",
    "distinct_corpora",
    "efficiency",
    "explorer_script",
    "notebook_parameters",
    "passages",
    "record_bytes",
    "throughput_range",
    "worker_throughput",
]


if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, SITE)
