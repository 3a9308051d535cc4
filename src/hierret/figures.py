"""Figures saved where a build asks for them, and nowhere when it does not.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> save(plt.figure(), None, "unsaved.png")  # no folder asked for: nothing saved
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["save"]


def save(fig: Figure, folder: str | os.PathLike[str] | None, name: str,
         dpi: int = 150) -> None:
    """Save ``fig`` as ``folder/name`` (the folder made if needed), tightly cropped.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    folder : path-like or None
        Where the site build wants figures (a notebook's ``figures_dir``);
        ``None`` or ``""``: nothing is saved.
    name : str
        File name; its suffix chooses the format.
    dpi : int, default 150

    Notes
    -----
    Returns nothing, so a notebook cell ending with it shows no value.
    """
    if not folder:
        return
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
