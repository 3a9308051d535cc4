"""A profile: everything that decides a ranking, as one frozen value.

A :class:`Profile` names the level searched, the first-stage ranker, how
section and document vectors are made, the candidate pool, the fusion
settings, the reranker and the selection. :meth:`hierret.search.searcher.Searcher.run`
runs a profile exactly as given, for one typed question or for a whole
evaluation, so what is evaluated is what is searched. How many units come
back (``k``) is not part of the profile: it is an argument of ``run`` and
``search``.

:data:`DEFAULT` is the package's one default (DR-001: dense ranking of
passages, no reranker); the search class and the command line use it when
given nothing else.

Examples
--------
>>> DEFAULT.describe()
'default: passages, dense -> no reranker, min_score=None, min_keep=0, top_k=None'
>>> Profile(level="fused", ranker="hybrid", section_weight=0.5).describe()
'fused, hybrid (rawspan vectors, pool 100, rrf_k 60, section_weight 0.5) -> no reranker, \
min_score=None, min_keep=0, top_k=None'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from hierret._validate import check_count, check_weight
from hierret.search.rankers.analyzer import ANALYZERS
from hierret.search.rerank.selection import Selection

__all__ = [
    "DEFAULT",
    "RANKERS",
    "REORDER_ONLY",
    "SEARCH_LEVELS",
    "SHIPPED",
    "STRATEGIES",
    "Profile",
    "Ranker",
    "SearchLevel",
    "Strategy",
]

#: What a search ranks: one level's units, or sections by fused passage + section scores.
SearchLevel = Literal["passages", "sections", "documents", "fused"]
SEARCH_LEVELS: tuple[SearchLevel, ...] = ("passages", "sections", "documents", "fused")

#: First-stage rankers: cosine of unit vectors, BM25, or reciprocal rank fusion of both.
Ranker = Literal["dense", "bm25", "hybrid"]
RANKERS: tuple[Ranker, ...] = ("dense", "bm25", "hybrid")

#: How a section or document vector is made (:mod:`hierret.search.vectors.levels` makes them;
#: passages
#: are always embedded ``"first-window"``).
Strategy = Literal["rawspan", "centroid", "first-window"]
STRATEGIES: tuple[Strategy, ...] = ("rawspan", "centroid", "first-window")


def _check_choice(value: object, name: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"unknown {name} {value!r}: use one of {allowed}")


@dataclass(frozen=True)
class Profile:
    """One retrieval stack: first stage, fusion, reranker and selection.

    Parameters
    ----------
    name : str, default ""
        Label for tables and records.
    level : {"passages", "sections", "documents", "fused"}, default "passages"
        The units ranked; ``"fused"`` ranks sections by a blend of the passage
        ranking lifted to sections (each section scored by its best passage,
        a passage that straddles a heading counting for every section it
        overlaps) and the section ranking.
    ranker : {"dense", "bm25", "hybrid"}, default "dense"
        Cosine of unit vectors; BM25; or reciprocal rank fusion of the dense
        and BM25 rankings. Fused search ranks both of its legs with it.
    vectors : {"rawspan", "centroid", "first-window"}, default "rawspan"
        How section and document vectors are made (:mod:`hierret.search.vectors.levels`):
        the window-pooled raw span, the centroid of the unit's passages, or
        the unit's text as the encoder embeds it (cut at its window, DR-001's
        "whole units"). Passages are always embedded as the encoder embeds
        them; BM25 ignores this field.
    pool : int, default 100
        The candidate pool, an int >= 1: how many units each leg retrieves
        before it is fused, both the dense and BM25 legs of hybrid RRF and
        the passage and section legs of fused search (whose min-max scales
        are set by their own pools).
    rrf_k : int, default 60
        Reciprocal rank fusion constant, an int >= 0.
    analyzer : str, default "english"
        BM25 analyzer (:data:`hierret.search.rankers.analyzer.ANALYZERS`).
    section_weight : float, default 0.65
        Fused only: weight of the section leg in [0, 1] (0: passages lifted to
        sections alone; 1: sections alone).
    candidates : int, default 20
        How many first-stage units the reranker reads, an int >= 1 (ignored
        without a reranker).
    reranker : str, optional
        Name of the reranker in the mapping given to ``Searcher.run``;
        ``None`` keeps the first-stage order and scores.
    selection : Selection, default ``Selection()``
        Applied after the reranker (or to first-stage scores without one);
        the default keeps every unit.

    Raises
    ------
    ValueError
        An unknown level, ranker, vector strategy or analyzer; a count below
        its minimum; ``section_weight`` outside [0, 1].
    TypeError
        A count that is not an int, a weight that is not a number, a name or
        reranker that is not a str, a selection that is not a Selection.

    Examples
    --------
    >>> p = Profile("maxsim-sel", ranker="hybrid", reranker="maxsim",
    ...             selection=Selection(0.5, 3, 10))
    >>> p.describe()
    'maxsim-sel: passages, hybrid (pool 100, rrf_k 60) -> maxsim on 20 candidates, \
min_score=0.5, min_keep=3, top_k=10'
    >>> Profile.from_dict(p.as_dict()) == p
    True
    >>> Profile(pool=0)
    Traceback (most recent call last):
    ...
    ValueError: pool must be an int >= 1, got 0
    """

    name: str = ""
    level: SearchLevel = "passages"
    ranker: Ranker = "dense"
    vectors: Strategy = "rawspan"
    pool: int = 100
    rrf_k: int = 60
    analyzer: str = "english"
    section_weight: float = 0.65
    candidates: int = 20
    reranker: str | None = None
    selection: Selection = field(default_factory=Selection)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        _check_choice(self.level, "level", SEARCH_LEVELS)
        _check_choice(self.ranker, "ranker", RANKERS)
        _check_choice(self.vectors, "vectors", STRATEGIES)
        _check_choice(self.analyzer, "analyzer", tuple(ANALYZERS))
        check_count(self.pool, "pool")
        check_count(self.rrf_k, "rrf_k", minimum=0)
        check_count(self.candidates, "candidates")
        check_weight(self.section_weight, "section_weight")
        if self.reranker is not None and not isinstance(self.reranker, str):
            raise TypeError(
                f"reranker must be a name (str) or None, got {type(self.reranker).__name__}"
            )
        if not isinstance(self.selection, Selection):
            raise TypeError(f"selection must be a Selection, got {type(self.selection).__name__}")

    def as_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``: plain values, JSON-ready."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        """The profile :meth:`as_dict` described.

        Raises
        ------
        ValueError
            ``data`` holds a key that is not a field (e.g. ``depth`` from an
            older record: the candidate pool is now ``pool``, the reranker's
            input ``candidates``).
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown profile fields {unknown}: a profile has {sorted(known)}")
        values = dict(data)
        values["selection"] = Selection(**dict(values.get("selection") or {}))
        return cls(**values)

    def describe(self) -> str:
        """One line for tables and logs: only the settings that matter to this profile."""
        settings = []
        if self.ranker != "bm25" and self.level != "passages":
            settings.append(f"{self.vectors} vectors")
        if self.ranker == "hybrid" or self.level == "fused":
            settings.append(f"pool {self.pool}")
        if self.ranker == "hybrid":
            settings.append(f"rrf_k {self.rrf_k}")
        if self.ranker != "dense" and self.analyzer != "english":
            settings.append(f"analyzer {self.analyzer}")
        if self.level == "fused":
            settings.append(f"section_weight {self.section_weight}")
        stage = f"{self.level}, {self.ranker}" + (f" ({', '.join(settings)})" if settings else "")
        rr = f"{self.reranker} on {self.candidates} candidates" if self.reranker else "no reranker"
        text = f"{stage} -> {rr}, {self.selection.describe()}"
        return f"{self.name}: {text}" if self.name else text


