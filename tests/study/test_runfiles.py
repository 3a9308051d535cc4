"""The published run files and qrels reproduce every per-question score, read by pytrec_eval.

:mod:`hierret.publish.runfiles` writes, beside each record's evidence, the TREC
run file and qrels of every arm of every published test. Here they are read
with gzip and pandas alone and scored with pytrec_eval (trec_eval's own code,
not :mod:`hierret.evaluation`), and every question's value must equal the one
the evidence file ``{record}-questions.tsv.gz`` holds for that arm:

* on a small study run here (the Python reference, a hash encoder: seconds),
  published as a notebook publishes it, with traced arms, arms added outside
  the searcher (auto-merging, the router and its best fixed arm), a second
  family and a comparison between two runs (:func:`experiment.between`);
* on a fixed sample of the reference records' tests, when
  ``data/results/evidence/runs/`` holds their run files (they are written by a
  reference run, ``nox -s reproduce``; without them that part skips, saying so).

The code of the site's page on re-testing a claim with ranx runs here too, on
the small study's files (and on the reference files when present).
"""

from __future__ import annotations

import gzip
import math
import re
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

from hierret.datasets import default_gold_path, load_gold, load_python_reference
from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.evaluation.stats.evidence import Judged, PairedTest
from hierret.publish import record, runfiles
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy
from hierret.study import casebook, experiment, merging, router
from hierret.study.result import LEDGER as ledger

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "data" / "results"
REFERENCE_RUNS = sorted((RESULTS / "evidence" / "runs").glob(f"*/{runfiles.INDEX}"))
#: Every how many tests of a reference record the sample takes one (the first included).
SAMPLE_EVERY = 5
ARMS = {
    "chunk": experiment.Arm(Profile(), k=200),
    "rawspan-section": Profile(level="sections"),
    "bm25": Profile(ranker="bm25"),
}
FAMILY = [("rawspan-section", "chunk"), ("bm25", "chunk")]
ADDED = [("automerge", "chunk"), ("router", "fixed")]


def _trec_lines(path: Path) -> list[list[str]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.split() for line in f if line.strip()]


def _pytrec(folder: Path, row: pd.Series) -> dict[str, float]:
    """pytrec_eval's value of ``row``'s measure for each question of its test (0 for a
    question without a ranking, as ``trec_eval -c`` counts it)."""
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, doc, rel in _trec_lines(folder / row["qrels"]):
        qrels.setdefault(qid, {})[doc] = int(rel)
    run: dict[str, dict[str, float]] = {}
    for qid, _, doc, _, score, _ in _trec_lines(folder / row["run"]):
        run.setdefault(qid, {})[doc] = float(score)
    measure = str(row["measure"])
    name, cutoff = measure.rsplit("_", 1)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"{name}.{cutoff}"})
    scored = evaluator.evaluate(run)
    return {q: scored[q][measure] if q in scored else 0.0 for q in qrels}


def _check(results: Path, name: str, tests: list[str] | None = None) -> int:
    """Every (or each of ``tests``') arm's published per-question values against
    pytrec_eval on its files; returns how many arms were checked."""
    folder = runfiles.folder(results, name)
    index = pd.read_csv(folder / runfiles.INDEX, sep="\t", dtype={"test": str})
    questions = pd.read_csv(
        results / "evidence" / f"{name}-questions.tsv.gz", sep="\t", dtype={"query": str}
    )
    chosen = index if tests is None else index[index["test"].isin(tests)]
    assert not chosen.empty
    for _, row in chosen.iterrows():
        assert row["measure"], f"{row['metric']} has no trec_eval measure"
        published = questions[questions["test"] == row["test"]].set_index("query")[row["side"]]
        recomputed = _pytrec(folder, row)
        assert set(recomputed) == set(published.index), (name, row["test"], row["side"])
        for q, value in published.items():
            assert math.isclose(recomputed[q], value, rel_tol=0, abs_tol=1e-12), (
                f"{name} {row['test']} arm {row['side']} ({row['arm']}) question {q}: "
                f"pytrec_eval {recomputed[q]!r}, published {value!r}"
            )
        assert math.isclose(
            sum(recomputed.values()) / len(recomputed), published.mean(), abs_tol=1e-12
        )
    return len(chosen)


