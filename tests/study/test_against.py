"""This run against the published record (hierret.publish.against)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hierret.publish import against, against_published, robustness
from hierret.publish.against import SHOWN, published_files
from hierret.publish.claims import claims, verdict
from hierret.publish.report import load_results, write_results
from hierret.study.params import RunParameters

ROOT = Path(__file__).resolve().parents[2]
RECORDS = load_results(ROOT / "data" / "results")
DECISIONS = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
NAMES = ["structure", "dr001", "dr002", "dr003", "dr004", "dr005"]


def test_the_checkout_is_found_from_the_package() -> None:
    assert published_files() == (ROOT / "data" / "results", ROOT / "DECISIONS.md")
    assert published_files("/") is None


@pytest.mark.parametrize("name", NAMES)
def test_the_published_run_agrees_with_itself(name: str) -> None:
    record = RECORDS[name]
    run = against_published(name, record["values"], record["identity"])
    assert run.agree, run.summary
    assert run.summary.startswith("All agree")
    assert run._repr_html_().count("All agree") == 1  # said once on the page
    mine = [c for c in claims(DECISIONS) if c.key.startswith(f"{name}.")]
    assert len(run.claims) == len(
        {c.id for c in mine if c.record.lower() == name[:2] + "-" + name[2:]}
    )
    assert len(run.claims) >= (0 if name == "structure" else 5)
    assert run.tables() == [] or all(t.caption for t in run.tables())


def _flip(name: str) -> tuple[dict[str, object], str]:
    """The record's values with its first claim's test made to give another verdict."""
    c = next(c for c in claims(DECISIONS) if c.key.startswith(f"{name}."))
    key = c.key.partition(".")[2]
    values = dict(RECORDS[name]["values"])
    written = robustness.base(c.written)  # without "(robust: …)"
    sign = next(s for s in (1, -1) if verdict(c.direction, s * 0.2, 0.001) != written)
    values |= {f"{key}_diff": sign * 0.2, f"{key}_diff_low": sign * 0.1}
    values |= {f"{key}_diff_high": sign * 0.3, f"{key}_p_holm": 0.001, f"{key}_p": 0.001}
    return values, c.id


@pytest.mark.parametrize("name", ["dr001", "dr004"])
def test_a_reversed_difference_is_named_with_both_verdicts(name: str) -> None:
    values, cid = _flip(name)
    run = against_published(name, values, RECORDS[name]["identity"])
    assert not run.agree
    assert run.claims.loc[cid, "agree"] == "no"
    assert f"not {cid} (" in run.summary
    assert run.claims.loc[cid, "verdict, published"] in run.summary


def test_a_changed_parameter_is_named_first_and_machine_facts_never_disagree() -> None:
    record = RECORDS["dr002"]
    identity = json.loads(json.dumps(record["identity"]))
    identity.setdefault("parameters", {})["max_chars"] = 600
    values = dict(record["values"])
    fact = record["facts"][0]
    values[fact] = values[fact] * 3 + 1  # another machine's time
    run = against_published("dr002", values, identity)
    assert run.settings.index[0] == "parameters.max_chars"
    assert run.settings.loc["parameters.max_chars", "this run"] == "600"
    assert "1 parameter (max_chars: " in run.summary
    quoted = run.numbers.loc[run.numbers.index == fact, "same"]
    assert list(quoted) in ([], ["machine fact"])
    assert "quoted numbers equal the published ones" in run.summary


def test_without_a_published_record_the_section_says_so(tmp_path: Path) -> None:
    run = against_published("dr001", {"x": 1}, {}, results=tmp_path, decisions=tmp_path / "no.md")
    assert not run.found
    assert not run.agree
    assert run.tables() == []
    assert "No published record 'dr001'" in run.summary
    assert "No published record" in run._repr_html_()


def test_a_record_holds_the_run_parameters_as_they_stood(tmp_path: Path) -> None:
    namespace: dict[str, object] = {"max_chars": 900, "seed": 0}
    parameters = RunParameters(["max_chars", "seed"], namespace)
    namespace["max_chars"] = 600  # a later cell narrows it
    path = write_results(tmp_path / "r.json", "r", {"n": 1}, {"parameters": parameters})
    assert json.loads(path.read_text())["identity"]["parameters"] == {"max_chars": 600, "seed": 0}


def test_a_claim_the_run_could_not_test_is_said_so_not_counted_as_agreeing() -> None:
    record = RECORDS["dr004"]
    c = next(c for c in claims(DECISIONS) if c.key.startswith("dr004."))
    key = c.key.partition(".")[2]
    values = {k: v for k, v in record["values"].items() if not k.startswith(key)}
    run = against_published("dr004", values, record["identity"])
    assert run.claims.loc[c.id, "agree"] == "not tested"
    assert not run.agree
    assert f"1 not testable on this run — {c.id}: " in run.summary


def test_none_reads_as_none() -> None:
    record = RECORDS["dr001"]
    identity = json.loads(json.dumps(record["identity"]))
    identity["parameters"]["beir"] = None
    run = against_published("dr001", record["values"], identity)
    assert run.settings.loc["parameters.beir"].tolist() == ["scifact", "None"]


def test_a_corpus_only_one_run_has_is_one_row_not_one_per_field() -> None:
    record = RECORDS["dr004"]
    identity = json.loads(json.dumps(record["identity"]))
    identity["corpora"] = {"handbook": {"fingerprint": "abc", "documents": 18}}
    run = against_published("dr004", record["values"], identity)
    rows = run.settings.index.tolist()
    assert "corpora" in rows
    assert not any(r.startswith("corpora.") for r in rows)
    published = ", ".join(record["identity"]["corpora"])
    assert run.settings.loc["corpora"].tolist() == [published, "handbook"]
    assert "(not recorded)" not in run.settings.to_string()


def _folder_run(name: str, folder: Path) -> dict[str, object]:
    """The identity a run on a folder of documents gives: its own corpus, the path as given."""
    identity = json.loads(json.dumps(RECORDS[name]["identity"]))
    corpus = {
        "dataset": f"folder/{folder.name}",
        "documents": 15,
        "queries": 10,
        "content_fingerprint": "0123456789abcdef",
        "fingerprint": "fedcba9876543210",
    }
    if name == "dr001":  # a flat identity: the corpus's fields beside the parameters
        for k in ("gold", "gold_digest", "source", "evidence_fingerprint", "sampling"):
            identity.pop(k)
        identity |= corpus | {"corpus": folder.name}
        identity["parameters"]["corpus"] = str(folder)
    else:
        identity["corpora"] = {folder.name: corpus}
        identity["parameters"]["corpora"] = [str(folder)]
    return identity


@pytest.mark.parametrize("name", ["dr001", "dr004", "dr005"])
def test_a_folder_run_reads_relative_once_each_and_never_not_recorded(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "course" / "notes"
    monkeypatch.chdir(tmp_path)
    run = against_published(name, RECORDS[name]["values"], _folder_run(name, folder))
    shown = run.settings.to_string() + run.summary + run._repr_html_()
    assert str(tmp_path) not in shown  # no absolute path
    assert "course/notes" in shown
    assert "(not recorded)" not in shown
    assert len(set(run.settings.index)) == len(run.settings)
    key = "corpus" if name == "dr001" else "corpora"
    assert run.settings.loc[f"parameters.{key}", "this run"] == "course/notes"
    assert key not in run.settings.index  # the corpus named by the parameter's row only
    if name == "dr001":  # the folder's own identity fields: one row of their names
        assert run.settings.loc[against.ONE_SIDED].tolist() == [
            "gold, gold_digest, source, evidence_fingerprint, sampling",
            "dataset, content_fingerprint",
        ]


def test_a_path_outside_the_working_folder_reads_as_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    identity = _folder_run("dr004", tmp_path / "elsewhere" / "notes")
    run = against_published("dr004", RECORDS["dr004"]["values"], identity)
    assert run.settings.loc["parameters.corpora", "this run"] == "notes"
    assert str(tmp_path) not in run.summary
    identity = _folder_run("dr001", tmp_path / "elsewhere" / "notes")
    identity["parameters"]["corpus"] = "../elsewhere/notes"  # as the site build gives it
    run = against_published("dr001", RECORDS["dr001"]["values"], identity)
    assert run.settings.loc["parameters.corpus", "this run"] == "notes"


def test_a_changed_passage_size_is_one_row_not_two() -> None:
    identity = json.loads(json.dumps(RECORDS["dr001"]["identity"]))
    identity["parameters"]["max_chars"] = identity["max_chars"] = 600
    run = against_published("dr001", RECORDS["dr001"]["values"], identity)
    assert run.settings.index.tolist() == ["parameters.max_chars"]
    assert "1 parameter (max_chars: 900 → 600)" in run.summary


def test_an_encoder_named_once() -> None:
    identity = json.loads(json.dumps(RECORDS["dr004"]["identity"]))
    identity["parameters"]["encoder"] = "wordllama"
    identity["encoder"] = "dleemiller/word-llama-l2-supercat (static, fp32, 256 dims)"
    run = against_published("dr004", RECORDS["dr004"]["values"], identity)
    assert run.settings.index.tolist() == ["parameters.encoder"]
    assert run.settings.loc["parameters.encoder"].tolist() == [
        "all-MiniLM-L6-v2",
        "wordllama (dleemiller/word-llama-l2-supercat)",
    ]


def test_a_parameter_the_published_run_did_not_have_says_so() -> None:
    identity = json.loads(json.dumps(RECORDS["dr002"]["identity"]))
    identity["parameters"]["new_knob"] = 3
    run = against_published("dr002", RECORDS["dr002"]["values"], identity)
    assert run.settings.loc["parameters.new_knob"].tolist() == [against.NOT_A_PARAMETER, "3"]


def test_an_entry_a_mapping_parameter_lacks_reads_as_not_set() -> None:
    """The published run's ``sampled = {}`` (no encoder sampled) is a parameter it had:
    against a run that sampled e5-small, its side says the entry is not set, not that
    the parameter did not exist."""
    assert RECORDS["dr002"]["identity"]["parameters"]["sampled"] == {}
    identity = json.loads(json.dumps(RECORDS["dr002"]["identity"]))
    identity["parameters"]["sampled"] = {"e5-small": 500}
    run = against_published("dr002", RECORDS["dr002"]["values"], identity)
    assert run.settings.loc["parameters.sampled.e5-small"].tolist() == [against.NOT_SET, "500"]


def _moved_detectable(name: str) -> tuple[dict[str, object], str]:
    """The values with a not-established claim's detectable effect moved, its verdict kept."""
    c = next(
        c for c in claims(DECISIONS)
        if c.key.startswith(f"{name}.") and c.written.startswith("not established")
        and c.record == "DR-" + name[2:]
    )  # fmt: skip
    values = dict(RECORDS[name]["values"])
    values[f"{c.key.partition('.')[2]}_mde"] = 0.77
    return values, c.id


