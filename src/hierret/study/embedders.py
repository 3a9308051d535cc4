"""DR-002's tables read into its record: encoders compared on quality, cost and stability.

The embedders notebook (``03_dr002_embedders``) builds its tables one by one,
each shown as it is explained: the corpora with their noise floors, the mean
of each metric per corpus, ranker and encoder, the tests against the default,
the costs, the run-to-run variation and the normalisation ablation.
:class:`Embedders` holds them and writes the record's values under the keys
``DECISIONS.md`` quotes (:func:`hierret.publish.record.table_values` makes each
key from a table's labels), so the notebook's last cell says what is recorded,
not how each key is spelt.

Examples
--------
>>> import pandas as pd
>>> from hierret.encoders import HashEncoder
>>> from hierret.study.testbed import Testbed
>>> bed = Testbed.load("python-reference", max_queries=2, max_docs=3)
>>> sizes = pd.DataFrame({"python-reference": bed.summary()}).T
>>> sizes["1/n"] = 1 / sizes["questions"]
>>> from hierret.study.cost import Costs
>>> idx = pd.MultiIndex.from_tuples([("python-reference", "dense", "hash")])
>>> quality = pd.DataFrame({"ndcg@10": [0.5]}, index=idx)
>>> table = pd.DataFrame({"n": [2], "mean": [0.5], "p": [None], "diff": [None]}, index=["hash"])
>>> tables = {("python-reference", "dense", "ndcg@10"): table}
>>> frame = pd.DataFrame({"passages/s": [9.0], "latency ms": [2.0], "latency p90 ms": [3.0]},
...                      index=pd.MultiIndex.from_tuples([("python-reference", "hash")]))
>>> variation = pd.DataFrame({"max_abs_diff": [0.0], "min_cosine": [1.0]}, index=["hash"])
>>> ablation = pd.DataFrame({"ndcg@10 ip": [0.4], "ndcg@10 cosine": [0.5]}, index=["hash"])
>>> study = Embedders({"hash": HashEncoder(8)}, {"python-reference": bed}, sizes, quality,
...                   tables, Costs(frame, None), variation, 24, ablation)
>>> values = study.values({"margin": 0.02})
>>> [k for k in values if k.startswith(("pyref", "floor", "cost"))]
['pyref_questions', 'pyref_units', 'floor_pyref', 'pyref_dense_hash_ndcg10', \
'cost_pyref_hash_pps', 'cost_pyref_hash_latency_mean', 'cost_pyref_hash_latency_p90']
>>> values["norm_hash_ip"], values["variation_n_texts"], values["margin"]
(0.4, 24, 0.02)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hierret.encoders.base import Encoder
from hierret.evaluation.stats.settings import StatsSettings
from hierret.publish.record import table_values
from hierret.publish.roles import corpus_token
from hierret.study.cost import Costs
from hierret.study.testbed import Testbed

__all__ = ["FACTS", "Embedders"]

#: The record's machine facts (another machine measures them anew): costs and the
#: run-to-run variation's sizes, checked against the reference record.
FACTS = ("cost_*", "variation_*_m*")
_COST = {"passages/s": "pps", "latency ms": "latency_mean", "latency p90 ms": "latency_p90"}
_VARIATION = {"max_abs_diff": "maxabs", "min_cosine": "mincos"}


def _short(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its corpus labels (the first index level) as the record's keys
    name them (:func:`hierret.publish.roles.corpus_token`: ``pyref``, a folder's last
    part), so that the claims' roles find them; encoder and ranker labels are left."""
    if isinstance(frame.index, pd.MultiIndex):
        return frame.rename(index=corpus_token, level=0)
    return frame.rename(index=corpus_token)


@dataclass(frozen=True)
class Embedders:
    """DR-002's tables, and the record's values and identity read from them.

    Parameters
    ----------
    encoders : mapping of str to Encoder
        The encoders compared, by name (the record's identity describes each).
    beds : mapping of str to Testbed
        The corpora, by name (the identity holds how each was loaded and sampled).
    sizes : DataFrame
        Per corpus: ``questions``, ``units`` and the noise floor ``1/n``.
    quality : DataFrame
        The mean of each metric, by (corpus, ranker, encoder).
    tables : mapping of (str, str, str) to DataFrame
        Each :meth:`~hierret.study.result.Result.table` by (corpus, ranker,
        metric); those of nDCG@10 (each encoder against the default) are recorded.
    costs : Costs
        By (corpus, encoder): ``passages/s``, ``latency ms``, ``latency p90 ms``
        (:attr:`hierret.study.cost.Costs.frame`).
    variation : DataFrame
        Run-to-run variation by encoder: ``max_abs_diff`` and ``min_cosine``.
    variation_texts : int
        How many passages the variation embedded.
    ablation : DataFrame
        By encoder, its last two columns nDCG@10 by raw inner product and by cosine.
    prefix : DataFrame, optional
        e5-small's nDCG@10 with its query prefix on and off (a
        :meth:`~hierret.study.result.Result.table`); ``None`` when e5 did not run.
    """

    encoders: Mapping[str, Encoder]
    beds: Mapping[str, Testbed]
    sizes: pd.DataFrame
    quality: pd.DataFrame
    tables: Mapping[tuple[str, str, str], pd.DataFrame]
    costs: Costs
    variation: pd.DataFrame
    variation_texts: int
    ablation: pd.DataFrame
    prefix: pd.DataFrame | None = None

    #: the record's machine facts (:data:`FACTS`), for :meth:`hierret.study.Lesson.publish`
    facts = FACTS

    def values(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """The record's values, every table's cells under their keys (the query prefix's
        first, as the record has always listed them), and ``margin``
        (the ≥/≤ claims' margin) from ``parameters`` (the notebook's ``globals()``).

        Raises
        ------
        ValueError
            A table lacks a recorded column (:func:`~hierret.publish.record.table_values`).
        KeyError
            ``parameters`` has no ``margin``.
        """
        sizes, drop = _short(self.sizes), ["n", "mean", "p"]
        ndcg = {k[:2]: t for k, t in self.tables.items() if k[2] == "ndcg@10"}
        norm = self.ablation.iloc[:, -2:].set_axis(["ip", "cos"], axis=1)
        # e5_prefix_on_mean, e5_prefix_off_diff...
        prefix = {} if self.prefix is None else table_values(self.prefix, "e5")
        return prefix | {
            **table_values(sizes[["questions", "units"]]),
            **table_values(sizes, "floor", columns={"1/n": ""}),
            **table_values(_short(self.quality)),
            **table_values(_short(pd.concat(ndcg).drop(columns=drop)), "test"),
            **table_values(_short(self.costs.frame), "cost", columns=_COST),
            **table_values(self.variation, "variation", columns=_VARIATION),
            "variation_n_texts": self.variation_texts,
            **table_values(norm, "norm"),
            "margin": parameters["margin"],
        }

    def identity(self, stats: StatsSettings, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What the run was: each encoder's identity, each corpus as loaded, the
        statistics' settings and the notebook's ``parameters`` as run."""
        return {
            "encoders": {n: e.identity.describe() for n, e in self.encoders.items()},
            "corpora": {c: b.bundle.identity() for c, b in self.beds.items()},
            **stats.as_dict(),
            "parameters": parameters,
        }
