"""What is wrong with a path that leads nowhere: a symbolic link loop, or a dangling link.

``Path.is_dir()`` and ``Path.is_file()`` answer ``False`` for both, so without
this check a loader says "no such folder" or "a folder without corpus.jsonl"
about a path that is there, and :meth:`pathlib.Path.resolve` raises a bare
``RuntimeError`` on a loop. The loaders ask :func:`broken_link` first and name
what the path is.

Examples
--------
>>> import os, tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> loop, dangling = os.path.join(tmp.name, "loop"), os.path.join(tmp.name, "old")
>>> os.symlink("loop", loop)
>>> os.symlink("moved-away", dangling)
>>> broken_link(loop)
'a symbolic link loop (following it leads back to itself)'
>>> broken_link(dangling)
"a symbolic link to 'moved-away', which does not exist"
>>> broken_link(os.path.join(loop, "corpus.jsonl"))  # doctest: +ELLIPSIS
'a path through a symbolic link loop (...)'
>>> broken_link(tmp.name) is None, broken_link(os.path.join(tmp.name, "absent")) is None
(True, True)
>>> tmp.cleanup()
"""

from __future__ import annotations

import errno
import os

__all__ = ["broken_link"]


def broken_link(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is, when it is a link that leads nowhere; ``None`` otherwise.

    Parameters
    ----------
    path : path-like
        Any path; one that simply does not exist (no link) gives ``None``.

    Returns
    -------
    str or None
        ``"a symbolic link loop (...)"`` when following it (or a folder link on
        the way) never ends, ``"a symbolic link to 'x', which does not exist"``
        when its target is missing.
    """
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            if os.path.islink(path):
                return "a symbolic link loop (following it leads back to itself)"
            return "a path through a symbolic link loop (a link on the way leads back to itself)"
        if isinstance(err, FileNotFoundError) and os.path.islink(path):
            return f"a symbolic link to {os.readlink(path)!r}, which does not exist"
    return None
