"""The analyzers against their frozen copy: the same terms on every input.

The reference is ``tests/core/_legacy_analyzer.py``, the analyzers as they were
when issue 11 asked for them to be faster. The speed itself is measured by
``nox -s bench`` against bm25s's tokenizer and stemmer.
"""

from __future__ import annotations

import json
from pathlib import Path

import _legacy_analyzer as legacy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierret.datasets import load_python_reference
from hierret.search.rankers import analyzer as current

NAMES = ["english", "whitespace"]


def _same(text: str) -> None:
    for name in NAMES:
        assert current.get_analyzer(name)(text) == legacy.get_analyzer(name)(text), name
    plain = {"stopwords": frozenset({"x", "the"}), "stemmer": None, "normalize": None}
    assert current.Analyzer(**plain)(text) == legacy.Analyzer(**plain)(text)


def test_python_reference_terms_unchanged() -> None:
    for doc in load_python_reference():
        _same(doc.text)


def test_scifact_terms_unchanged(real_scifact: Path) -> None:
    with (real_scifact / "corpus.jsonl").open(encoding="utf-8") as f:
        for _, line in zip(range(2000), f, strict=False):
            row = json.loads(line)
            _same(row["title"] + " " + row["text"])
    with (real_scifact / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            _same(json.loads(line)["text"])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "___",
        "__init__",
        "a__b_",
        "_x_ y__ __z",
        "Python's",
        "PYTHON'S dogs’s",
        "x's's",
        "o'sb",
        "it's_",
        "'s",
        " ’S ",
        "e\u0301's",
        "ﬁle's",
        "Straße's",
        "İstanbul’s",
        "a's\u0301",
        "日本語's",
        "٣'s",
        "_'s",
        "s's",
        "The Runner's __init__ methods",
    ],
)
def test_edge_cases_unchanged(text: str) -> None:
    _same(text)


_pieces = st.sampled_from(
    [
        "'",
        "’",
        "s",
        "S",
        "_",
        " ",
        "a",
        "é",
        "e\u0301",
        "ﬁ",
        "ß",
        "İ",
        "the",
        "running",
        "x",
        "\u0301",
        "1",
        "٣",
        "日",
        ".",
        "\n",
        "'s",
    ]
)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.lists(_pieces, max_size=40).map("".join), st.text(max_size=80)))
def test_generated_texts_unchanged(text: str) -> None:
    _same(text)


def test_stem_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(current, "_MAX_STEMS", 3)
    english = current.get_analyzer("english")
    words = "running studies cats dogs houses walked talking"
    assert english(words) == legacy.get_analyzer("english")(words)
    assert english(words) == ["run", "studi", "cat", "dog", "hous", "walk", "talk"]
    assert english("alphas betas") == ["alpha", "beta"]  # 7 known + 2 new > 3: start again
    assert set(current._local.stems["english"]) == {"alphas", "betas"}
