"""A notebook's run (:class:`hierret.study.Lesson`), the testbed's runs and DR-001's record.

The lesson checks a notebook's parameters with the rules its notebook declares
and applies its size; the testbed runs arms on its own questions, judges every
level it is asked for, cuts its corpus at other sizes and skips a corpus whose
data is absent; :class:`hierret.study.Chunking` writes DR-001's keys from its
tables, in the record's order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hierret.study.testbed as testbed_module
from hierret.datasets.download import DataNotFoundError
from hierret.encoders import HashEncoder
from hierret.evaluation.stats import StatsSettings
from hierret.search.profile import Profile
from hierret.study import Chunking, Lesson, Testbed
from hierret.study.lesson import NOTEBOOKS
from hierret.study.params import ParameterError, declared_parameters
from hierret.study.sizes import PRESETS

ROOT = Path(__file__).resolve().parents[2]
FEW = StatsSettings(n_resamples=50)


def _namespace(cell: str, injected: str = "") -> dict[str, object]:
    """A notebook's globals after its parameters cell (and papermill's, when given)."""
    ns: dict[str, object] = dict(declared_parameters(cell))
    history = ["", cell]
    if injected:
        history.append("# Parameters\n" + injected)
        ns |= declared_parameters(injected)
    ns["In"] = [*history, "Lesson.begin(globals(), ...)"]
    return ns


def _parameters_cell(stem: str) -> str:
    cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())["cells"]
    cell = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return "".join(cell["source"])


def test_every_notebook_is_declared_with_its_presets() -> None:
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(NOTEBOOKS) == stems
    for stem, spec in NOTEBOOKS.items():
        names = declared_parameters(_parameters_cell(stem))
        assert set(spec.rules) | set(spec.also) <= set(names), stem
        assert stem in PRESETS, stem


def test_begin_applies_the_size_and_checks_the_notebooks_rules() -> None:
    cell = _parameters_cell("02_dr001_chunking")
    ns = _namespace(cell, "size = 'smoke'\nseed = 3\n")
    lesson = Lesson.begin(ns, "02_dr001_chunking")
    smoke = PRESETS["02_dr001_chunking"]["smoke"]
    assert ns["seed"] == 3  # given: the preset leaves it
    assert any(ns[name] != declared_parameters(cell)[name] for name in smoke if name != "seed")
    assert lesson.record == "dr001"
    assert lesson.parameters["seed"] == 3
    assert lesson.stats == StatsSettings(ns["confidence"], ns["n_resamples"], 3)
    # the notebook's own rule: a corpus judged at documents only cannot inform DR-001
    with pytest.raises(ParameterError, match="corpus"):
        Lesson.begin(_namespace(cell, "corpus = 'scifact'\n"), "02_dr001_chunking")
    with pytest.raises(ParameterError, match="encodr"):
        Lesson.begin(_namespace(cell, "encodr = 'x'\n"), "02_dr001_chunking")


def test_an_unknown_notebook_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown notebook '02_chunking'.*NOTEBOOKS"):
        Lesson.begin({}, "02_chunking")


def test_publish_writes_the_record_under_its_name(tmp_path: Path) -> None:
    ns = _namespace(_parameters_cell("01_structure"), f"results_dir = {str(tmp_path)!r}\n")
    lesson = Lesson.begin(ns, "01_structure")
    lesson.publish({"n": 3}, {"corpus": "c"})
    record = json.loads((tmp_path / "structure.json").read_text())
    assert record["values"]["n"] == 3


@pytest.fixture(scope="module")
def bed() -> Testbed:
    return Testbed.load("python-reference", 600, 120, max_queries=6, max_docs=8)


def test_run_compare_covered_and_sweep(bed: Testbed) -> None:
    enc = HashEncoder(dimension=16)
    arms = {"passages": Profile(), "sections": Profile(level="sections")}
    result = bed.run(arms, enc, targets=["sections"], metrics=["hit@1"], stats=FEW)
    assert result.targets == ["sections"]
    assert result.family == []
    assert set(result.queries) == {q.id for q in bed.queries}
    assert sorted(bed.covered(["passages"])) == ["passages"]
    sweep = bed.sweep(enc, [(300, 60), (600, 120)])
    assert sweep.sizes == [300, 600]
    assert len(sweep.searchers[600].hierarchy.passages) == len(bed.hierarchy.passages)


def test_covered_names_a_question_without_an_answer(bed: Testbed) -> None:
    from dataclasses import replace

    bundle = replace(bed.bundle, queries=(replace(bed.queries[0], evidence=()),))
    with pytest.raises(ValueError, match=bed.queries[0].id):
        Testbed(bundle, bed.hierarchy).covered(["passages"])


def test_found_skips_absent_data_only(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def absent(*args: object, **kwargs: object) -> None:
        raise DataNotFoundError("scifact is not downloaded")

    monkeypatch.setattr(testbed_module, "load", absent)
    assert Testbed.found("scifact") is None
    assert "scifact: skipped — scifact is not downloaded" in capsys.readouterr().out
    monkeypatch.undo()
    with pytest.raises(ValueError, match="neither a corpus name"):
        Testbed.found("/no/such/corpus")


def test_chunking_records_every_table_in_the_records_order(bed: Testbed) -> None:
    enc = HashEncoder(dimension=16)

    def pair(target: str) -> object:
        arms = {"passages": Profile(), "whole": Profile(level=target)}
        return bed.run(arms, enc, targets=[target], metrics=["hit@1"], baseline="whole",
                       family=[("passages", "whole")], stats=FEW)  # fmt: skip

    whole = {t: pair(t) for t in ("sections", "documents")}
    three = {r: Profile(ranker=r) for r in ("dense", "bm25", "hybrid")}
    rankers = bed.run(three, enc, metrics=["ndcg@10", "hit@5"], family=[("bm25", "dense")],
                      stats=FEW)  # fmt: skip
    bm25 = {a: Profile(ranker="bm25", analyzer=a) for a in ("english", "whitespace")}
    analyzer = bed.run(bm25, enc, baseline="whitespace", family=[("english", "whitespace")],
                       stats=FEW)  # fmt: skip
    sweep = bed.sweep(enc, [(300, 60), (600, 120)])
    sizes = bed.run(sweep.arms({"dense": Profile()}), enc, targets=["sections"],
                    baseline="dense-600", family=sweep.family("dense", 600), stats=FEW)  # fmt: skip
    docs = bed.run({"d": Profile(level="documents")}, enc, targets=["documents"], stats=FEW)
    study = Chunking(bed, enc, whole, rankers, analyzer, sweep, sizes, docs)
    run = {"max_chars": 600, "overlap_chars": 120, "rrf_k": 60, "pool": 100,
           "confidence": 0.95, "margin": 0.02}  # fmt: skip
    values = study.values(run)
    keys = list(values)
    assert keys[:3] == ["scifact_d_n", "scifact_d_mean", "scifact_d_low"]
    assert values["scifact_queries"] == len(bed.queries)
    assert values["scifact_docs"] == len(bed.bundle.corpus)
    hit1 = whole["sections"].table("sections", "hit@1")
    assert values["hit1_sec_whole"] == hit1.loc["whole", "hits"]
    assert values["hit1_sec_p"] == hit1.loc["passages", "p"]
    assert "hit1_doc_p" in values
    assert "hit1_doc_whole_p" not in values
    assert values["hit5_hybrid"] == rankers.table("passages", "hit@5").loc["hybrid", "hits"]
    assert "over_window" in values
    assert "sweep_300_over_window" in values
    assert "sweep_dense_300_diff" in values
    assert keys[-10:] == ["n_questions", "n_passages", "n_sections", "max_chars",
                          "n_documents", "overlap_chars", "rrf_k", "pool", "confidence",
                          "margin"]  # fmt: skip
    assert list(study.identity(run))[-2:] == ["parameters", "encoder"]
    with pytest.raises(KeyError, match="margin"):
        study.values({k: v for k, v in run.items() if k != "margin"})
    with pytest.raises(ValueError, match="give sections, then documents"):
        Chunking(bed, enc, {"documents": whole["documents"]}, rankers, analyzer, sweep, sizes)