@pytest.mark.parametrize("name", ["dr001", "dr004", "dr005"])
def test_a_moved_detectable_effect_is_not_a_disagreement(name: str) -> None:
    values, cid = _moved_detectable(name)
    run = against_published(name, values, RECORDS[name]["identity"])
    row = run.claims.loc[cid]
    assert "0.77" in row["verdict, this run"]
    assert row["verdict, this run"] != row["verdict, published"]
    assert row["agree"] == "yes"
    assert f"not {cid} (" not in run.summary
    assert f"1 of them with another detectable effect: {cid} ≥ " in run.summary  # said as such
    assert f"{cid} ≥ " in run.summary.split("→ ≥ 0.77")[0]


def test_verdicts_agree_by_class_not_by_words() -> None:
    assert against.verdict_word("holds (fragile: rank test 0.066)") == "holds"
    assert against._agree("holds", "holds (fragile: rank test 0.066)") == "yes"
    assert against._agree("inconclusive (margin 0.02)", "non-inferior (margin 0.02)") == "no"
    assert (
        against._agree(
            "not established (could detect ≥ 0.30)", "not established (could detect ≥ 0.08)"
        )
        == "yes"
    )
    assert against._agree("contradicted", "holds") == "no"


def test_the_page_shows_at_most_a_screenful_of_differing_numbers() -> None:
    record = RECORDS["dr004"]
    moved = {k: v + 1 if isinstance(v, int | float) else v for k, v in record["values"].items()}
    run = against_published("dr004", moved, record["identity"])
    shown = run.tables()[-1]
    assert len(shown.data) == SHOWN < (run.numbers["same"] == "no").sum()
    assert shown.caption.startswith(f"The first {SHOWN} of ")


