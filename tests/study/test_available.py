"""hierret.study.available, hierret.publish.figures: what loads here, figures saved on request."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from hierret.datasets.download import DataNotFoundError
from hierret.encoders.cache import CachedEncoder
from hierret.publish import figures
from hierret.study import available


def test_encoders_loads_each_once_and_reports_the_missing() -> None:
    lines: list[str] = []
    found, missing = available.encoders(["hash", "nope", "hash"], log=lines.append)
    assert list(found) == ["hash"]
    assert isinstance(found["hash"], CachedEncoder)
    assert list(missing) == ["nope"]
    assert "unknown encoder 'nope'" in missing["nope"]
    assert len(lines) == 2
    assert lines[1].startswith("nope: not available here")


def test_cross_encoders_that_cannot_load_are_skipped(tmp_path: Path) -> None:
    lines: list[str] = []
    assert available.cross_encoders([str(tmp_path / "absent")], log=lines.append) == {}
    assert lines
    assert "cannot be loaded here" in lines[0]


def test_corpora_skip_absent_data_and_cap_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    real = available.load

    def absent(name: str, **kw: object) -> object:
        if name == "scifact":
            raise DataNotFoundError("no scifact here")
        return real(name, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(available, "load", absent)
    lines: list[str] = []
    found = available.corpora(
        ["python-reference", "scifact"],
        log=lines.append,
        max_docs={"python-reference": 4},
        max_queries=2,
    )
    assert list(found) == ["python-reference"]
    assert len(found["python-reference"].corpus) == 4
    assert lines == ["scifact: skipped — no scifact here"]


def test_judged_is_the_finest_level_with_its_judgements() -> None:
    bundle = available.load("python-reference", max_queries=3, max_docs=5)
    h, level, qrels = available.judged(bundle)
    assert level == "passages"
    assert qrels == bundle.qrels(h, "passages")
    assert h.corpus.fingerprint == bundle.corpus.fingerprint


def test_figures_are_saved_only_where_asked(tmp_path: Path) -> None:
    fig = plt.figure()
    figures.save(fig, None, "a.png")
    assert not list(tmp_path.iterdir())
    figures.save(fig, tmp_path / "figs", "a.png")
    assert (tmp_path / "figs" / "a.png").is_file()
    plt.close(fig)
