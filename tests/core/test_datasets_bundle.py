"""Tests for the one loader (:func:`hierret.datasets.load`) and the one document sampler."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pytest
from _toy import write_beir
from hypothesis import given, settings
from hypothesis import strategies as st
from test_datasets_qasper import P1, P2, write_json

from hierret.cli import main
from hierret.datasets import (
    Bundle,
    DataFormatError,
    build_sectioned,
    default_gold_path,
    load,
    load_beir,
    load_gold,
    load_python_reference,
    sample_documents,
    source_names,
)
from hierret.structure.hierarchy import HEADING_STYLES, build_hierarchy

# -- sources by name and by path ------------------------------------------------


def test_python_reference_whole() -> None:
    bundle = load("python-reference")
    corpus = load_python_reference()
    gold = load_gold(default_gold_path(), corpus)
    assert isinstance(bundle, Bundle)
    assert [d.id for d in bundle.corpus] == [d.id for d in corpus]
    assert bundle.corpus.fingerprint == corpus.fingerprint  # nothing sampled: same corpus
    assert bundle.queries == tuple(gold.queries)
    assert bundle.targets == ("documents", "sections", "passages")
    assert bundle.heading_styles == HEADING_STYLES
    assert bundle.split is None
    ident = bundle.identity()
    digest = hashlib.sha256(default_gold_path().read_bytes()).hexdigest()[:16]
    assert (ident["gold"], ident["gold_digest"]) == ("python-reference.jsonl", digest)
    assert "split" not in ident
    assert ident["sampling"] == f"all {len(gold.queries)} queries; all {len(corpus)} documents"
    with pytest.raises(dataclasses.FrozenInstanceError):
        bundle.source = "other"  # type: ignore[misc]


def test_python_reference_smoke_keeps_evidence_documents() -> None:
    bundle = load("python-reference", max_queries=10, max_docs=20, seed=3)
    gold = load_gold(default_gold_path(), load_python_reference())
    assert bundle.queries == tuple(gold.queries[:10])
    evidence = {d for q in gold.queries[:10] for d in q.evidence_docs}
    ids = [d.id for d in bundle.corpus]
    assert evidence <= set(ids)
    assert len(ids) == max(len(evidence), 20)
    assert ids == sorted(ids)  # corpus order (topics are sorted by name)
    assert bundle.sampling.startswith(
        f"the first 10 of {len(gold.queries)} queries (file order); "
        f"every judged document ({len(evidence)}) + "
    )
    assert bundle.sampling.endswith(", seed 3")


@pytest.fixture
def beir_folder(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tinybeir")


def test_beir_folder_is_judged_at_documents_only(beir_folder: Path) -> None:
    bundle = load(beir_folder)
    assert (bundle.source, bundle.split) == ("tinybeir", "test")
    assert bundle.corpus.name == "beir-tinybeir"
    assert [q.id for q in bundle.queries] == ["q1", "q2"]
    assert bundle.targets == ("documents",)
    assert bundle.heading_styles == HEADING_STYLES
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    # test.tsv: q2-d3 1, q1-d1 2, q1-d2 0, q2-d1 1: graded, zeros left out
    assert bundle.qrels(h, "documents") == {"q1": {"d1": 2}, "q2": {"d3": 1, "d1": 1}}
    for target in ("sections", "passages"):
        with pytest.raises(ValueError, match=r"judged at documents only, not '" + target):
            bundle.qrels(h, target)
    assert load(beir_folder, split="train").queries[0].id == "q3"


def test_beir_name_and_sections_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path))
    write_beir(tmp_path / "scifact")
    bundle = load("scifact", download=False)
    assert (bundle.source, bundle.corpus.name, bundle.targets) == (
        "scifact",
        "beir-scifact",
        ("documents",),
    )
    assert bundle.identity()["dataset"] == "beir/scifact"

    sections = load("scifact-sections", seed=5, download=False)
    reference = build_sectioned(load_beir(tmp_path / "scifact"), seed=5)
    assert sections.corpus == reference.corpus
    assert sections.queries == tuple(reference.queries)
    assert sections.targets == ("documents", "sections", "passages")
    assert sections.heading_styles == ("markdown",)
    assert sections.identity()["source_fingerprint"] == reference.params["source_fingerprint"]
    assert "max_docs" not in sections.identity()


def test_qasper_file_and_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_json(tmp_path / "mini-v0.3.json", {"p1": P1, "p2": P2})
    bundle = load(path)
    assert (bundle.source, bundle.split) == ("mini-v0.3.json", "mini-v0.3")
    assert bundle.targets == ("documents", "sections", "passages")
    assert bundle.heading_styles == ("markdown",)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    encoder = next(s for s in h.sections["p1"] if s.path[-1] == "Encoder")
    # q1's evidence is the one paragraph of "Method > Encoder"
    assert bundle.qrels(h, "sections")["q1"] == {encoder.id: 1}
    assert bundle.qrels(h, "documents")["q9"] == {"p2": 1}
    with pytest.raises(ValueError, match="no splits"):
        load(path, split="dev")

    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "home"))
    (tmp_path / "home" / "qasper").mkdir(parents=True)
    write_json(tmp_path / "home" / "qasper" / "qasper-dev-v0.3.json", {"p2": P2})
    by_name = load("qasper", download=False)
    assert (by_name.source, by_name.split, [d.id for d in by_name.corpus]) == (
        "qasper",
        "dev",
        ["p2"],
    )
    with pytest.raises(ValueError, match="Qasper has no split 'validation'"):
        load("qasper", split="validation")


def test_unknown_name_lists_names_and_says_paths_work() -> None:
    with pytest.raises(ValueError, match="is neither a corpus name") as info:
        load("scifakt")
    msg = str(info.value)
    assert all(name in msg for name in source_names())
    assert "a path is accepted too" in msg
    assert "BEIR folder" in msg
    assert "Qasper v0.3 JSON file" in msg


def test_unrecognised_paths_say_what_is_recognised(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    for path in (tmp_path / "empty", text):
        with pytest.raises(DataFormatError, match="not a recognised format") as info:
            load(path)
        assert "corpus.jsonl" in str(info.value)
        assert "Qasper v0.3 JSON" in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_queries": 0},
        {"max_docs": -1},
        {"max_docs": True},
        {"max_queries": "10"},
        {"seed": 1.5},
        {"seed": None},
    ],
)
def test_bad_counts_are_named(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        load("python-reference", **kwargs)  # type: ignore[arg-type]


def test_split_refused_where_there_is_none() -> None:
    with pytest.raises(ValueError, match="python-reference has one set of questions"):
        load("python-reference", split="test")


# -- qrels ----------------------------------------------------------------------


def test_qrels_per_target_and_refusals() -> None:
    bundle = load("python-reference", max_queries=5, max_docs=8)
    h = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    docs = bundle.qrels(h, "documents")
    assert docs == {q.id: dict.fromkeys(sorted(q.evidence_docs), 1) for q in bundle.queries}
    for target, level_of in (("sections", h.units("sections")), ("passages", h.passages)):
        qrels = bundle.qrels(h, target)  # type: ignore[arg-type]
        ids = {u.id: u for u in level_of}
        for q in bundle.queries:
            assert qrels[q.id], f"{q.id} has no relevant {target}"
            for uid in qrels[q.id]:  # every judged unit overlaps the query's evidence
                u = ids[uid]
                assert any(d == u.doc_id and s < u.end and u.start < e for d, s, e in q.evidence)
    with pytest.raises(ValueError, match="unknown target 'chunks'"):
        bundle.qrels(h, "chunks")  # type: ignore[arg-type]
    other = build_hierarchy(load_python_reference())
    with pytest.raises(ValueError, match=r"build it from bundle\.corpus"):
        bundle.qrels(other, "documents")


# -- the sampler ------------------------------------------------------------------


def test_sampler_is_deterministic_and_seeded() -> None:
    ids = [f"d{i:03d}" for i in range(200)]
    judged = {"d005", "d150"}
    a = sample_documents(ids, judged, 30, seed=1)
    assert a == sample_documents(ids, judged, 30, seed=1)
    assert a != sample_documents(ids, judged, 30, seed=2)
    assert len(a) == 30
    assert judged <= set(a)


def test_sampler_refuses_unknown_judged_ids_and_repeats() -> None:
    with pytest.raises(ValueError, match="not in the corpus"):
        sample_documents(["a", "b"], {"c"}, 1)
    with pytest.raises(ValueError, match="repeats"):
        sample_documents(["a", "a"], set(), 1)
    with pytest.raises(ValueError, match="max_docs"):
        sample_documents(["a"], set(), 0)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 60),
    data=st.data(),
    max_docs=st.none() | st.integers(1, 80),
    seed=st.integers(0, 2**32 - 1),
)
def test_sampler_keeps_every_judged_document(
    n: int, data: st.DataObject, max_docs: int | None, seed: int
) -> None:
    ids = data.draw(st.permutations([f"x{i}" for i in range(n)]))
    judged = data.draw(st.lists(st.sampled_from(ids), max_size=n))
    kept = sample_documents(ids, judged, max_docs, seed=seed)
    assert set(judged) <= set(kept)
    expected = n if max_docs is None else max(len(set(judged)), min(max_docs, n))
    assert len(kept) == expected
    assert list(kept) == [d for d in ids if d in set(kept)]  # corpus order, no repeats
    # the judged ids' order and repeats do not matter
    shuffled = data.draw(st.permutations(judged))
    assert sample_documents(ids, shuffled + judged, max_docs, seed=seed) == kept


# -- the real SciFact: the sampler is DR-003's, scifact-sections is DR-004's ------------------


def _dr003_notebook_keep(
    n_docs: int, seed: int, smoke: bool
) -> tuple[set[str], dict[str, dict[str, int]]]:
    """DR-003's notebook code (notebooks/04_dr003_reranking.ipynb, ``load("scifact")``), copied."""
    data = load_beir("scifact", "test")
    queries = data.queries[:10] if smoke else data.queries
    wanted = {q.id for q in queries}
    judged = {d for q, rel in data.qrels.items() if q in wanted for d in rel}
    others = [d.id for d in data.corpus if d.id not in judged]
    rng = np.random.default_rng(seed)
    picked = rng.choice(
        len(others), size=max(0, min(n_docs - len(judged), len(others))), replace=False
    )
    keep = judged | {others[i] for i in picked}
    qrels = {
        q: {d: g for d, g in rel.items() if g > 0} for q, rel in data.qrels.items() if q in wanted
    }
    return keep, qrels


