"""Corpus loaders: one module per corpus, and :func:`load` in front of them all."""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.datasets.beir import BeirDataset, BeirDataWarning, BeirFormatError, load_beir
    from hierret.datasets.bundle import Bundle, load, local_or_named, sample_documents, source_names
    from hierret.datasets.download import (
        ChecksumError,
        CorruptArchiveError,
        DataFormatError,
        DataNotFoundError,
        DownloadDeadlineError,
        DownloadError,
        data_home,
    )
    from hierret.datasets.folder import (
        FolderDataset,
        FolderDataWarning,
        FolderFormatError,
        load_folder,
    )
    from hierret.datasets.gold import GoldSet, default_gold_path, load_gold, locate
    from hierret.datasets.python_reference import load_python_reference
    from hierret.datasets.qasper import QasperDataset, QasperFormatError, QasperStats, load_qasper
    from hierret.datasets.synthetic import SectionedDataset, build_sectioned

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "BeirDataset": "hierret.datasets.beir",
    "BeirDataWarning": "hierret.datasets.beir",
    "BeirFormatError": "hierret.datasets.beir",
    "load_beir": "hierret.datasets.beir",
    "Bundle": "hierret.datasets.bundle",
    "load": "hierret.datasets.bundle",
    "local_or_named": "hierret.datasets.bundle",
    "sample_documents": "hierret.datasets.bundle",
    "source_names": "hierret.datasets.bundle",
    "ChecksumError": "hierret.datasets.download",
    "CorruptArchiveError": "hierret.datasets.download",
    "DataFormatError": "hierret.datasets.download",
    "DataNotFoundError": "hierret.datasets.download",
    "DownloadDeadlineError": "hierret.datasets.download",
    "DownloadError": "hierret.datasets.download",
    "data_home": "hierret.datasets.download",
    "FolderDataset": "hierret.datasets.folder",
    "FolderDataWarning": "hierret.datasets.folder",
    "FolderFormatError": "hierret.datasets.folder",
    "load_folder": "hierret.datasets.folder",
    "GoldSet": "hierret.datasets.gold",
    "default_gold_path": "hierret.datasets.gold",
    "load_gold": "hierret.datasets.gold",
    "locate": "hierret.datasets.gold",
    "load_python_reference": "hierret.datasets.python_reference",
    "QasperDataset": "hierret.datasets.qasper",
    "QasperFormatError": "hierret.datasets.qasper",
    "QasperStats": "hierret.datasets.qasper",
    "load_qasper": "hierret.datasets.qasper",
    "SectionedDataset": "hierret.datasets.synthetic",
    "build_sectioned": "hierret.datasets.synthetic",
}

__all__ = [
    "BeirDataWarning",
    "BeirDataset",
    "BeirFormatError",
    "Bundle",
    "ChecksumError",
    "CorruptArchiveError",
    "DataFormatError",
    "DataNotFoundError",
    "DownloadDeadlineError",
    "DownloadError",
    "FolderDataWarning",
    "FolderDataset",
    "FolderFormatError",
    "GoldSet",
    "QasperDataset",
    "QasperFormatError",
    "QasperStats",
    "SectionedDataset",
    "build_sectioned",
    "data_home",
    "default_gold_path",
    "load",
    "load_beir",
    "load_folder",
    "load_gold",
    "load_python_reference",
    "load_qasper",
    "local_or_named",
    "locate",
    "sample_documents",
    "source_names",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