@cache
def _study(results: Path) -> dict[str, float]:
    """A small study published as a notebook publishes one: record ``dr9`` in ``results``."""
    ledger.clear()
    docs = load_python_reference()
    queries = load_gold(default_gold_path(docs.name), docs).queries[:40]
    encoder = HashEncoder(dimension=64, window=48)
    runs = {}
    for chars in (900, 1800):
        h = build_hierarchy(docs, max_chars=chars, overlap_chars=chars // 5)
        r = runs[chars] = experiment.run(
            ARMS,
            list(queries),
            searcher=Searcher(h, encoder),
            targets=["documents", "sections"],
            metrics=["ndcg@10", "recall@5", "hit@1"],
            baseline="chunk",
            family=FAMILY,
            stats=StatsSettings(n_resamples=200),
        )
    r, h = runs[900], runs[900].hierarchies["chunk"]
    values = r.values("t")  # every table's and declared pair's test, at every metric
    merging.tune_automerge(r, h, list(queries), [0.0, 0.5, 1.0], folds=3)  # arms scored at ndcg@10
    router.add_routed(r, list(queries), h, ["chunk", "rawspan-section", "bm25"], folds=3)
    casebook.write("dr9", None, {"study": r})  # added arms' runs stay out of its explorer
    columns = ["diff", "diff_low", "diff_high"]
    added = r.tests("ndcg@10", family=ADDED, name="added")
    values |= record.table_values(added, template="added_{target}_{arm_a}_{arm_b}_{column}",
                                  columns=columns)  # fmt: skip
    sizes = experiment.between(runs, "chunk", "ndcg@10")
    values |= record.table_values(sizes, template="size_{target}_{arm_a}_{column}", columns=columns)
    record.publish("dr9", values, {}, results, evidence=ledger)
    return values


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results")
    _study(results)
    return results


def test_every_arm_of_every_test_has_its_run_and_qrels(study: Path) -> None:
    tests = pd.read_csv(study / "evidence" / "dr9-tests.tsv", sep="\t")
    index = pd.read_csv(runfiles.folder(study, "dr9") / runfiles.INDEX, sep="\t")
    assert list(index.columns) == runfiles.RUN_COLUMNS
    assert sorted(index["test"] + index["side"]) == sorted(
        [t + s for t in tests["test"] for s in "ab"]
    )
    kinds = set(tests["arm_a"]) | set(tests["arm_b"])
    assert {"automerge@documents", "router@sections", "fixed@sections"} <= kinds
    assert {"1800@documents", "900@sections"} <= kinds  # between the two runs
    assert set(index["measure"]) == {"ndcg_cut_10", "recall_5", "success_1"}
    assert set(index["depth"]) == {runfiles.RUN_DEPTH}


def test_pytrec_eval_reproduces_every_published_score_of_the_study(study: Path) -> None:
    """Every arm of every test: traced, lifted, auto-merged, routed, across two runs."""
    assert _check(study, "dr9") > 20


def test_the_files_are_deep_enough_gzipped_and_stable(study: Path) -> None:
    """At most RUN_DEPTH units per question, in trec_eval's order; the same study writes
    the same bytes (no timestamp), and a rerun leaves no file of the earlier one."""
    folder = runfiles.folder(study, "dr9")
    for path in folder.glob("*.run.gz"):
        lines = _trec_lines(path)
        per_query: dict[str, list[tuple[float, str]]] = {}
        for qid, q0, doc, rank, score, tag in lines:
            assert (q0, tag) == ("Q0", path.name.removesuffix(".run.gz"))
            per_query.setdefault(qid, []).append((float(score), doc))
            assert int(rank) == len(per_query[qid])
        for ranking in per_query.values():
            assert len(ranking) <= runfiles.RUN_DEPTH
            assert ranking == sorted(ranking, reverse=True)  # score, then id, descending
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (folder / "stale.run.gz").write_bytes(b"")
    record.publish("dr9", _study.__wrapped__(study), {}, study, evidence=ledger)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def _page_blocks() -> list[str]:
    """The ranx section's code of docs/evidence.md (its ``code-block`` fences)."""
    text = (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```\{code-block\} python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks, "docs/evidence.md has no ranx section"
    return blocks


def _run_page(
    folder: Path, name: str, key: str, capsys: pytest.CaptureFixture[str]
) -> tuple[str, pd.Series]:
    """Run the page's ranx code on record ``name``'s claim ``key`` in ``folder``."""
    pytest.importorskip("ranx", reason="ranx (the bench extra) is not installed")
    code = "\n".join(_page_blocks())
    setting = 'folder, record, claim = "data/results/evidence", "dr001", "scifact_hybrid_abstracts"'
    assert setting in code
    code = code.replace(setting, f"folder, record, claim = {str(folder)!r}, {name!r}, {key!r}")
    exec(compile(code, "docs/evidence.md", "exec"), {})
    tests = pd.read_csv(folder / f"{name}-tests.tsv", sep="\t", dtype={"key": str})
    return capsys.readouterr().out, tests.set_index("key").loc[key]


@pytest.mark.filterwarnings("ignore:unsafe cast from uint64:Warning")  # numba, in ranx
def test_the_page_retests_a_claim_with_ranx(study: Path, capsys) -> None:
    """The page's ranx code, on the study's files: ranx's two means are the published
    arms' means, their difference the published one."""
    key = "t_documents_bm25_ndcg10"
    shown, row = _run_page(study / "evidence", "dr9", key, capsys)
    questions = pd.read_csv(study / "evidence" / "dr9-questions.tsv.gz", sep="\t")
    pair = questions[questions["test"] == row["test"]]
    for mean in (pair["a"].mean(), pair["b"].mean(), row["diff"]):
        assert f"{mean:.4f}" in shown, (mean, shown)


@pytest.mark.skipif(
    not REFERENCE_RUNS,
    reason="data/results/evidence/runs holds no run files: they are written by a "
    "reference run (nox -s reproduce, hours on a cold cache) and committed with its records",
)
def test_pytrec_eval_reproduces_a_sample_of_the_published_tests() -> None:
    """Every SAMPLE_EVERY-th test of each reference record (from the first), both arms."""
    for path in REFERENCE_RUNS:
        name = path.parent.name
        tests = pd.read_csv(RESULTS / "evidence" / f"{name}-tests.tsv", sep="\t")
        assert _check(RESULTS, name, list(tests["test"][::SAMPLE_EVERY])) > 0


def test_every_published_test_has_both_arms_in_the_reference_run_files() -> None:
    """Each record with published tests has its run files, and its index names both arms
    of every one of those tests (the evidence page promises them for every claim)."""
    missing = []
    for tsv in sorted((RESULTS / "evidence").glob("*-tests.tsv")):
        name = tsv.name.removesuffix("-tests.tsv")
        index = runfiles.folder(RESULTS, name) / runfiles.INDEX
        if not index.exists():
            missing.append(f"{name}: no run files")
            continue
        tests = pd.read_csv(tsv, sep="\t")
        runs = pd.read_csv(index, sep="\t")
        have = set(zip(runs["test"], runs["side"], strict=True))
        missing += [f"{name} {t}{s}" for t in tests["test"] for s in "ab" if (t, s) not in have]
    assert missing == [], missing[:10]


@pytest.mark.skipif(
    not (RESULTS / "evidence" / "runs" / "dr001" / runfiles.INDEX).exists(),
    reason="no reference run files for dr001 in data/results/evidence/runs (written by a "
    "reference run, nox -s reproduce)",
)
@pytest.mark.filterwarnings("ignore:unsafe cast from uint64:Warning")  # numba, in ranx
def test_the_page_retests_the_published_claim(capsys) -> None:
    shown, row = _run_page(RESULTS / "evidence", "dr001", "scifact_hybrid_abstracts", capsys)
    assert f"{row['diff']:.4f}" in shown


def _kept_test(queries: tuple[str, ...] = ("q1", "q2")) -> int:
    n = len(queries)
    return ledger.keep(
        PairedTest(
            "mean", "x", "y", queries, (1.0,) * n, (0.0,) * n, 1.0, 1.0, 1.0, 0.5, 0.95, 9, 0
        )
    )


def test_attach_refuses_what_cannot_be_the_tests_source() -> None:
    ledger.clear()
    i = _kept_test()
    judged = Judged({"q1": [("d1", 1.0)]}, {"q1": {"d1": 1}, "q2": {"d2": 1}}, "ndcg@10")
    with pytest.raises(ValueError, match="no kept test number 7"):
        ledger.attach(7, judged, judged)
    other = Judged(judged.run, judged.qrels, "hit@1")
    with pytest.raises(ValueError, match="different metrics"):
        ledger.attach(i, judged, other)
    partial = Judged(judged.run, {"q1": {"d1": 1}}, "ndcg@10")
    with pytest.raises(ValueError, match=r"no qrels for questions \['q2'\]"):
        ledger.attach(i, judged, partial)
    ledger.attach(i, judged, judged)
    assert ledger.sources(i) == (judged, judged)


def test_ids_with_whitespace_are_left_out_with_a_warning(tmp_path: Path) -> None:
    """TREC files split on whitespace: such a test's runs are skipped, loudly; the others
    are written."""
    ledger.clear()
    bad, good = _kept_test(("q 1",)), _kept_test(("q1",))
    for i, q in ((bad, "q 1"), (good, "q1")):
        judged = Judged({q: [("d1", 1.0)]}, {q: {"d1": 1}}, "ndcg@10")
        ledger.attach(i, judged, judged)
    with pytest.warns(UserWarning, match=r"test T1: id 'q 1' holds whitespace"):
        index = runfiles.write(tmp_path, "dr9", [("T1", bad, "f"), ("T2", good, "f")], ledger)
    assert list(index["test"]) == ["T2", "T2"]


def test_depth_follows_the_metric_and_measures_are_trec_evals() -> None:
    assert runfiles._depth("ndcg@10") == runfiles._depth("hit@1") == runfiles.RUN_DEPTH
    assert runfiles._depth("ndcg@20") == 20
    assert runfiles._depth("mrr") == 0  # no cut-off: the whole ranking
    assert [runfiles.measure(m) for m in ("recall@5", "p@10", "map", "rprec", "x@1")] == [
        "recall_5",
        "P_10",
        "map",
        "Rprec",
        "",
    ]


def test_adopting_a_run_copies_its_run_files(study: Path, tmp_path: Path) -> None:
    """`check_decisions.py --update` (nox -s reproduce -- --update-decisions) copies the
    evidence folder with its runs into the reference, a record's stale run files gone."""
    from hierret.publish.site_build import adopt

    reference = tmp_path / "reference"
    stale = runfiles.folder(reference, "dr9") / "gone.run.gz"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    adopt(study, reference)
    source, copied = runfiles.folder(study, "dr9"), runfiles.folder(reference, "dr9")
    assert {p.name: p.read_bytes() for p in copied.iterdir()} == {
        p.name: p.read_bytes() for p in source.iterdir()
    }
    assert _check(reference, "dr9") > 20
