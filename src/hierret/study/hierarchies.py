"""Each corpus of a study at each passage size: its hierarchy, its searcher, its runs.

DR-004 and DR-005 (``05_dr004_hierarchy``, ``06_dr005_beyond``) ask the same
question over a grid: several corpora, each cut into passages of several
sizes, every arm run on each cell of the grid and judged at the same targets.
:class:`Hierarchies` is that grid as one study object, made from the
notebook's parameters: it loads the corpora, builds one hierarchy and one
:class:`~hierret.search.searcher.Searcher` per corpus and size (each index
built once, every arm sharing it), runs a set of arms on every cell
(:meth:`Hierarchies.compare`, :func:`hierret.study.experiment.run`), tests an
arm across sizes (:meth:`Hierarchies.between`), shows the corpora
(:meth:`Hierarchies.table`), the window pooling the indexes needed
(:meth:`Hierarchies.pooling`), and turns tables into the record's values
(:meth:`Hierarchies.values`) and the run's identity (:meth:`Hierarchies.identity`).

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.search.profile import Profile
>>> grid = Hierarchies.load(["python-reference"], [900, 1800], HashEncoder(dimension=16),
...                         max_queries=4, max_docs=6, k=20)
>>> sorted(grid.searchers)
[('python-reference', 900), ('python-reference', 1800)]
>>> results = grid.compare({"passages": Profile(), "sections": Profile(level="sections")},
...                        targets=["sections"], baseline="passages")
>>> results["python-reference", 900].table("sections", "ndcg@10")["n"].tolist()
[4.0, 4.0]
>>> tests = grid.tests(results, "ndcg@10", {"levels": [("sections", "passages")]},
...                    across="sections")
>>> tests.index.droplevel("comparison").unique().tolist()  # doctest: +NORMALIZE_WHITESPACE
[('levels', 'python-reference', 900), ('levels', 'python-reference', 1800),
 ('size', 'python-reference', 900)]
>>> grid.values(corpora=grid.table())
{'questions_pyref': 4, 'documents_pyref': 6}
>>> swept = grid.sweep(Profile(level="fused"), {"section_weight": [0.0, 1.0]},
...                    "python-reference", targets=["sections"])
>>> swept.table()[["section_weight", "n"]].values.tolist()
[[0.0, 4.0], [1.0, 4.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pandas as pd

import hierret.study.experiment as experiment
from hierret.datasets import Bundle, load, local_or_named
from hierret.encoders.base import Encoder
from hierret.encoders.cache import cached_encoder
from hierret.evaluation.stats import DEFAULT_STATS, StatsSettings
from hierret.evaluation.stats.evidence import Ledger
from hierret.publish.record import table_values
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.search.vectors.levels import PoolingReport
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Level
from hierret.study.pooling import Pooling
from hierret.study.result import LEDGER, Result, between
from hierret.study.sweep import Swept

#: A cell of the grid: (corpus name, passage size in characters).
Cell = tuple[str, int]
#: How a kind of table is recorded: its key template
#: (:func:`hierret.publish.record.table_values`), the columns it records (each
#: with its name in the key; ``None``: every column of the table, its index
#: aside) and what is done to the table, its index reset, before its keys are made.
Keys = tuple[
    str, Sequence[str] | Mapping[str, str] | None, Callable[[pd.DataFrame], pd.DataFrame] | None
]
#: Labels shortened in record keys, by field.
SHORT = {
    "corpus": {"python-reference": "pyref", "scifact-sections": "scifact"},
    "target": {"documents": "doc", "sections": "section"},
}
_MEAN = {"mean": "", "low": "low", "high": "high"}  # a mean and its interval
_DIFF = ["diff", "diff_low", "diff_high", "p_holm"]  # a paired test


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    return frame


def _weights(frame: pd.DataFrame) -> pd.DataFrame:
    """A weight sweep's rows keyed by the weight in tenths and the target's first letters."""
    return frame.assign(
        w=(frame["section_weight"] * 10).round().astype(int), target=frame["target"].str[:3]
    )


#: What each kind of table a hierarchy study records is keyed by (:meth:`Hierarchies.values`).
KEYS: dict[str, Keys] = {
    # each arm's mean and interval per corpus, size and target (Oracle.tables)
    "arms": ("{corpus}_{chars}_{target}_{arm}_{column}", _MEAN, None),
    # each corpus's questions and documents (Hierarchies.table)
    "corpora": ("{column}_{corpus}", ["questions", "documents"], None),
    # paired tests per corpus and size (Result.tests, concatenated)
    "tests": ("test_{corpus}_{chars}_{arm_a}_{target}_{arm_b}_{column}", _DIFF, None),
    # the same, each arm named with its target (DR-004's keys)
    "tests_at": ("test_{corpus}_{chars}_{arm_a}_{target}_{arm_b}_{target}_{column}", _DIFF, None),
    # a setting chosen out of fold per vector strategy (Swept.out_of_fold)
    "out_of_fold": (
        "oof_{vectors}_{target}_{column}",
        _MEAN | {"chosen_min": "min", "chosen_max": "max"},
        None,
    ),
    # window pooling per corpus and level (Hierarchies.pooling)
    "pooling": (
        "{column}_{corpus}_{level}",
        {"pooled": "pooled", "units": "units", "max windows": "maxwin"},
        None,
    ),
    # the section weight swept (Swept.table)
    "weights": ("weight_{vectors}_{w:02d}_{target}", {"mean": ""}, _weights),
    # the context late-chunked passages received (LateChunking.table)
    "late": ("late_{corpus}_{chars}_{column}", None, None),
    # auto-merging with its threshold chosen out of fold (tune_automerge, concatenated)
    "merging": ("merge_{corpus}_{chars}_{target}_{column}", None, None),
    # questions won, tied and lost per pair (Result.wins, concatenated)
    "wins": ("w_{corpus}_{chars}_{a}_{target}_{b}_{column}", ["wins", "ties", "losses"], None),
    # time per passage on this machine (LateChunking.cost)
    "cost": ("cost_{method}_{column}", None, None),
}

__all__ = ["KEYS", "SHORT", "Cell", "Hierarchies", "Keys"]


class Hierarchies:
    """Corpora, each built at each passage size, with one searcher per build.

    Parameters
    ----------
    bundles : mapping of str to Bundle
        The corpora, by the name the study gives them (table columns, record keys).
    chunk_chars : sequence of int
        The passage sizes (``max_chars``); passages overlap by a fifth of their size.
    encoder : Encoder
        Embeds every unit (a cached encoder embeds each text once).
    k : int, default 100
        Length of every arm's rankings (an :class:`~hierret.study.experiment.Arm`
        may set its own).
    stats : StatsSettings, optional
        Interval level and resampling settings of every table and test.

    Attributes
    ----------
    hierarchies, searchers : dict
        By :data:`Cell` ``(corpus, chars)``, corpora in the given order, sizes
        within each.

    Raises
    ------
    ValueError
        No corpus, or no passage size.
    """

    def __init__(
        self,
        bundles: Mapping[str, Bundle],
        chunk_chars: Sequence[int],
        encoder: Encoder,
        *,
        k: int = 100,
        stats: StatsSettings = DEFAULT_STATS,
    ) -> None:
        if not bundles or not chunk_chars:
            raise ValueError(
                "give at least one corpus and one passage size (chunk_chars=[900]): "
                f"got {len(bundles)} corpora and sizes {list(chunk_chars)}"
            )
        self.bundles, self.chunk_chars = dict(bundles), list(chunk_chars)
        self.encoder, self.k, self.stats = encoder, k, stats
        self.hierarchies: dict[Cell, Hierarchy] = {
            (name, chars): build_hierarchy(
                b.corpus,
                max_chars=chars,
                overlap_chars=chars // 5,
                heading_styles=b.heading_styles,
            )
            for name, b in self.bundles.items()
            for chars in self.chunk_chars
        }
        self.searchers = {c: Searcher(h, encoder) for c, h in self.hierarchies.items()}

    @classmethod
    def load(
        cls,
        corpora: Sequence[str],
        chunk_chars: Sequence[int],
        encoder: str | Encoder,
        *,
        files: Mapping[str, str] | None = None,
        max_queries: int | None = None,
        max_docs: int | None = None,
        seed: int = 0,
        k: int = 100,
        confidence: float = DEFAULT_STATS.confidence,
        n_resamples: int = DEFAULT_STATS.n_resamples,
    ) -> Hierarchies:
        """Load each corpus (:func:`hierret.datasets.load`) and build the grid.

        Parameters
        ----------
        corpora : sequence of str
            Corpus names or paths; each is keyed by its name, or a path's last part.
        chunk_chars : sequence of int
        encoder : str or Encoder
            A name is loaded behind the vector cache
            (:func:`hierret.encoders.cache.cached_encoder`).
        files : mapping of str to str, optional
            A file to prefer for a named corpus (:func:`hierret.datasets.local_or_named`:
            ``{"qasper": qasper_file}``).
        max_queries, max_docs, seed
            The one sampler's settings (:func:`hierret.datasets.load`); ``seed``
            seeds the resampling too.
        k : int, default 100
            As the class takes it.
        confidence, n_resamples
            With ``seed``, the :class:`~hierret.evaluation.stats.StatsSettings` of every
            interval and test.
        """
        bundles = {
            cls.name(n): load(
                local_or_named(n, dict(files or {})),
                max_queries=max_queries,
                max_docs=max_docs,
                seed=seed,
            )
            for n in corpora
        }
        enc = cached_encoder(encoder) if isinstance(encoder, str) else encoder
        stats = StatsSettings(confidence, n_resamples, seed)
        return cls(bundles, chunk_chars, enc, k=k, stats=stats)

    @property
    def ledger(self) -> Ledger:
        """Where the tests of the grid's results are kept (:data:`hierret.study.LEDGER`):
        what :func:`hierret.publish.publish` writes the record's evidence from."""
        return LEDGER

    @property
    def corpora(self) -> list[str]:
        """The corpora's names, in order."""
        return list(self.bundles)

    def table(self) -> pd.DataFrame:
        """One row per corpus (:meth:`hierret.datasets.Bundle.summary`), indexed ``corpus``."""
        rows = [b.summary() for b in self.bundles.values()]
        return pd.DataFrame(rows, index=self.corpora).rename_axis("corpus")

    def compare(
        self,
        arms: Mapping[str, Profile | experiment.Arm]
        | Callable[[Cell], Mapping[str, Profile | experiment.Arm]],
        *,
        targets: Sequence[Level],
        baseline: str | None = None,
        family: Sequence[tuple[str, str]] = (),
        metrics: Sequence[str] = ("ndcg@10",),
        searchers: Mapping[Cell, Searcher] | None = None,
    ) -> dict[Cell, Result]:
        """Run ``arms`` on every cell of the grid (:func:`hierret.study.experiment.run`).

        Parameters
        ----------
        arms : mapping of str to Profile or Arm, or a callable of a Cell
            The arms, by name; a bare profile runs on the cell's searcher. A
            callable gives each cell its arms (an arm searching with that cell's
            own vectors, say).
        targets, baseline, family, metrics
            As :func:`~hierret.study.experiment.run` takes them, the same on every cell.
        searchers : mapping of Cell to Searcher, optional
            The searcher of each cell, instead of :attr:`searchers` (one that
            reads other passage vectors, say).

        Returns
        -------
        dict of Cell to Result
            In the grid's order.
        """
        on = self.searchers if searchers is None else searchers
        return {
            (name, chars): experiment.run(
                arms((name, chars)) if callable(arms) else arms,
                self.bundles[name].queries,
                searcher=on[name, chars],
                targets=targets,
                metrics=metrics,
                baseline=baseline,
                family=family,
                k=self.k,
                stats=self.stats,
            )
            for name, chars in self.hierarchies
        }

    def between(
        self, results: Mapping[Cell, Result], arm: str, metric: str
    ) -> dict[Cell, pd.DataFrame]:
        """Per corpus, ``arm`` at each passage size against the first size, as one family.

        :func:`hierret.study.result.between` of each corpus's results, keyed by
        ``(corpus, first size)``.

        Raises
        ------
        KeyError
            ``results`` lacks a cell of the grid.
        """
        first = self.chunk_chars[0]
        return {
            (name, first): between({s: results[name, s] for s in self.chunk_chars}, arm, metric)
            for name in self.bundles
        }

    def tests(
        self,
        results: Mapping[Cell, Result],
        metric: str,
        families: Mapping[str, Sequence[tuple[str, str]]],
        *,
        across: str | None = None,
    ) -> pd.DataFrame:
        """Each family's paired tests on every cell, then ``across`` over the passage sizes.

        Parameters
        ----------
        results : mapping of Cell to Result
            What :meth:`compare` returned.
        metric : str
        families : mapping of str to sequence of (str, str)
            Each family's pairs by its name; on every cell a family is tested
            and Holm-adjusted apart (:meth:`hierret.study.result.Result.tests`),
            under the name ``"{family}, {corpus} {chars}"``.
        across : str, optional
            An arm tested at each passage size against the first, per corpus
            (:meth:`between`): the family ``"size"``.

        Returns
        -------
        pandas.DataFrame
            The tests, indexed ``(family, corpus, chars, comparison)``.
        """
        tests = {
            (f, *c): r.tests(metric, family=pairs, name=f"{f}, {c[0]} {c[1]}")
            for c, r in results.items()
            for f, pairs in families.items()
        }
        if across is not None:
            tests |= {("size", *c): t for c, t in self.between(results, across, metric).items()}
        return pd.concat(tests, names=["family", "corpus", "chars", "comparison"])

    def sweep(
        self,
        profile: Profile,
        settings: Mapping[str, Sequence[Any]],
        corpus: str,
        chars: int | None = None,
        **options: Any,
    ) -> Swept:
        """``profile`` at every combination of ``settings`` on one corpus at one passage
        size (default: the first), on that cell's searcher with the grid's ``k`` and
        statistics (:meth:`hierret.study.sweep.Swept.of`, which takes ``options``:
        ``targets``, ``metric``, ``qrels``).

        Raises
        ------
        KeyError
            ``corpus`` or ``chars`` is not in the grid.
        """
        cell = (self.name(corpus), self.chunk_chars[0] if chars is None else chars)
        if cell not in self.searchers:
            raise KeyError(f"{cell} is not a cell of the grid: one of {list(self.searchers)}")
        return Swept.of(
            profile,
            settings,
            self.bundles[cell[0]].queries,
            searcher=self.searchers[cell],
            k=self.k,
            stats=self.stats,
            **options,
        )

    @staticmethod
    def name(corpus: str) -> str:
        """The name a corpus goes by in the grid: its name, or a path's last part.

        Examples
        --------
        >>> Hierarchies.name("data/my-corpus"), Hierarchies.name("qasper")
        ('my-corpus', 'qasper')
        """
        return Path(corpus).name

    def pooling(self, vectors: str, chars: int | None = None) -> pd.DataFrame:
        """The window pooling ``vectors`` needed at passage size ``chars`` (default: the
        largest), per corpus (:meth:`hierret.study.pooling.Pooling.table`): read after
        the runs that built those vectors."""
        size = self.chunk_chars[-1] if chars is None else chars
        reports = {n: self.searchers[n, size].reports for n in self.bundles}
        return Pooling(cast(Mapping[str, Mapping[tuple[str, str], PoolingReport]], reports)).table(
            vectors
        )

    def values(self, **tables: pd.DataFrame) -> dict[str, int | float]:
        """Record values of ``tables``, each kind under its keys (:data:`KEYS`).

        Parameters
        ----------
        **tables : DataFrame
            Each table by its kind in :data:`KEYS` (``arms=oracle.tables``,
            ``corpora=grid.table()``...): its index levels and columns are the
            fields of the kind's key template, labels shortened as
            :data:`SHORT` says (:func:`hierret.publish.record.table_values`).

        Returns
        -------
        dict
            Key to value, table by table in the order given.

        Raises
        ------
        ValueError
            A kind :data:`KEYS` does not name, or a table that lacks a field
            or column of its kind's keys.
        """
        unknown = [kind for kind in tables if kind not in KEYS]
        if unknown:
            raise ValueError(
                f"no keys for tables {unknown}: name each table by its kind, one of "
                f"{', '.join(KEYS)}"
            )
        out: dict[str, int | float] = {}
        for kind, frame in tables.items():
            template, columns, prepare = KEYS[kind]
            flat = (prepare or _flat)(frame.reset_index()).replace(SHORT)
            own = list(frame.columns) if columns is None else columns
            out |= table_values(flat, columns=own, template=template)
        return out

    def identity(self, **more: Any) -> dict[str, Any]:
        """The encoder, then ``more`` (``parameters=``...), then each corpus's identity:
        what the record says the run was."""
        return {
            "encoder": self.encoder.identity.describe(),
            **more,
            "corpora": {n: b.identity() for n, b in self.bundles.items()},
        }
