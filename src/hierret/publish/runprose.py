"""Prose that follows the run: no sentence states the reference run's facts as this run's.

A notebook's Markdown is written once and read after every run: the reference
run, a smaller one, one on a reader's folder or with another encoder. A
sentence that names a corpus, an encoder or its window, a passage size or a
count is true of the run only if it comes from the run (a code cell's output,
or the parameter's name, ``max_chars``, whose value the parameters cell shows) or
if it says it is the study's, in words a reader sees (:data:`STUDY_MARK`: "on the
reference parameters", "the reference run", "the study", "the record"...). A
mark holds for its sentence; a sentence with a mark that ends in a colon
introduces the study's text to the cell's end ("What the reference run found and
the record decided:"). Headings name a section's topic and are not read, and
neither are exercises (a cell headed *Exercises*: each describes the run its own
command makes).

:func:`reference_facts` lists the phrases true of the reference run and not of
this one, from the parameters this run changed (a corpus it did not read, the
reference encoder and its window, a passage size it did not cut, the counts of
the reference record); :func:`problems` reads an executed notebook's Markdown
for them. :func:`check_run` applies both to an executed notebook, with its
parameters and counts from the record the run wrote; ``python -m
hierret.publish.runprose EXECUTED.ipynb RESULTS_DIR`` does so from the command
line (its exit status is 1 when a sentence fails).

Examples
--------
>>> facts = reference_facts({"encoder": "all-MiniLM-L6-v2", "corpus": "python-reference"},
...                         {"encoder": "wordllama", "corpus": "python-reference"})
>>> sorted(facts)[:3]
['256 tokens', '256-token', 'MiniLM']
>>> nb = {"cells": [{"cell_type": "markdown", "source": "Cut at its 256-token window. "
...                  "On the reference parameters, MiniLM's 256-token window."}]}
>>> [p[:72] for p in problems(nb, facts)]
["cell 0: '256-token' is the reference run's (encoder: all-MiniLM-L6-v2 → "]
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

__all__ = [
    "CORPUS_NAMES",
    "ENCODER_WINDOWS",
    "EXERCISES",
    "STUDY_MARK",
    "check_run",
    "main",
    "problems",
    "reference_facts",
]

#: Words that mark a sentence as the study's (the reference run's), not this run's.
STUDY_MARK = re.compile(
    r"\b(on the reference parameters|the reference (?:run|encoder|corpus|corpora|parameters)|"
    r"reference run's|the (?:\w+ )?study(?:'s)?|the record(?:'s)?|the published (?:run|record)|"
    r"in the study|as published)\b",
    re.IGNORECASE,
)
#: A cell of exercises (its heading): each describes the run its own command makes
#: ("the Python reference's questions alone" with ``-y "corpora: [python-reference]"``),
#: not the run the notebook shows, so its sentences are not read.
EXERCISES = re.compile(r"\s*#+\s*Exercises\b")
#: How prose names each published corpus.
CORPUS_NAMES: dict[str, tuple[str, ...]] = {
    "python-reference": ("Python reference", "Python Language Reference", "python-reference"),
    "scifact": ("SciFact",),
    "scifact-sections": ("SciFact sections", "SciFact"),
    "qasper": ("Qasper",),
}
#: How prose names each published encoder, and its window in tokens (``None``: none).
ENCODER_WINDOWS: dict[str, tuple[tuple[str, ...], int | None]] = {
    "all-MiniLM-L6-v2": (("all-MiniLM-L6-v2", "MiniLM"), 256),
    "e5-small": (("e5-small",), 512),
    "wordllama": (("WordLlama", "wordllama"), None),
}
#: Parameters naming one corpus or several.
_CORPUS_PARAMETERS = ("corpus", "corpora", "beir", "weight_sweep_corpus")
#: Parameters giving passage sizes in characters.
_SIZE_PARAMETERS = ("max_chars", "sizes", "chunk_chars")
_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
#: Record values that count things, and the words prose counts them in.
_COUNTS = {"n_questions": "questions", "n_documents": "documents", "n_passages": "passages",
           "n_sections": "sections"}  # fmt: skip


def _names(value: object) -> set[str]:
    """The corpus names a corpus parameter gives (a path by its last part)."""
    if value is None:
        return set()
    items = value if isinstance(value, list | tuple) else [value]
    return {PurePath(str(v)).name or str(v) for v in items}


def _said(value: object) -> str:
    """A corpus parameter as a reader gave it, paths by their last part."""
    return ", ".join(sorted(_names(value))) or "None"


def _sizes(value: object) -> set[int]:
    items = value if isinstance(value, list | tuple) else [value]
    return {int(v) for v in items if isinstance(v, int)}


def reference_facts(
    reference: Mapping[str, Any],
    run: Mapping[str, Any],
    record: Mapping[str, Any] | None = None,
    run_values: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The phrases true of the reference run and not of this one, each with why.

    Parameters
    ----------
    reference, run : mapping
        The notebook's declared parameters and this run's (as run).
    record, run_values : mapping, optional
        The reference record's values and this run's: a count the record holds
        (``n_questions``…) that differs makes ``"157 questions"`` a reference fact.

    Returns
    -------
    dict
        Phrase (matched whole, case-sensitively for names) to the parameter change
        that makes it the reference run's alone.
    """
    facts: dict[str, str] = {}
    mine: set[str] = set()
    for name in _CORPUS_PARAMETERS:
        if name in reference:
            mine |= _names(run.get(name, reference[name]))
    for name in _CORPUS_PARAMETERS:
        if name not in reference:
            continue
        for corpus in sorted(_names(reference[name]) - mine):
            why = f"{name}: {_said(reference[name])} → {_said(run.get(name, reference[name]))}"
            said = {alias for m in mine for alias in CORPUS_NAMES.get(m, ())}
            facts |= {alias: why for alias in CORPUS_NAMES.get(corpus, ()) if alias not in said}
    for name in ("corpora",):  # how many corpora, as prose counts them in words
        count = len(_names(reference.get(name)))
        ran = len(_names(run.get(name, reference.get(name))))
        if name in reference and count != ran and count in _WORDS:
            facts[f"{_WORDS[count]} corpora"] = f"{name}: {count} corpora → {ran}"
    theirs, ours = reference.get("encoder"), run.get("encoder", reference.get("encoder"))
    if theirs != ours and theirs in ENCODER_WINDOWS:
        why = f"encoder: {theirs} → {ours}"
        aliases, window = ENCODER_WINDOWS[str(theirs)]
        facts |= dict.fromkeys(aliases, why)
        if window is not None and window != ENCODER_WINDOWS.get(str(ours), ((), None))[1]:
            facts |= {f"{window}-token": why, f"{window} tokens": why}
    sizes = {n: _sizes(reference[n]) for n in _SIZE_PARAMETERS if n in reference}
    cut = set().union(*(_sizes(run.get(n, reference[n])) for n in sizes)) if sizes else set()
    for param, values in sizes.items():
        for size in sorted(values - cut):
            why = f"{param}: {reference[param]} → {run.get(param, reference[param])}"
            facts |= {f"{size:,} characters": why, f"{size:,}-character": why}
    for key, noun in _COUNTS.items():
        value, here = (record or {}).get(key), (run_values or {}).get(key)
        if isinstance(value, int) and here is not None and value != here:
            facts[f"{value:,} {noun}"] = f"{key}: {value} in the reference record, {here} here"
    return facts


