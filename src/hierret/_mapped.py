"""Memory-mapped files that shrink under a reader: a clear error instead of SIGBUS.

Touching a page of a memory-mapped file past the file's current end kills the
process with SIGBUS (exit status -7, nothing on standard error; a Jupyter
kernel just dies). A file shrinks under a reader when a cache in use is
overwritten in place (``cp``, which truncates the target first; ``rsync
--inplace``), or when another machine rewrites it on a shared file system.
Python cannot recover from SIGBUS (returning from the handler faults again),
so the sizes are checked before the mapped bytes are touched:
:func:`check_mapped` asks the kernel for the current size of each mapped file
(one ``fstat`` of the mapping's own file descriptor, about a microsecond, so a
file replaced by a rename, whose old pages stay valid, is not mistaken for one
cut short) and raises :class:`MappedFileShrankError` naming the file, both
sizes, the likely cause and the fix, before anything is read.

What remains: a file cut during the read that follows the check (a window of
one block's read, microseconds to milliseconds) still ends the process with
SIGBUS; the check narrows the window from the lifetime of the mapping to that.

Examples
--------
>>> import os, tempfile
>>> import numpy as np
>>> tmp = tempfile.TemporaryDirectory()
>>> path = os.path.join(tmp.name, "v.bin")
>>> np.ones(4096, dtype=np.float32).tofile(path)
>>> vec = np.memmap(path, dtype=np.float32, mode="r")
>>> check_mapped([vec], "vectors")
>>> os.truncate(path, 100)  # cp over a file in use truncates it first
>>> try:
...     check_mapped([vec], "vectors")
... except MappedFileShrankError as err:
...     print(err.mapped, err.size, "shrank from 16384 to 100 bytes" in str(err))
16384 100 True
>>> del vec
>>> tmp.cleanup()
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable

__all__ = ["MappedFileShrankError", "check_extents", "check_mapped", "mapped_extent"]


class MappedFileShrankError(OSError):
    """A memory-mapped file is now shorter than its mapping: reading it would SIGBUS.

    Attributes
    ----------
    path : str
        The file.
    mapped, size : int
        Bytes the mapping covers (from the file's start), and the file's size now.
    """

    def __init__(self, message: str, path: str, mapped: int, size: int) -> None:
        super().__init__(message)
        self.path = path
        self.mapped = mapped
        self.size = size


def mapped_extent(array: object) -> tuple[mmap.mmap, int, str] | None:
    """The mapping behind ``array`` (a :class:`numpy.memmap` or a view of one), the
    bytes of its file it covers (from the file's start), and the file's name;
    ``None`` for an array in memory."""
    mm = getattr(array, "_mmap", None)
    if not isinstance(mm, mmap.mmap):
        return None
    offset = int(getattr(array, "offset", 0) or 0)
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    return mm, start + len(mm), str(getattr(array, "filename", "") or "a mapped file")


def check_mapped(arrays: Iterable[object], what: str) -> None:
    """Raise :class:`MappedFileShrankError` if the file behind any of ``arrays`` is
    now shorter than its mapping (arrays in memory are skipped).

    Parameters
    ----------
    arrays : iterable
        :class:`numpy.memmap` objects or views of them.
    what : str
        What the file holds, for the message (e.g. ``"vectors"``).
    """
    check_extents([e for e in map(mapped_extent, arrays) if e is not None], what)


def check_extents(extents: Iterable[tuple[mmap.mmap, int, str]], what: str) -> None:
    """:func:`check_mapped` for extents found once with :func:`mapped_extent`
    (what a reader checking before every access keeps: one ``fstat`` each)."""
    for mm, need, path in extents:
        try:
            size = mm.size()  # fstat of the mapping's own descriptor: the mapped inode
        except (OSError, ValueError):  # a closed mapping: nothing of it can be read
            size = 0
        if size < need:
            raise MappedFileShrankError(
                f"{path} shrank from {need} to {size} bytes while its {what} were "
                "memory-mapped here (a cp or rsync --inplace over a cache in use, or "
                "another machine rewriting it on a shared file system); reading it would "
                "kill this process (SIGBUS), so nothing of it was read. Open it again "
                "(a new VectorCache, then .mapped() and a new MappedIndex) to read the "
                "files as they are now; to copy a cache in use, copy it to a new folder "
                "and rename that into place, never over the files being read",
                path,
                need,
                size,
            )
