"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Every file hierret writes for later reading (cached vectors, saved indexes,
TREC runs and qrels, result records, downloads, the compiled e5 engine) goes
through :func:`atomic_write`: the bytes go to a temporary file in the target's
folder, which is flushed to disk and then moved over the target with
:func:`os.replace`; on any failure the temporary file is removed and the target
is left as it was.

Files get the mode a plain :func:`open` would give them under the current
umask (``0o666 & ~umask``; ``0o777 & ~umask`` for an executable), not
:func:`tempfile.mkstemp`'s ``0o600``, so a group-shared cache or results folder
stays readable by its group.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["TEMP_PREFIX", "atomic_write", "create_temp"]

#: Name prefix of the temporary files :func:`atomic_write` leaves behind only
#: if the process dies mid-write (the vector cache sweeps old ones away).
TEMP_PREFIX = ".tmp-"

#: What :func:`atomic_write` writes: bytes, text (UTF-8), or a function given the open file.
Content = bytes | str | Callable[[BinaryIO], object]


def create_temp(folder: Path, executable: bool = False) -> tuple[int, Path]:
    """A new, empty temporary file in ``folder``, with the mode :func:`open` would give.

    Parameters
    ----------
    folder : Path
        An existing folder; the file is named ``.tmp-<16 hex digits>.part``.
    executable : bool, default False
        Mode ``0o777 & ~umask`` instead of ``0o666 & ~umask``.

    Returns
    -------
    tuple of (int, Path)
        An open write-only file descriptor, and the file's path.

    Raises
    ------
    OSError
        The folder does not exist or cannot be written (e.g. a
        :class:`PermissionError`).

    Examples
    --------
    >>> import stat, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     fd, tmp = create_temp(Path(folder))
    ...     os.close(fd)
    ...     old = os.umask(0o022)
    ...     fd, tmp2 = create_temp(Path(folder))
    ...     _ = os.umask(old)
    ...     os.close(fd)
    ...     tmp.name.startswith(TEMP_PREFIX), oct(stat.S_IMODE(tmp2.stat().st_mode))
    (True, '0o644')
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    mode = 0o777 if executable else 0o666  # os.open applies the umask to it
    while True:
        tmp = folder / f"{TEMP_PREFIX}{os.urandom(8).hex()}.part"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:  # pragma: no cover - 64 random bits collided
            continue


def atomic_write(
    path: str | os.PathLike[str], content: Content, *, executable: bool = False
) -> Path:
    """Write ``content`` to ``path`` so that no reader ever sees a partial file.

    Parameters
    ----------
    path : str or Path
        The target; its folder must exist. An existing file is replaced.
    content : bytes, str or callable
        The bytes, a text (written as UTF-8), or a function that writes into
        the open binary file it is given (e.g. ``lambda f: np.save(f, a)``);
        whatever the function raises is raised here, after clean-up.
    executable : bool, default False
        Give the file mode ``0o777 & ~umask`` (e.g. a compiled library)
        instead of ``0o666 & ~umask``.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OSError
        The folder is missing or not writable, or the disk is full; nothing
        is left behind and ``path`` is unchanged.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = atomic_write(Path(folder) / "run.txt", "q1 Q0 d1 1 0.5 x\\n")
    ...     def fail(f):
    ...         f.write(b"half")
    ...         raise RuntimeError("writer failed")
    ...     try:
    ...         atomic_write(target, fail)
    ...     except RuntimeError:
    ...         pass
    ...     target.read_text(), sorted(p.name for p in Path(folder).iterdir())
    ('q1 Q0 d1 1 0.5 x\\n', ['run.txt'])
    """
    path = Path(path)
    fd, tmp = create_temp(path.parent, executable)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(content, str):
                f.write(content.encode("utf-8"))
            elif isinstance(content, bytes):
                f.write(content)
            else:
                content(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
