"""Corpus loaders: one module per corpus, and :func:`load` in front of them all."""

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
