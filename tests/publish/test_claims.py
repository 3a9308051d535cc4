"""The claims check: verdicts from the numbers, keys that resolve, comparative sentences cited."""

from __future__ import annotations

import pytest

from hierret.publish import claims

ROW = (
    "| C1 | Dense beats BM25 | `dr009.d` > 0 | +0.100<!--@dr009.d_diff:+.3f--> "
    "(+0.020<!--@dr009.d_diff_low:+.3f--> to +0.200<!--@dr009.d_diff_high:+.3f-->) | "
    "0.004<!--@dr009.d_p:.2g--> | 0.01<!--@dr009.d_p_holm:.2g--> · Holm over (3 tests) | holds |"
)
HEAD = (
    "### Claims and tests\n\n| id | claim | test | difference | p | adjusted p | "
    "verdict |\n|---|---|---|---|---|---|---|\n"
)


def _doc(prose: str = "Dense beats BM25 [C1].", row: str = ROW) -> str:
    return f"# Records\n\n## DR-009 · A toy\n\n{prose}\n\n{HEAD}{row}\n\n## DR-010 · Next\n"


def _results(**values: float) -> dict[str, dict[str, dict[str, float]]]:
    base = {"d_diff": 0.1, "d_diff_low": 0.02, "d_diff_high": 0.2, "d_p": 0.004,
            "d_p_holm": 0.01, "d_family_size": 3, "d_mde": 0.07, "d_margin_low": 0.03,
            "d_margin_high": 0.18}  # fmt: skip
    return {"dr009": {"values": base | values}}


@pytest.mark.parametrize(
    ("direction", "diff", "p", "want"),
    [
        (">", 0.1, 0.01, "holds"),
        (">", 0.1, 0.05, "not established"),
        (">", -0.1, 0.001, "contradicted"),
        (">", 0.1, 0.2, "not established"),
        ("<", -0.1, 0.001, "holds"),
        ("≤", 0.1, 0.001, "contradicted"),
        ("≤", -0.1, 0.001, "consistent"),
        ("≥", -0.1, 0.001, "contradicted"),
        ("≥", 0.1, 0.3, "consistent"),
    ],
)
def test_verdict_rule(direction: str, diff: float, p: float, want: str) -> None:
    assert claims.verdict(direction, diff, p) == want


def test_unknown_direction_is_refused() -> None:
    with pytest.raises(ValueError, match="direction"):
        claims.verdict("=", 0.0, 1.0)


def test_a_consistent_record_passes() -> None:
    text = _doc().replace("## DR-010 · Next\n", "")
    assert claims.check(text, _results()) == []


def test_a_record_without_a_table_fails() -> None:
    problems = claims.check(_doc(), _results())
    assert problems == [
        "DR-010: no '### Claims and tests' table with rows like "
        "'| C1 | claim | `drNNN.key` > 0 | ... |'"
    ]


def test_a_wrong_verdict_fails_and_update_fixes_it() -> None:
    text = _doc().replace("## DR-010 · Next\n", "")
    results = _results(d_p_holm=0.2)
    (problem,) = claims.check(text, results)
    assert problem.startswith("DR-009 C1: the row says")
    assert problem.endswith("| not established (could detect ≥ 0.07)'; run "
                            "`python docs/check_decisions.py --update` (or `nox -s reproduce -- "
                            "--update-decisions`) and review the diff")  # fmt: skip
    # the row is fixed; the sentence that said "beats" now overreaches its row's verdict
    after = claims.check(claims.update(text, results), results)
    assert after
    assert all("Dense beats BM25 [C1]." in p for p in after)
    assert any("'beats' is directional, but C1 is not established" in p for p in after)
    hedged = text.replace(
        "Dense beats BM25 [C1].",
        "Whether dense beats BM25 is not established (could detect ≥ 0.07) [C1].",
    )
    assert claims.check(claims.update(hedged, results), results) == []


def test_a_missing_key_fails() -> None:
    text = _doc().replace("## DR-010 · Next\n", "")
    results = _results()
    del results["dr009"]["values"]["d_diff_high"]
    (problem,) = claims.check(text, results)
    assert "dr009.d_diff_high" in problem
    assert "rerun the notebook" in problem


def test_a_row_must_quote_its_interval_and_p() -> None:
    row = ROW.replace(" to +0.200<!--@dr009.d_diff_high:+.3f-->", "")
    text = _doc(row=row).replace("## DR-010 · Next\n", "")
    (problem,) = claims.check(text, _results())
    assert problem.startswith("DR-009 C1: the row says '+0.100 (+0.020) | 0.004 |")


def test_a_p_value_must_be_the_unadjusted_one() -> None:
    row = ROW.replace("0.004<!--@dr009.d_p:.2g-->", "0.01<!--@dr009.d_p_holm:.2g-->", 1)
    text = _doc(row=row).replace("## DR-010 · Next\n", "")
    assert claims.check(text, _results())


