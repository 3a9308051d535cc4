"""Claims over roles: a run on other corpora or sizes tests the record's claims on what it
ran (hierret.publish.roles, through hierret.publish.against)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hierret.publish import against_published
from hierret.publish.claims import claims, judge
from hierret.publish.report import load_results
from hierret.publish.roles import SPECS, Trial, cast, corpus_token

ROOT = Path(__file__).resolve().parents[2]
RECORDS = load_results(ROOT / "data" / "results")
DECISIONS = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")


def _rows(name: str) -> list[Any]:
    record = f"DR-{name[2:]}"
    return [c for c in claims(DECISIONS) if c.record == record and c.key.startswith(name)]


def _renamed(values: dict[str, Any], subst: dict[str, str]) -> dict[str, Any]:
    """The published values under the keys a run with other roles writes: each key's
    ``_``-separated parts replaced as ``subst`` says."""
    out = {}
    for k, v in values.items():
        parts = k.split("_")
        out["_".join(subst.get(p, p) for p in parts)] = v
    return out


def _run(name: str, **parameters: Any) -> dict[str, Any]:
    identity = copy.deepcopy(RECORDS[name]["identity"])
    identity["parameters"] |= parameters
    return identity


@pytest.mark.parametrize("name", ["dr001", "dr002", "dr003", "dr004", "dr005"])
def test_the_published_run_tests_each_claim_as_published(name: str) -> None:
    record = RECORDS[name]
    run = against_published(name, record["values"], record["identity"])
    assert list(run.claims.index) == [c.id for c in _rows(name)]  # no role relabelled
    assert run.claims["agree"].eq("yes").all(), run.summary
    assert "tested on what this run ran" not in run.summary


def test_a_claim_about_a_corpus_is_tested_on_the_folder_that_ran_in_its_place() -> None:
    published = RECORDS["dr004"]
    # the numbers the study had on the Python reference, as a run on a folder writes them
    values = _renamed(published["values"], {"pyref": "notes"})
    identity = _run("dr004", corpora=["course/notes"], chunk_chars=[900, 1800])
    run = against_published("dr004", values, identity)
    rows = {c.id: c for c in _rows("dr004")}
    on_pyref = [i for i, c in rows.items() if "_pyref_" in c.key]
    assert on_pyref
    for i, c in rows.items():  # every claim is tested on the folder: its own corpus is gone
        row = run.claims.loc[f"{i} on notes"]
        if i in on_pyref:  # the same numbers: the same verdict as published
            assert row["verdict, this run"] == judge(c, {"dr004": published})
        else:  # the Python reference's numbers under another corpus's claim
            pyref = c.key.replace("_scifact_", "_pyref_").replace("_qasper_", "_pyref_")
            want = f"{pyref.partition('.')[2]}_diff"
            assert row["difference, this run"].startswith(f"{published['values'][want]:+.3f}")
    assert "The claims are tested on what this run ran in their place: on notes." in run.summary
    assert "not testable" not in run.summary


def test_a_claim_about_a_size_the_run_did_not_have_says_why() -> None:
    values = _renamed(RECORDS["dr005"]["values"], {"pyref": "notes", "900": "600"})
    run = against_published("dr005", values, _run("dr005", corpora=["notes"], chunk_chars=[600]))
    c1 = run.claims.loc["C1"]  # late chunking at 1,800 characters: the 2nd size
    assert c1["agree"] == "not tested"
    assert c1["verdict, this run"] == (
        "not testable here: the run has 1 passage size (chunk_chars = [600]), the claim is "
        "about its 2nd (1800 in the study)"
    )
    c2 = run.claims.loc["C2 on notes, at 600 characters"]  # the 1st size: 900 → 600
    assert c2["verdict, this run"].startswith("not established")
    assert "6 not testable on this run — C1, C3, C5, C7, C10, C12: the run has 1 passage" in (
        run.summary
    )


def test_a_run_of_some_study_corpora_tests_their_claims_and_names_the_rest() -> None:
    run = cast("dr004", "test_scifact_900_a_section_b_section",
               RECORDS["dr004"]["identity"]["parameters"],
               {"corpora": ["python-reference"], "chunk_chars": [900, 1800]})  # fmt: skip
    assert run == [Trial(None, why="the run did not read scifact-sections and read no corpus "
                         "of its own (corpora = ['python-reference'])")]  # fmt: skip
    same = cast("dr004", "test_pyref_1800_a_section_b_section",
                RECORDS["dr004"]["identity"]["parameters"],
                {"corpora": ["python-reference"], "chunk_chars": [900, 1800]})  # fmt: skip
    assert same == [Trial("test_pyref_1800_a_section_b_section")]


def test_several_new_corpora_each_test_the_claim() -> None:
    trials = cast("dr005", "test_qasper_900_late_section_chunk",
                  RECORDS["dr005"]["identity"]["parameters"],
                  {"corpora": ["a/notes", "b/manual-2"], "chunk_chars": [1200, 2400],
                   "encoder": "wordllama"})  # fmt: skip
    assert trials == [
        Trial("test_notes_1200_late_section_chunk", "on notes, with wordllama, at 1200 characters"),
        Trial("test_manual_2_1200_late_section_chunk",
              "on manual-2, with wordllama, at 1200 characters"),
    ]  # fmt: skip


def test_dr001_names_its_beir_corpus_and_swept_sizes_as_roles() -> None:
    published = RECORDS["dr001"]["identity"]["parameters"]
    run = published | {"corpus": "/x/notes", "beir": None, "sizes": [600, 900]}
    assert cast("dr001", "scifact_hybrid_abstracts", published, run) == [
        Trial(None, why="no BEIR corpus ran (beir = None)")
    ]
    assert cast("dr001", "sweep_dense_1200", published, run) == [
        Trial(
            None,
            why="the run swept no size above its 900 (sizes = [600, 900]), the claim "
            "1200 against 900 in the study",
        )
    ]
    assert cast("dr001", "sweep_dense_600", published, run) == [
        Trial("sweep_dense_600", "on notes")
    ]
    # another default and other sizes: the size on the same side, nearest first
    moved = run | {"max_chars": 1200, "sizes": [400, 800, 1600]}
    assert cast("dr001", "sweep_dense_600", published, moved) == [
        Trial("sweep_dense_800", "on notes, at 800 against 1200 characters")
    ]
    assert cast(
        "dr001", "scifact_hybrid_abstracts", published, published | {"beir": "nfcorpus"}
    ) == [Trial("scifact_hybrid_abstracts", "on nfcorpus")]
    assert cast("dr001", "hit1_sec", published, run) == [Trial("hit1_sec", "on notes")]


def test_every_spec_names_parameters_the_published_records_have() -> None:
    for name, spec in SPECS.items():
        params = RECORDS[name]["identity"]["parameters"]
        named = [spec.corpora, spec.corpus, spec.sizes, spec.encoder]
        named += [spec.sweep[1], spec.sweep[2]] if spec.sweep else []
        named += [spec.beir[1]] if spec.beir else []
        named += [*spec.named, spec.baseline, spec.samples]
        assert all(p in params for p in named if p), name
    assert corpus_token("scifact-sections") == "scifact"


def test_a_claim_whose_questions_all_tie_gives_no_detectable_effect() -> None:
    """A folder's few questions that all score alike have no spread: "could detect ≥ 0.00"
    would say the test could see any effect; the verdict says there is no spread instead."""
    values = _renamed(RECORDS["dr005"]["values"], {"pyref": "notes"})
    tie = "test_notes_900_late_section_chunk"
    values |= {f"{tie}_{k}": 0.0 for k in ("diff", "diff_low", "diff_high", "mde")}
    values |= {f"{tie}_p": 1.0, f"{tie}_p_holm": 1.0}
    run = against_published("dr005", values, _run("dr005", corpora=["notes"]))
    row = run.claims.loc["C2 on notes"]
    assert row["verdict, this run"] == "not established (no spread across questions)"
    assert row["agree"] == "yes"  # the same verdict: not established either way
    assert "≥ 0.00" not in run.summary


def test_a_claim_between_two_sizes_is_tested_between_the_runs_two() -> None:
    published = RECORDS["dr004"]["identity"]["parameters"]
    field = "test_pyref_900_chunk_1800_section_chunk_900_section"  # 1,800 against 900
    assert cast("dr004", field, published, published | {"chunk_chars": [600, 1200]}) == [
        Trial("test_pyref_600_chunk_1200_section_chunk_600_section", "at 600 and 1200 characters")
    ]


def test_dr002_on_a_folder_tests_each_encoders_claims_there_and_names_the_missing_one() -> None:
    """A folder read with MiniLM, e5-small and WordLlama: every claim about those two
    is tested on the folder (the SciFact sample's too: the folder is read whole); the
    int8 claims say the run ran no minilm-int8; the prefix claim (C9) is the
    study's own key, tested where the run has it."""
    published = RECORDS["dr002"]
    values = _renamed(published["values"], {"pyref": "notes"})
    identity = _run("dr002", corpora=["/home/me/notes"], encoders=["all-MiniLM-L6-v2",
                    "e5-small", "wordllama"])  # fmt: skip
    run = against_published("dr002", values, identity)
    rows = {c.id: c for c in _rows("dr002")}
    int8 = {i for i, c in rows.items() if "minilm_int8" in c.key}
    assert int8 == {"C5", "C6"}
    for i in int8:
        assert run.claims.loc[i, "verdict, this run"] == (
            "not testable here: the run ran no minilm-int8 (encoders = "
            "['all-MiniLM-L6-v2', 'e5-small', 'wordllama'])"
        )
    for i, c in rows.items():
        if i in int8 or "_test_" not in f"_{c.key.partition('.')[2]}":
            continue
        row = run.claims.loc[f"{i} on notes"]  # the Python reference's numbers, on notes
        pyref = c.key.partition(".")[2].replace("_scifact_1000_", "_pyref_")
        pyref = pyref.replace("_scifact_", "_pyref_").replace("_qasper_", "_pyref_")
        want = published["values"][f"{pyref}_diff"]
        assert row["difference, this run"].startswith(f"{want:+.3f}"), (i, row)


def test_dr002_without_a_sample_tests_the_sample_claim_on_the_whole_corpus() -> None:
    """A study that compared e5-small on a SciFact sample (as DR-002 did until its
    engine's fast build): a run without the sample tests the claim on all of SciFact."""
    params = RECORDS["dr002"]["identity"]["parameters"] | {"sampled": {"e5-small": 1000}}
    field = "test_scifact_1000_dense_e5_small"
    assert cast("dr002", field, params, params | {"sampled": {}}) == [
        Trial("test_scifact_dense_e5_small", "on all of scifact")
    ]
    assert cast("dr002", field, params, params | {"sampled": {"e5-small": 500}}) == [
        Trial("test_scifact_500_dense_e5_small", "on a sample of 500 of scifact")
    ]
    assert cast("dr002", field, params, params | {"baseline": "minilm-int8"}) == [
        Trial(field, "against minilm-int8")
    ]


def test_dr003_names_its_first_stages_and_rerankers_as_roles() -> None:
    params = RECORDS["dr003"]["identity"]["parameters"]
    field = "pyref_dense_e5_maxsim_vs_first_ndcg10"
    assert cast("dr003", field, params, params | {"corpora": ["a/notes"]}) == [
        Trial("notes_dense_e5_maxsim_vs_first_ndcg10", "on notes")
    ]
    minilm = ["dense:all-MiniLM-L6-v2", "hybrid:all-MiniLM-L6-v2"]
    assert cast("dr003", field, params, params | {"first_stages": minilm}) == [
        Trial(None, why=f"the run ran no dense:e5-small (first_stages = {minilm})")
    ]
    rescore = "scifact_dense_minilm_e5_rescore_vs_first_ndcg10"
    assert cast("dr003", rescore, params, params | {"rerankers": ["none", "maxsim"]}) == [
        Trial(None, why="the run ran no e5-rescore (rerankers = ['none', 'maxsim'])")
    ]
    assert cast("dr003", rescore, params, params | {"first_stages": minilm}) == [Trial(rescore)]