@pytest.mark.parametrize(("max_queries", "max_docs"), [(None, 1500), (10, 50)])
@pytest.mark.usefixtures("real_scifact")
def test_scifact_sample_is_dr003s(max_queries: int | None, max_docs: int) -> None:
    bundle = load("scifact", max_queries=max_queries, max_docs=max_docs, seed=0, download=False)
    keep, qrels = _dr003_notebook_keep(max_docs, 0, smoke=max_queries is not None)
    assert {d.id for d in bundle.corpus} == keep
    assert len(bundle.corpus) == max_docs
    full = load_beir("scifact", "test", download=False).corpus
    assert [d.id for d in bundle.corpus] == [d.id for d in full if d.id in keep]
    assert bundle.qrels(build_hierarchy(bundle.corpus), "documents") == qrels
    if max_queries is None:
        assert bundle.sampling == (
            "all 300 queries; every judged document (283) + 1,217 sampled of the other 4,900, "
            "seed 0"
        )


def test_scifact_sections_is_dr004s(real_scifact: Path) -> None:
    folder = real_scifact
    bundle = load("scifact-sections", seed=0, download=False)
    # DR-004's notebook: build_sectioned(load_beir("scifact", "test"), max_docs=max_docs, seed=seed)
    reference = build_sectioned(load_beir(folder, "test"), max_docs=None, seed=0)
    assert bundle.corpus == reference.corpus
    assert bundle.corpus.fingerprint == reference.corpus.fingerprint
    assert bundle.queries == tuple(reference.queries)


