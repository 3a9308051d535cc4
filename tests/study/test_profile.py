"""Profiles: one frozen value, every field checked, recorded and read back as given."""

from __future__ import annotations

import dataclasses
import json

import pytest

from hierret.search.profile import DEFAULT, REORDER_ONLY, SHIPPED, Profile
from hierret.search.rerank import Selection


def test_the_default_is_dr001s_dense_passages_without_reranker() -> None:
    assert Profile(name="default") == DEFAULT
    assert (DEFAULT.level, DEFAULT.ranker, DEFAULT.vectors) == ("passages", "dense", "rawspan")
    assert DEFAULT.reranker is None
    assert DEFAULT.selection.keeps_all


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"level": "pages"}, ValueError, "unknown level 'pages': use one of"),
        ({"ranker": "splade"}, ValueError, "unknown ranker 'splade'"),
        ({"vectors": "mean"}, ValueError, "unknown vectors 'mean'"),
        ({"analyzer": "french"}, ValueError, "unknown analyzer 'french'"),
        ({"pool": 0}, ValueError, "pool must be an int >= 1, got 0"),
        ({"pool": 2.5}, TypeError, r"pool must be an int >= 1, got 2.5 \(float\)"),
        ({"candidates": True}, TypeError, r"candidates must be an int >= 1, got True \(bool\)"),
        ({"rrf_k": -1}, ValueError, "rrf_k must be an int >= 0, got -1"),
        ({"section_weight": 1.5}, ValueError, r"section_weight \(1.5\) must lie in \[0, 1\]"),
        ({"section_weight": "0.5"}, TypeError, "section_weight must be a number"),
        ({"reranker": 3}, TypeError, "reranker must be a name"),
        ({"selection": {"top_k": 3}}, TypeError, "selection must be a Selection, got dict"),
        ({"name": None}, TypeError, "name must be a str"),
    ],
)
def test_every_field_is_checked(
    fields: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Profile(**fields)  # type: ignore[arg-type]


def test_round_trips_through_json() -> None:
    p = Profile(
        "fused-hybrid",
        level="fused",
        ranker="hybrid",
        vectors="centroid",
        pool=50,
        section_weight=0.4,
        reranker="maxsim",
        candidates=30,
        selection=Selection(0.5, 3, 10),
    )
    back = Profile.from_dict(json.loads(json.dumps(p.as_dict())))
    assert back == p
    assert p.as_dict() == dataclasses.asdict(p)


def test_old_records_are_refused_with_the_new_names() -> None:
    old = {**DEFAULT.as_dict(), "depth": 20}
    with pytest.raises(ValueError, match=r"unknown profile fields \['depth'\]"):
        Profile.from_dict(old)


def test_describe_names_what_matters() -> None:
    assert DEFAULT.describe().startswith("default: passages, dense -> no reranker")
    fused = Profile(level="fused", vectors="centroid", pool=50, section_weight=0.3)
    assert fused.describe().startswith(
        "fused, dense (centroid vectors, pool 50, section_weight 0.3) -> no reranker"
    )
    bm25 = Profile(level="sections", ranker="bm25", analyzer="whitespace")
    assert bm25.describe().startswith("sections, bm25 (analyzer whitespace)")


def test_shipped_and_reorder_only_differ_only_in_name_and_selection() -> None:
    assert SHIPPED.selection == Selection(min_score=0.5, min_keep=3, top_k=10)
    assert (SHIPPED.ranker, SHIPPED.candidates, SHIPPED.reranker) == ("hybrid", 20, "cross-encoder")
    changed = {
        f.name
        for f in dataclasses.fields(Profile)
        if getattr(SHIPPED, f.name) != getattr(REORDER_ONLY, f.name)
    }
    assert changed == {"name", "selection"}
    assert REORDER_ONLY.selection.keeps_all


def test_profiles_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.level = "sections"  # type: ignore[misc]


def test_the_sections_profile_is_the_one_dr004_measured() -> None:
    """A reader who runs ``SECTIONS`` (or ``hierret search --profile sections``) runs
    what DR-004's record measured: its notebook's reference pool and weight, as the
    committed record states them."""
    import json
    from pathlib import Path

    from hierret.search.profile import RECOMMENDED, SECTIONS
    from hierret.study.params import notebook_parameters

    root = Path(__file__).resolve().parents[2]
    declared = notebook_parameters(root / "notebooks" / "05_dr004_hierarchy.ipynb")
    record = json.loads((root / "data" / "results" / "dr004.json").read_text("utf-8"))
    for source in (declared, record["identity"]["parameters"]):
        assert (SECTIONS.pool, SECTIONS.section_weight) == (
            source["pool"],
            source["section_weight"],
        )
    assert (SECTIONS.level, SECTIONS.ranker, SECTIONS.vectors) == ("fused", "dense", "rawspan")
    assert RECOMMENDED["sections"] is SECTIONS