def _sentences(cell: str) -> list[tuple[str, bool]]:
    """The cell's sentences outside headings and code blocks, each with whether a mark
    that introduces the study's text (a marked sentence ending in a colon) precedes it."""
    text = re.sub(r"```.*?```", "", cell, flags=re.DOTALL)
    out, introduced = [], False
    for para in re.split(r"\n\s*\n|\n(?=\s*(?:[*-]|\d+\.) )", text):
        para = " ".join(para.split())
        if not para or para.startswith("#"):
            continue
        for s in re.split(r"(?<=[.!?;])\s+(?=[*(\"A-Z0-9`])", para):
            out.append((s, introduced))
            if STUDY_MARK.search(s) and s.rstrip().endswith(":"):
                introduced = True
    return out


def _found(phrase: str, sentence: str) -> bool:
    """Whether ``sentence`` says ``phrase`` as a whole (a name in its own case)."""
    flags = 0 if any(c.isupper() for c in phrase) else re.IGNORECASE
    return re.search(rf"(?<![\w.-]){re.escape(phrase)}(?![\w-])", sentence, flags) is not None


def problems(nb: Mapping[str, Any], facts: Mapping[str, str]) -> list[str]:
    """Each unmarked sentence of ``nb``'s Markdown that states a reference fact.

    Parameters
    ----------
    nb : mapping
        A notebook (nbformat's JSON).
    facts : mapping
        :func:`reference_facts`.

    Returns
    -------
    list of str
        ``cell N: 'phrase' is the reference run's (why), but the sentence neither
        comes from this run nor marks it as the study's: '…'``; empty when the
        prose follows the run.
    """
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if EXERCISES.match(source):  # each exercise describes the run its command makes
            continue
        for sentence, introduced in _sentences(source):
            if introduced or STUDY_MARK.search(sentence):
                continue
            for phrase in _phrases(facts, sentence):
                found.append(
                    f"cell {i}: {phrase!r} is the reference run's ({facts[phrase]}), but the "
                    "sentence neither comes from this run nor marks it as the study's "
                    f"('on the reference parameters'…): {sentence[:160]!r}"
                )
    return found