#: A folder of documents written for these tests (tests/data/course_notes/README.md).
COURSE = ROOT / "tests" / "data" / "course_notes"


def _course_identity(name: str, corpus: str) -> dict[str, object]:
    """The identity a run of ``name`` on the course folder records, built as its notebook
    builds it (the bundle's and the hierarchy's own identity, the parameters as run)."""
    from hierret import build_hierarchy, load

    bundle = load(corpus)
    published = RECORDS[name]["identity"]
    if name == "dr001":  # a flat identity: the corpus's and the chunking's fields at the top
        hierarchy = build_hierarchy(bundle.corpus, max_chars=900, overlap_chars=180,
                                    heading_styles=bundle.heading_styles)  # fmt: skip
        parameters = published["parameters"] | {"corpus": corpus, "beir": None, "size": "class"}
        return {**bundle.identity(), **hierarchy.identity(), "parameters": parameters,
                "encoder": published["encoder"]}  # fmt: skip
    others = {k: v for k, v in published.items() if k not in ("corpora", "parameters")}
    return others | {"parameters": published["parameters"] | {"corpora": [corpus]},
                     "corpora": {bundle.identity()["corpus"]: bundle.identity()}}  # fmt: skip


@pytest.mark.parametrize("name", ["dr001", "dr004", "dr005"])
@pytest.mark.parametrize("given", ["relative", "absolute"])
def test_a_run_on_a_real_folder_reads_as_the_reader_gave_it(
    name: str, given: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    corpus = "tests/data/course_notes" if given == "relative" else str(COURSE)
    run = against_published(name, RECORDS[name]["values"], _course_identity(name, corpus))
    shown = run.settings.to_string() + run.summary + run._repr_html_()
    assert str(ROOT) not in shown  # never an absolute path
    assert "(not recorded)" not in shown
    assert len(set(run.settings.index)) == len(run.settings)  # each setting once
    key = "corpus" if name == "dr001" else "corpora"
    assert run.settings.loc[f"parameters.{key}", "this run"] == "tests/data/course_notes"
    assert not run.agree  # another corpus: settings differ
    assert run.claims["agree"].isin(["yes", "not tested"]).all()  # published values, folder roles
    changed = ["size", "corpus", "beir"] if name == "dr001" else ["corpora"]
    n = len(changed)
    assert run.summary.startswith(
        f"This run differs from the published one in {n} parameter{'s' * (n > 1)} ({changed[0]}: "
    )
    if name == "dr001":  # the corpus's own fields follow from the parameter: counted as such
        others = len(run.settings) - n
        assert f"; {others} other fields of the run's identity differ with them (" in run.summary
