"""The records' sentences may say no more than the verdicts of the rows they cite.

Three kinds of sentence: the audit's (issue "Words bound to their tests", each
class it found), variants of the same classes in words the records never used,
and faithful sentences that must pass. The real records, the README and the
notebooks' closing summaries are checked too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from hierret.publish import claims, wording
from hierret.publish.evidence import load as load_evidence
from hierret.publish.report import load_results

ROOT = Path(__file__).resolve().parents[2]

#: The cited rows' verdicts every sentence below is read against.
ROWS = {
    "C1": "holds",
    "C2": "not established (could detect ≥ 0.07)",
    "C3": "non-inferior (margin 0.02)",
    "C4": "inconclusive (margin 0.02)",
    "C5": "equivalent (margin 0.02)",
    "C6": "holds (fragile: rank test 0.066)",
    "C7": "contradicted",
    "C8": "non-superior (margin 0.02)",
    "C9": "holds",
    "DR-001 C4": "not established (could detect ≥ 0.07)",
}
INTERACTIONS = {"C9"}

#: The audit's sentences (issue 39), one per class, with the rows they cited.
AUDIT = {
    "no effect: does nothing, or harm": (
        "Reranking repairs a weak first stage and does nothing, or harm, to a strong one [C1, C2]."
    ),
    "no effect: barely moves": "Over the hybrid MaxSim barely moves nDCG@10 [C2].",
    "no effect: the same results": "It is offered as a smaller file with the same results [C3].",
    "no effect: alike": "Every encoder scores low and alike on the Qasper sample [C4].",
    "no effect: level with": "Late chunking is level with or ahead of the passages [C2].",
    "no effect: close, where the row holds": "At 900 characters the arms are close [C1].",
    "finding without a row: headroom": (
        "The three-level index is kept because the oracle shows real headroom."
    ),
    "interaction: matters most when": ("The context matters most when the passages are long [C1]."),
    "interaction: carries part of": "BM25 carries part of the weak encoders' load.",
    "quantifier over mixed rows": "It trails wherever the passages are long [C1, C2, C6].",
    "directional for a row not established": (
        "On reference prose dense does better than BM25 here, and neither difference "
        "survives the adjustment [C2, DR-001 C4]."
    ),
    "not established without what it could detect": "The hybrid's gain is not established [C2].",
    "no gain where the row is inconclusive": "Other sizes gain less than the margin [C4].",
    "fragile holds leaned on silently": "Raw span trails at SciFact's DOC target [C6].",
}

#: The same classes in other words (the check will meet sentences nobody wrote yet).
VARIANTS = {
    "on a par": "The int8 encoder is on a par with fp32 [C3].",
    "makes no difference": "The query prefix makes no real difference [C2].",
    "indistinguishable": "The two section vectors are indistinguishable here [C2].",
    "much the same": "Both rankers give much the same ranking [C4].",
    "does not beat": "The router does not beat the fixed arm [C2].",
    "no better": "The tuned weight is no better than the default [C2].",
    "at least as good": "BM25 is at least as good as dense on SciFact [C4].",
    "equivalent where only non-inferior": "int8 is equivalent to fp32 [C3].",
    "outperforms": "The hybrid outperforms dense on the Python reference [C2].",
    "lags": "e5-small lags the default on every corpus [C2].",
    "falls short": "Auto-merging falls short of fused search [C4].",
    "surpasses": "Late chunking surpasses plain passages at 900 characters [C2].",
    "underperforms": "WordLlama underperforms in the hybrid too [C4].",
    "especially when": "Fused search helps, especially when sections are long [C1].",
    "the longer ... the larger": (
        "The longer the passages, the larger the gain from late chunking [C1]."
    ),
    "grows with": "The advantage grows with the passage size [C1].",
    "uncited comparative": "Raw-span sections are better than centroids.",
    "hedge on a row that holds": "The gain over whole units is not established [C1].",
    "uncited hedge": "Fused search's gain over 900-character passages is not established.",
    "unknown row": "Dense beats BM25 [C12].",
    "bare claim on a row not established": "MaxSim improves dense MiniLM [C2].",
    "no effect on a contradicted row": "The two arms tie with each other [C7].",
    "no loss where the row holds the other way": "BM25 loses nothing against dense [C7].",
    "similarly": "The two encoders perform similarly [C2].",
    "matches": "Late chunking matches plain passages [C2].",
    "negligible": "The difference is negligible [C2].",
    "parity": "int8 reaches parity with fp32 [C3].",
    "no meaningful gap": "There is no meaningful gap between them [C2].",
    "a boost": "MaxSim gives a boost to dense MiniLM [C2].",
    "clear winner": "Fused search is the clear winner [C2].",
    "degrades": "Raw-span degrades at the DOC target [C2].",
    "brings no benefit": "The router brings no benefit [C2].",
    "as effective as": "Raw span is as effective as the centroid [C2].",
    "increases with": "The benefit of late chunking increases with passage length [C1].",
    "depends on the corpus": "The hybrid's advantage depends on the corpus [C1].",
    "helps most for": "Reranking helps most for weak first stages [C1].",
    "better for ... worse for": (
        "Reranking makes things better for weak stages and worse for strong ones [C1]."
    ),
    "room for improvement": "The oracle reveals room for improvement.",
    "gives up nothing": "int8 gives up nothing against fp32 [C4].",
    "an unknown verb on a row not established": "Late chunking eclipses plain passages [C2].",
}

#: Sentences that say what their rows establish, and no more.
FAITHFUL = [
    "Passages beat whole units at both targets [C1].",
    "Whether the hybrid beats dense is not established (could detect ≥ 0.07) [C2].",
    "The hybrid's gain over dense is not established here (could detect ≥ 0.07) [C2].",
    "Its point estimate is below the passages', the difference not established "
    "(could detect ≥ 0.07) [C2].",
    "int8 is non-inferior to fp32 within the margin declared for it [C3].",
    "int8 loses less than the margin against fp32 [C3].",
    "Whether 600 characters gain at least the margin over 900 is inconclusive [C4].",
    "The two section vectors are equivalent within the margin [C5].",
    "Raw span trails the passages at SciFact's DOC target, a fragile result [C6].",
    "BM25 beats dense on SciFact, the opposite of the claim [C7].",
    "1,800 characters gain no more than the margin over 900: non-superior [C8].",
    "The gain of late chunking grows with the passage size [C9].",
    "Passages beat whole units [C1]; the hybrid's gain is not established "
    "(could detect ≥ 0.07) [C2].",
    'The study found "BM25 beat dense"; here the difference is not established '
    "(could detect ≥ 0.07) [DR-001 C4].",
    "The study found raw-span sections ahead of passages with long-context encoders.",
    "Whether a reranker helps a weak first stage more than a strong one is an interaction "
    "this record does not test.",
    "The oracle, the maximum per question over seven arms, scores 0.811.",
    "MaxSim over dense e5-small was not established on the sample and holds on the "
    "whole corpus [C1].",
]


@pytest.mark.parametrize("name", list(AUDIT))
def test_each_class_of_the_audit_fails(name: str) -> None:
    assert wording.problems(AUDIT[name], ROWS, INTERACTIONS), name


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_same_classes_in_other_words_fail(name: str) -> None:
    assert wording.problems(VARIANTS[name], ROWS, INTERACTIONS), name


@pytest.mark.parametrize("sentence", FAITHFUL)
def test_faithful_sentences_pass(sentence: str) -> None:
    assert wording.problems(sentence, ROWS, INTERACTIONS) == []


def test_a_problem_names_the_word_the_row_and_its_verdict() -> None:
    (problem, *_) = wording.problems("Over the hybrid MaxSim barely moves nDCG@10 [C2].", ROWS)
    assert "'barely'" in problem
    assert "C2 is not established (could detect ≥ 0.07)" in problem
    assert "equivalence row" in problem


def test_clauses_follow_their_citations() -> None:
    # the hedge of the second clause does not excuse the first, nor the reverse
    bad = "Passages beat whole units [C2]; the hybrid's gain is not established [C1]."
    assert len(wording.problems(bad, ROWS)) >= 2


def test_quoted_words_are_mentions() -> None:
    assert wording.classes('Its "loses nothing" was rewritten') == []


def test_duplicates_find_a_test_repeated_with_the_sign_flipped() -> None:
    diffs = {"a": {"q1": 0.5, "q2": -0.25}, "b": {"q1": -0.5, "q2": 0.25}, "c": {"q1": 0.5}}
    assert wording.duplicates(diffs) == [("a", "b")]


def _records_text() -> str:
    return (ROOT / "DECISIONS.md").read_text(encoding="utf-8")


def _per_question() -> dict[str, dict[str, float]]:
    """Each claims row of DECISIONS.md to its test's per-question differences."""
    folder = ROOT / "data" / "results"
    frames: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    out = {}
    for c in claims.claims(_records_text()):
        name, _, key = c.key.partition(".")
        if name not in frames:
            found = load_evidence(folder, name)
            assert found is not None, f"no evidence files for {name}"
            frames[name] = found
        tests, questions = frames[name]
        row = tests[tests["key"] == key]
        assert not row.empty, f"{c.record} {c.id}: no evidence row for {c.key}"
        q = questions[questions["test"] == row.iloc[0]["test"]]
        out[f"{c.record} {c.id}"] = dict(zip(q["query"].astype(str), q["a"] - q["b"], strict=True))
    return out