@pytest.mark.parametrize(
    "sentence",
    [
        "Dense beats BM25.",
        "BM25 trails dense here.",
        "The hybrid is the strongest.",
        "BM25 is at least as good as dense.",
        "Bigger chunks hurt the chunk arm.",
    ],
)
def test_an_uncited_comparative_sentence_fails(sentence: str) -> None:
    text = _doc(prose=sentence).replace("## DR-010 · Next\n", "")
    (problem,) = claims.check(text, _results())
    assert "cites no claim" in problem
    assert sentence[:20] in problem


def test_a_citation_of_a_missing_row_fails() -> None:
    text = _doc(prose="Dense beats BM25 [C1, C7].").replace("## DR-010 · Next\n", "")
    (problem,) = claims.check(text, _results())
    assert "cites C7" in problem


def test_a_malformed_test_cell_is_an_error() -> None:
    row = ROW.replace("`dr009.d` > 0", "dr009.d beats")
    with pytest.raises(ValueError, match="test cell"):
        claims.claims(_doc(row=row))


def test_claims_are_read_with_their_lines() -> None:
    text = _doc()
    (claim,) = claims.claims(text)
    assert (claim.record, claim.id, claim.key, claim.direction) == ("DR-009", "C1", "dr009.d", ">")
    assert text.splitlines()[claim.line - 1] == ROW


#: The sentences an audit of the records found uncited or wrong (issue 26), one per word
#: class of the comparative vocabulary: each must now fail the check uncited.
AUDITED = {
    "shrink": "In the hybrid the gaps between the encoders shrink.",
    "helps": "Offer MaxSim as an option for dense-only first stages, where it helps.",
    "lower": "The arms on their own score lower (0.661 against 0.749).",
    "collapse": "Whole-document vectors collapse at the DOC target.",
    "about what": "Fused search over late vectors scores about what fused search does.",
    "cost more": "The router's choices cost more questions than they win.",
}


@pytest.mark.parametrize("word", list(AUDITED))
def test_the_audited_comparative_sentences_fail_uncited(word: str) -> None:
    text = _doc(f"Dense beats BM25 [C1]. {AUDITED[word]}").replace("## DR-010 · Next\n", "")
    problems = claims.check(text, _results())
    assert len(problems) == 1
    assert "a comparative sentence (" in problems[0]
    assert word in problems[0].lower()
    cited = _doc(f"Dense beats BM25 [C1]. {AUDITED[word][:-1]} [C1].")
    problems = claims.check(cited.replace("## DR-010 · Next\n", ""), _results())
    if word in ("shrink", "about what"):  # an interaction, and a claim of no effect:
        assert len(problems) == 1  # a row that merely holds does not carry them
        assert ("interaction" if word == "shrink" else "no effect") in problems[0]
    else:
        assert problems == []


#: Quantities in words: the two the audit found wrong, and the other word classes.
QUANTITIES = {
    "twice": "Late chunking lifts the SECTION target at about twice the embedding time.",
    "orders of magnitude": (
        "WordLlama trails by −0.163<!--@dr009.d_diff:.3f--> [C1], in exchange for "
        "embedding two to three orders of magnitude faster."
    ),
    "times": "MaxSim costs ten times the query time of a dense search.",
    "half": "The pool halved the latency.",
}


@pytest.mark.parametrize("kind", list(QUANTITIES))
def test_a_quantity_in_words_needs_a_marked_number_in_its_clause(kind: str) -> None:
    text = _doc(f"Dense beats BM25 [C1]. {QUANTITIES[kind]}").replace("## DR-010 · Next\n", "")
    problems = claims.check(text, _results())
    assert len(problems) == 1, problems
    assert "a quantity in words" in problems[0]
    held = "Late chunking costs 37<!--@dr009.d_diff:.1f--> ms, about twice<!--@dr009.d:.0f-->."
    text = _doc(f"Dense beats BM25 [C1]. {held}").replace("## DR-010 · Next\n", "")
    assert [p for p in claims.check(text, _results()) if "quantity" in p] == []


@pytest.mark.parametrize(
    ("interval", "want"),
    [
        ((-0.012, 0.015), "equivalent"),
        ((0.025, 0.06), "not equivalent"),
        ((-0.01, 0.03), "inconclusive"),
    ],
)
def test_an_equivalence_row_reads_both_one_sided_tests(
    interval: tuple[float, float], want: str
) -> None:
    got = claims.verdict("≈", sum(interval) / 2, 0.5, margin=0.02, margin_interval=interval)
    assert got == f"{want} (margin 0.02)"
    row = ROW.replace("`dr009.d` > 0", "`dr009.d` ≈ 0 (margin `dr009.margin`)")
    (claim,) = claims.claims(_doc(row=row))
    assert (claim.direction, claim.margin) == ("≈", "dr009.margin")