#: The package's default (DR-001): dense ranking of passages, no reranker.
DEFAULT = Profile(name="default")

#: DR-004's option for questions about sections, as its record measured it: fused
#: passage-and-section search with dense legs and raw-span section vectors, each leg's
#: top 50 candidates, the section leg weighted 0.65 (its notebook's ``pool`` and
#: ``section_weight``; a test holds them equal). ``Profile(level="fused")`` alone keeps
#: the default pool of 100, which no record measured for fusion.
SECTIONS = Profile(name="sections", level="fused", pool=50, section_weight=0.65)

#: The profiles the decision records recommend, by name (``hierret search --profile``).
RECOMMENDED: dict[str, Profile] = {"default": DEFAULT, "sections": SECTIONS}

#: The source study's shipped stack, for illustration: hybrid RRF first stage, a
#: cross-encoder (looked up under the name ``"cross-encoder"``) reading 20 candidates,
#: then threshold selection min_score 0.5 / min_keep 3 / top_k 10. The 0.5 is on the
#: study's rerankers' probability scale (sigmoid); it means nothing for MaxSim or
#: cosine scores.
SHIPPED = Profile(
    name="shipped-0.5/3/10",
    level="passages",
    ranker="hybrid",
    candidates=20,
    reranker="cross-encoder",
    selection=Selection(min_score=0.5, min_keep=3, top_k=10),
)

#: What the source study's eval harness measured instead of :data:`SHIPPED` before
#: its erratum: the same reranker reordering all 20 candidates, with no selection.
REORDER_ONLY = replace(SHIPPED, name="reorder-only (as the harness ran it)", selection=Selection())
