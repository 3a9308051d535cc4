"""hierret: retrieval over long structured documents, as reproducible research."""

__version__ = "0.1.0"

__all__ = ["__version__"]
