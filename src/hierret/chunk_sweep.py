"""A chunking sweep: one corpus cut at several passage sizes, searched with the same profiles.

Passages of different sizes are different units, so a sweep compares them
where they meet: at a coarser target (sections or documents), through
:func:`hierret.experiment.run`, each passage ranking lifted to the target.
:func:`chunking_sweep` builds one :class:`~hierret.search.Searcher` per
setting (same encoder, so a :class:`~hierret.cache.CachedEncoder` embeds each
passage text once); :meth:`ChunkingSweep.arms` names one arm per profile and
size, ``"{profile}-{max_chars}"``, and :meth:`ChunkingSweep.family` declares
each other size against one; :meth:`ChunkingSweep.table` says what each
size costs (passages, share over the encoder's window); :meth:`ChunkingSweep.plot`
draws a metric against the size, with its intervals.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.units import Corpus, Document
>>> text = "Cats\\n====\\n\\n" + "Cats purr softly. " * 20 + "\\n\\nDogs\\n====\\n\\nDogs bark.\\n"
>>> sweep = chunking_sweep(Corpus("pets", [Document("d", "Pets", text)]),
...                        HashEncoder(dimension=16, window=40), [(120, 24), (240, 48)])
>>> sweep.table()[["overlap_chars", "passages"]].to_dict("index")
{120: {'overlap_chars': 24, 'passages': 4}, 240: {'overlap_chars': 48, 'passages': 2}}
>>> sorted(sweep.arms({"dense": Profile()}))
['dense-120', 'dense-240']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hierret.encoders import Encoder, truncation_report
from hierret.experiment import Arm
from hierret.hierarchy import HEADING_STYLES, build_hierarchy
from hierret.profile import Profile
from hierret.search import Searcher
from hierret.units import Corpus

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["ChunkingSweep", "chunking_sweep"]


@dataclass(frozen=True)
class ChunkingSweep:
    """One searcher per passage size over the same corpus and encoder.

    Attributes
    ----------
    searchers : dict[int, Searcher]
        By ``max_chars``, in the order the settings were given.
    overlaps : dict[int, int]
        ``overlap_chars`` of each size.
    """

    searchers: dict[int, Searcher]
    overlaps: dict[int, int]

    @property
    def sizes(self) -> list[int]:
        """The ``max_chars`` of every setting, in order."""
        return list(self.searchers)

    def arms(self, profiles: Mapping[str, Profile], k: int | None = None) -> dict[str, Arm]:
        """One arm per profile and size, named ``"{profile}-{max_chars}"``.

        Parameters
        ----------
        profiles : mapping of str to Profile
            The profiles, by the name that starts each arm's name.
        k : int, optional
            Each arm's ranking length (default: that of :func:`~hierret.experiment.run`).

        Returns
        -------
        dict[str, Arm]
            Profile by profile, size by size; each arm carries its size's searcher.
        """
        return {
            f"{name}-{size}": Arm(profile, searcher, k)
            for name, profile in profiles.items()
            for size, searcher in self.searchers.items()
        }

    def family(self, name: str, baseline: int) -> list[tuple[str, str]]:
        """Every other size of profile ``name`` against its ``baseline`` size, as declared pairs.

        Examples
        --------
        >>> from hierret.encoders import HashEncoder
        >>> from hierret.units import Corpus, Document
        >>> sweep = chunking_sweep(Corpus("c", [Document("d", "D", "Cats purr.")]),
        ...                        HashEncoder(dimension=8), [(300, 60), (600, 120)])
        >>> sweep.family("dense", 600)
        [('dense-300', 'dense-600')]
        """
        if baseline not in self.searchers:
            raise ValueError(f"baseline size {baseline} is not swept: sizes {self.sizes}")
        return [(f"{name}-{size}", f"{name}-{baseline}") for size in self.sizes if size != baseline]

    def table(self) -> pd.DataFrame:
        """What each size makes: passages, and how many exceed the encoder's window.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``max_chars``: ``overlap_chars``, ``passages``,
            ``over_window`` (passages longer than the encoder's token window,
            which the encoder cuts) and ``over_window_share``.
        """
        rows = {}
        for size, s in self.searchers.items():
            report = truncation_report(s.encoder, s.texts("passages"))
            rows[size] = {
                "overlap_chars": self.overlaps[size],
                "passages": report.n_texts,
                "over_window": report.n_over_window,
                "over_window_share": report.share,
            }
        table = pd.DataFrame.from_dict(rows, orient="index")
        table.index.name = "max_chars"
        return table

    def plot(
        self, table: pd.DataFrame, names: Sequence[str], *, ax: Axes | None = None, ylabel: str = ""
    ) -> Axes:
        """Each profile's estimate against the passage size, with its interval.

        The y axis spans at least 0.1 (:func:`hierret.plots.readable_span`),
        so that differences read at their size beside the intervals.

        Parameters
        ----------
        table : pandas.DataFrame
            A table of :meth:`hierret.experiment.Result.table` over arms named
            by :meth:`arms`: ``mean`` (or ``rate``), ``low`` and ``high`` per arm.
        names : sequence of str
            The profile names to draw, one line each.
        ax : Axes, optional
            Where to draw; a new figure otherwise.
        ylabel : str
            The y axis label (the metric and its target).
        """
        import matplotlib.pyplot as plt

        from hierret.plots import readable_span

        if ax is None:
            _, ax = plt.subplots(figsize=(6.5, 3.4))
        value = "rate" if "rate" in table.columns else "mean"
        sizes = np.array(self.sizes, dtype=float)
        gap = float(np.diff(np.sort(sizes)).min()) if len(sizes) > 1 else float(sizes[0])
        for i, name in enumerate(names):  # side by side, so that intervals do not overlap
            rows = table.loc[[f"{name}-{size}" for size in self.sizes]]
            est = rows[value].to_numpy(dtype=float)
            err = [
                est - rows["low"].to_numpy(dtype=float),
                rows["high"].to_numpy(dtype=float) - est,
            ]
            x = sizes + (i - (len(names) - 1) / 2) * 0.04 * gap
            ax.errorbar(x, est, yerr=err, marker="o", capsize=4, label=name)
        level = table.attrs.get("confidence")
        interval = f" ({level:.0%} intervals)" if level else ""
        ax.set_xlabel("passage size, max_chars (characters)")
        ax.set_ylabel(ylabel + interval)
        ax.set_xticks(self.sizes)
        ax.set_xlim(sizes.min() - gap / 2, sizes.max() + gap / 2)
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
        return readable_span(ax, 0.1)  # a 0.005 difference should look like one


def chunking_sweep(
    corpus: Corpus,
    encoder: Encoder,
    settings: Sequence[tuple[int, int]],
    heading_styles: Sequence[str] = HEADING_STYLES,
) -> ChunkingSweep:
    """Cut ``corpus`` at each ``(max_chars, overlap_chars)`` and make a searcher for each.

    Parameters
    ----------
    corpus : Corpus
    encoder : Encoder
        Shared by every searcher (wrap it in a
        :class:`~hierret.cache.CachedEncoder` so nothing is embedded twice).
    settings : sequence of (int, int)
        Passage size and overlap (:func:`~hierret.hierarchy.build_hierarchy`),
        each ``max_chars`` once.
    heading_styles : sequence of str
        Passed to :func:`~hierret.hierarchy.build_hierarchy` (the bundle's own,
        :attr:`hierret.datasets.Bundle.heading_styles`).

    Returns
    -------
    ChunkingSweep

    Raises
    ------
    ValueError
        No settings, or a ``max_chars`` given twice.
    """
    sizes = [size for size, _ in settings]
    if not sizes:
        raise ValueError("no settings: give at least one (max_chars, overlap_chars)")
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"each max_chars once: got {sizes}")
    searchers = {
        size: Searcher(
            build_hierarchy(
                corpus, max_chars=size, overlap_chars=overlap, heading_styles=heading_styles
            ),
            encoder,
        )
        for size, overlap in settings
    }
    return ChunkingSweep(searchers, dict(settings))