def _phrases(facts: Iterable[str], sentence: str) -> list[str]:
    """The facts ``sentence`` states, the longer first and each once (a corpus's longer
    name hides its shorter alias)."""
    said: list[str] = []
    for phrase in sorted(facts, key=len, reverse=True):
        if _found(phrase, sentence) and not any(phrase in s for s in said):
            said.append(phrase)
    return said


def _record_name(stem: str) -> str:
    """``02_dr001_chunking`` → ``dr001`` (the record a notebook publishes)."""
    found = re.search(r"(?:^|_)(dr\d{3}|structure)(?:_|$)", stem)
    if found is None:
        raise ValueError(
            f"{stem!r} names no record (drNNN): give an executed decision notebook, "
            "e.g. 02_dr001_chunking.ipynb"
        )
    return found[1]


def check_run(
    executed: str | os.PathLike[str],
    results: str | os.PathLike[str],
    *,
    published: str | os.PathLike[str] | None = None,
) -> list[str]:
    """:func:`problems` of an executed notebook against what its run changed.

    Parameters
    ----------
    executed : path-like
        The executed notebook (papermill's output, or nbval's).
    results : path-like
        The folder its run wrote its record to (``results_dir``): the
        parameters as run and the counts.
    published : path-like, optional
        The published records (default: ``data/results`` of the checkout).

    Returns
    -------
    list of str
        Empty when every sentence follows the run.

    Raises
    ------
    FileNotFoundError
        No record of the run, or no published record, where they are looked for.
    """
    path = Path(executed)
    name = _record_name(path.stem)
    if published is None:
        from hierret.publish.against import published_files

        found = published_files()
        if found is None:
            raise FileNotFoundError("no checkout's data/results: give published=")
        published = found[0]
    files = {"run": Path(results) / f"{name}.json", "published": Path(published) / f"{name}.json"}
    missing = [f"{k} record {p}" for k, p in files.items() if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"no {' and no '.join(missing)}: run the notebook with results_dir set "
            "(docs/execute.py --results DIR) and check it against that folder"
        )
    run, ref = (json.loads(p.read_text(encoding="utf-8")) for p in files.values())
    facts = reference_facts(
        ref["identity"].get("parameters", {}),
        run["identity"].get("parameters", {}),
        ref["values"],
        run["values"],
    )
    return problems(json.loads(path.read_text(encoding="utf-8")), facts)


def main(argv: list[str] | None = None) -> int:
    """``python -m hierret.publish.runprose EXECUTED.ipynb RESULTS_DIR``: print the
    sentences that state the reference run's facts as this run's; 1 when any does."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m hierret.publish.runprose EXECUTED.ipynb RESULTS_DIR",
              file=sys.stderr)  # fmt: skip
        return 2
    found = check_run(args[0], args[1])
    print("\n".join(found) or f"{args[0]}: every sentence follows the run")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
