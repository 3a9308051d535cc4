"""DR-001's comparisons read into its record: chunking against whole units, and beside it.

The chunking notebook (``02_dr001_chunking``) runs its comparisons one by one,
each shown as it is explained: passages against whole units at hit@1, the
three rankers, BM25's analyzer, the passage sizes, SciFact. :class:`Chunking`
holds what they produced and writes the record's values from their tables,
under the keys ``DECISIONS.md`` quotes (:func:`hierret.publish.record.table_values`
makes each key from a table's labels), so the notebook's last cell says what is
recorded, not how each key is spelt.

Examples
--------
>>> from hierret.encoders import HashEncoder
>>> from hierret.search.profile import Profile
>>> from hierret.evaluation.stats import StatsSettings
>>> from hierret.study.testbed import Testbed
>>> bed, enc = Testbed.load("python-reference", max_queries=4, max_docs=6), HashEncoder(16)
>>> few = StatsSettings(n_resamples=50)
>>> def against_whole(t):
...     arms = {"passages": Profile(), "whole": Profile(level=t)}
...     return bed.run(arms, enc, targets=[t], metrics=["hit@1"], baseline="whole",
...                    family=[("passages", "whole")], stats=few)
>>> whole = {t: against_whole(t) for t in ("sections", "documents")}
>>> rankers = bed.run({r: Profile(ranker=r) for r in ("dense", "bm25", "hybrid")}, enc,
...                   metrics=["ndcg@10", "hit@5"], stats=few)
>>> bm25 = {a: Profile(ranker="bm25", analyzer=a) for a in ("english", "whitespace")}
>>> analyzer = bed.run(bm25, enc, baseline="whitespace", stats=few)
>>> sweep = bed.sweep(enc, [(900, 180)])
>>> sizes = bed.run(sweep.arms({"dense": Profile()}), enc, targets=["sections"], stats=few)
>>> study = Chunking(bed, enc, whole, rankers, analyzer, sweep, sizes)
>>> run = {"max_chars": 900, "overlap_chars": 180, "rrf_k": 60, "pool": 100,
...        "confidence": 0.95, "margin": 0.02}
>>> values = study.values(run)
>>> [k for k in values if k.startswith("hit1_sec_")][:3]
['hit1_sec_passages', 'hit1_sec_passages_rate', 'hit1_sec_passages_low']
>>> values["n_questions"], values["max_chars"], values["rrf_k"]
(4, 900, 60)
>>> list(study.identity(run))[-2:]
['parameters', 'encoder']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hierret.encoders.base import Encoder
from hierret.publish.record import table_values
from hierret.search.profile import RANKERS
from hierret.study.result import Result
from hierret.study.sweep import ChunkingSweep
from hierret.study.testbed import Testbed

__all__ = ["RECORDED", "Chunking"]

#: The columns of each hit@1 table recorded per arm, and those of the passages' test.
_HIT1_ARMS = {"hits": "", "rate": "rate", "low": "low", "high": "high"}
_HIT1_TEST = ("n", "diff", "diff_low", "diff_high", "p", "only_arm", "only_base")
_ANALYZER = ("mean", "low", "high", "diff", "diff_low", "diff_high", "p")
#: The settings the record holds as they ran, after the corpus's counts.
RECORDED = ("overlap_chars", "rrf_k", "pool", "confidence", "margin")


@dataclass(frozen=True)
class Chunking:
    """What DR-001's comparisons produced, and the record's values read from their tables.

    Parameters
    ----------
    bed : Testbed
        The corpus and the hierarchy the arms ran on (its counts are recorded).
    encoder : Encoder
        The encoder every arm embedded with (the record's identity names it).
    whole : mapping of str to Result
        Passages against whole units at hit@1, by target: ``sections`` first,
        then ``documents`` (arms ``passages`` and ``whole``).
    rankers : Result
        The three rankers over passages (``ndcg@10`` and ``hit@5`` at ``passages``).
    analyzer : Result
        BM25 by analyzer (``ndcg@10`` at ``passages``).
    sweep : ChunkingSweep
        The passage sizes swept.
    sizes : Result
        The sweep's arms at the ``sections`` target (``ndcg@10``).
    scifact : Result, optional
        The arms on SciFact (``ndcg@10`` at ``documents``); ``None`` when skipped.

    Raises
    ------
    ValueError
        ``whole`` does not hold ``sections`` then ``documents``.
    """

    bed: Testbed
    encoder: Encoder
    whole: Mapping[str, Result]
    rankers: Result
    analyzer: Result
    sweep: ChunkingSweep
    sizes: Result
    scifact: Result | None = None

    def __post_init__(self) -> None:
        if list(self.whole) != ["sections", "documents"]:
            raise ValueError(
                f"whole holds results at {list(self.whole)}: give sections, then documents"
            )

    def values(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """The record's values: every table's cells under their keys, the corpus's counts
        and the settings :data:`RECORDED`, in the order the record has always listed them.

        Parameters
        ----------
        parameters : mapping
            The notebook's settings as they stand (its ``globals()``): ``max_chars``
            (the size every other is tested against) and :data:`RECORDED`.

        Raises
        ------
        ValueError
            A table lacks a recorded arm or column
            (:func:`~hierret.publish.record.table_values`).
        KeyError
            ``parameters`` lacks ``max_chars`` or one of :data:`RECORDED`.
        """
        out: dict[str, Any] = {}
        if self.scifact is not None:
            sci = self.scifact
            out |= table_values(sci.table("documents", "ndcg@10"), "scifact")
            corpus = next(iter(sci.hierarchies.values())).corpus
            out |= {"scifact_queries": len(sci.queries), "scifact_docs": len(corpus)}
        for short, result in zip(("sec", "doc"), self.whole.values(), strict=True):
            t = result.table(result.targets[0], "hit@1")
            out |= table_values(t, f"hit1_{short}", ["passages", "whole"], _HIT1_ARMS)
            out |= table_values(t, f"hit1_{short}", {"passages": ""}, _HIT1_TEST)
        ranked = self.rankers
        out |= table_values(ranked.table("passages", "ndcg@10"), "ndcg")
        out |= table_values(ranked.table("passages", "hit@5"), "hit5", RANKERS, {"hits": ""})
        analyzer = self.analyzer.table("passages", "ndcg@10")
        out |= table_values(analyzer, "analyzer", columns=_ANALYZER)
        over, max_chars = self.sweep.table(), parameters["max_chars"]
        columns = ["over_window", "over_window_share"]
        out |= table_values(over, "", {max_chars: ""}, columns)
        if len(self.sweep.sizes) > 1:
            out |= table_values(over, "sweep", columns={"over_window_share": "over_window"})
            out |= table_values(self.sizes.table("sections", "ndcg@10"), "sweep")
        bed, h = self.bed, self.bed.hierarchy
        return out | {
            "n_questions": len(bed.queries),
            "n_passages": len(h.passages),
            "n_sections": len(h.units("sections")),
            "max_chars": max_chars,
            "n_documents": len(bed.bundle.corpus),
            **{name: parameters[name] for name in RECORDED},
        }

    def identity(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What the run was: the corpus and how it was sampled, its hierarchy, the
        notebook's ``parameters`` as run, and the encoder's identity."""
        return {
            **self.bed.bundle.identity(),
            **self.bed.hierarchy.identity(),
            "parameters": parameters,
            "encoder": self.encoder.identity.describe(),
        }