# -- the command line ------------------------------------------------------------------


def test_cli_searches_a_corpus_given_by_path(
    beir_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "search",
        "which animal purrs",
        "--corpus",
        str(beir_folder),
        "--encoder",
        "hash",
        "--cache-dir",
        str(tmp_path / "vectors"),
        "--level",
        "documents",
        "--k",
        "2",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("beir-tinybeir: 3 documents")
    assert sum(line.split()[2] in {"d1", "d2", "d3"} for line in out[1:] if line[:2].strip()) == 2


def test_cli_unknown_corpus_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["search", "x", "--corpus", "scifakt", "--encoder", "hash", "--cache-dir", str(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "'scifakt' is neither a corpus name (python-reference" in err
    assert "a path is accepted too" in err


# --- what a loader dropped travels with the bundle, into its summary and identity ----------


def test_dropped_judgments_are_counted_on_the_bundle(tmp_path: Path) -> None:
    from _toy import BEIR_TEST_QRELS as TEST_QRELS

    from hierret.datasets import BeirDataWarning

    root = write_beir(tmp_path / "mini", test=TEST_QRELS + "q9\td1\t1\nq1\td9\t1\n")
    with pytest.warns(BeirDataWarning):
        bundle = load(root, max_queries=1)
    expected = {"judgments naming unknown queries": 1, "judgments naming unknown documents": 1}
    assert bundle.dropped == expected
    text = "1 judgments naming unknown queries; 1 judgments naming unknown documents"
    assert bundle.summary()["dropped"] == text
    assert bundle.identity()["dropped"] == text


def test_a_clean_source_drops_nothing_and_records_no_drop(tmp_path: Path) -> None:
    bundle = load(write_beir(tmp_path / "mini"))
    assert bundle.dropped == {}
    assert bundle.summary()["dropped"] == "none"
    assert "dropped" not in bundle.identity()


def test_dropped_questions_of_qasper_are_counted_on_the_bundle(tmp_path: Path) -> None:
    bundle = load(write_json(tmp_path / "mini.json", {"p1": P1, "p2": P2}))
    assert bundle.dropped["questions unanswerable"] == 1
    assert "questions unanswerable" in str(bundle.identity()["dropped"])


def test_a_source_with_no_documents_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"holds no papers"):
        load(write_json(tmp_path / "empty.json", {}))