def test_no_claims_row_repeats_another_rows_test() -> None:
    rows = claims.claims(_records_text())
    keys = [c.key for c in rows]
    assert sorted({k for k in keys if keys.count(k) > 1}) == []
    assert wording.duplicates(_per_question()) == []


def test_the_records_pass_the_wording_check() -> None:
    results = load_results(ROOT / "data" / "results")
    assert claims.check(_records_text(), results) == []


def _summaries() -> dict[str, str]:
    """Each notebook's closing "What we found" cell, by its record."""
    out = {}
    for nb in sorted((ROOT / "notebooks").glob("0[2-6]_dr*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = next(
            "".join(c["source"]) for c in cells if "## What we found" in "".join(c["source"])
        )
        record = "DR-" + re.search(r"_dr(\d+)_", nb.name)[1]  # type: ignore[index]
        out[record] = text.split("Read next:")[0]
    return out


@pytest.mark.parametrize("record", ["DR-001", "DR-002", "DR-003", "DR-004", "DR-005"])
def test_the_notebooks_closing_summaries_pass(record: str) -> None:
    rows = claims.claims(_records_text())
    assert claims.check_prose(_summaries()[record], rows, record=record) == []


def test_the_readme_passes() -> None:
    rows = claims.claims(_records_text())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert claims.check_prose(readme, rows) == []
