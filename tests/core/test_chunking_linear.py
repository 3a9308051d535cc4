"""The chunker against its frozen copy, on real corpora and pathological long lines.

The reference is ``tests/core/_legacy_chunking.py``, the chunker as it was when
issue 11 asked for linear time: every span must stay the same on the real
corpora (all Python-reference topics, a slice of SciFact), on generated texts
and on the pathological long lines. Its time per character on unbroken lines
of 10 to 160 kB is measured by `tests/benchmarks/bench_speed.py` (`nox -s
bench`), not here: the unit tests time nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import _legacy_chunking as legacy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunking import any_script_texts, texts

from hierret.datasets import load_python_reference
from hierret.structure.chunking import chunk_text, split_sentences

_SIZES = [(900, 180), (300, 60), (1800, 360)]

#: Units repeated into one unbroken line: each stresses one look-back rule.
PATHOLOGICAL = {
    "abbreviation": "e.g. ",
    "number": "1. ",
    "section": "Section 3.2. ",
    "ellipsis": "... ",
    "initial": "J. ",
    "closing": ".) ",
    "bang": "! ",
    "dots": ".",
    "token-dot": "a.",
    "bracket-number": "(1.) ",
    "fullwidth": "．1",
    "cjk-stop": "。",
    "cr": "\r",
    "break-space": "\n ",
    "paragraph-sep": "\u2029",
    "spaces": " ",
    "open-bracket": "(",
    "mark": "\u0301",
    "words": "word ",
}


def _same(text: str, max_chars: int = 900, overlap: int = 180) -> None:
    assert split_sentences(text) == legacy.split_sentences(text)
    assert chunk_text(text, max_chars, overlap) == legacy.chunk_text(text, max_chars, overlap)


@pytest.mark.parametrize(("max_chars", "overlap"), _SIZES)
def test_python_reference_spans_unchanged(max_chars: int, overlap: int) -> None:
    docs = list(load_python_reference())
    assert len(docs) > 50
    for doc in docs:
        _same(doc.text, max_chars, overlap)


def test_scifact_spans_unchanged(real_scifact: Path) -> None:
    with (real_scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(1500), f, strict=False)]
    for row in rows:
        for max_chars, overlap in _SIZES:
            _same(row["title"] + "\n\n" + row["text"], max_chars, overlap)


@pytest.mark.parametrize("unit", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_lines_unchanged(unit: str) -> None:
    text = unit * (20_000 // len(unit))
    _same(text)
    _same(text, 50, 10)


@settings(max_examples=200, deadline=None)
@given(
    text=st.one_of(texts(), any_script_texts(), st.text(max_size=300)),
    max_chars=st.integers(5, 400),
    frac=st.floats(0, 0.9),
)
def test_generated_texts_unchanged(text: str, max_chars: int, frac: float) -> None:
    _same(text, max_chars, int(max_chars * frac))
