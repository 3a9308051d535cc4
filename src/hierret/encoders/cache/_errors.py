"""What goes wrong with a vector cache folder, as exceptions and a warning naming the fix.

Private to :mod:`hierret.encoders.cache`, whose face lists every name here.
"""

from __future__ import annotations

from pathlib import Path

FIX = "set HIERRET_CACHE to a writable folder, or pass VectorCache(root=...)"


class CacheAccessError(OSError):
    """The vector cache folder cannot be used; :attr:`folder` names it."""

    def __init__(self, message: str, folder: Path) -> None:
        super().__init__(message)
        self.folder = folder


class CacheNotWritableError(CacheAccessError, PermissionError):
    """The vector cache folder cannot be created or written.

    Examples
    --------
    >>> import tempfile
    >>> from hierret.encoders.cache import VectorCache
    >>> from hierret.encoders import HashEncoder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> blocker = Path(tmp.name) / "a-file"
    >>> _ = blocker.write_text("not a folder")
    >>> cache = VectorCache(blocker)
    >>> try:
    ...     cache.check_writable(HashEncoder(dimension=4).identity)
    ... except CacheNotWritableError as err:
    ...     print(err.folder.parent == blocker, "HIERRET_CACHE" in str(err))
    True True
    >>> tmp.cleanup()
    """


class CacheNotReadableError(CacheAccessError, PermissionError):
    """A vector cache folder exists but cannot be listed."""


class CacheWriteError(CacheAccessError):
    """A write to the vector cache failed part way (a full disk, a folder made
    read-only meanwhile) when storing was the point of the call
    (:meth:`CachedEncoder.fill` with ``strict=True``: ``hierret embed``).

    Attributes
    ----------
    stored : int
        Vectors this call stored before the failure (kept).
    """

    def __init__(self, message: str, folder: Path, stored: int) -> None:
        super().__init__(message, folder)
        self.stored = stored


class CacheNotWritableWarning(UserWarning):
    """:class:`CachedEncoder` computed vectors it could not store."""


class MissingVectorsError(KeyError):
    """:meth:`VectorCache.lookup` was asked for texts that were never stored.

    Attributes
    ----------
    missing : list of str
        The texts not found, in request order.
    """

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing

    def __str__(self) -> str:  # KeyError would show the repr of the message
        return self.message
