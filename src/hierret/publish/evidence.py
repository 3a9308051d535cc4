"""A record's evidence on disk: every published test with its questions, re-analysable.

:func:`hierret.publish.record.publish` writes, beside ``{name}.json``, two files
in ``evidence/`` that anyone can read with pandas, with the options of
:data:`READ_OPTIONS`::

    pd.read_csv(path, sep="\\t", keep_default_na=False, na_values=[""], dtype={"query": str})

(pandas' default turns a question id such as ``NA``, ``None``, ``null`` or
``N/A`` into NaN, and ``007`` into 7; these options keep every id as written,
only an empty field being missing; in R: ``read.delim(path, na.strings = "",
colClasses = c(query = "character"))``):

``{name}-tests.tsv``
    One row per paired test: ``test`` (``T1``, ``T2``, ...), ``key`` (the
    record key whose ``_diff``, ``_diff_low``, ``_diff_high``, ``_p`` and
    ``_p_holm`` it published; empty for a family member the record does not
    quote), ``kind`` (``mean``: percentile bootstrap interval of the mean
    difference and a two-sided paired randomisation test; ``hits``: Newcombe's
    paired interval and McNemar's exact test), ``arm_a``, ``arm_b``, ``n``,
    ``diff``, ``low``, ``high``, ``p`` (unadjusted), ``family`` (``F1``, ...),
    ``family_name``, ``family_size``, ``p_adjusted`` (Holm within the family),
    ``confidence``, ``n_resamples`` (of the p-value), ``interval_resamples``,
    ``seed``, ``mde`` (the smallest difference with 80 % power at
    ``0.05 / family_size``) and ``margin_low``/``margin_high`` (the 90 %
    interval that decides a margin claim).
``{name}-questions.tsv.gz``
    One row per test and question: ``test``, ``query``, ``a``, ``b`` (the
    question's score under each arm; 0/1 for hits).

with the TREC run files and qrels of the tests' arms in
``evidence/runs/{name}/`` (:mod:`hierret.publish.runfiles`), and it adds to the
record, for every published test ``K``: ``K_p``, ``K_p_holm`` (for families of
two or more), ``K_family_size``, ``K_mde``, ``K_margin_low`` and
``K_margin_high``. The tests are those of the ledger the study hands over
(:class:`hierret.evaluation.stats.evidence.Ledger`); a published difference carries the
test that computed it (a :class:`~hierret.evaluation.stats.evidence.Tested` float, which
:func:`hierret.publish.record.table_values` makes from a comparison's table), and
the test is found in that ledger as the same object (:func:`published_tests`): no number
is matched to find it. Nothing here is kept between calls.

Examples
--------
>>> from hierret.evaluation.stats.evidence import Ledger, PairedTest, Tested
>>> book = Ledger()
>>> t = PairedTest("mean", "a", "b", ("q1", "q2", "q3"), (0.9, 0.8, 0.7),
...                (0.5, 0.6, 0.7), 0.2, 0.0, 0.4, 0.25, 0.95, 999, 0)
>>> _ = book.adjust([book.keep(t)])
>>> published = {"x_diff": Tested(0.2, book.tests[0]), "x_diff_low": 0.0, "x_diff_high": 0.4}
>>> tests, questions = frames(published, book)
>>> tests[["test", "key", "arm_a", "n", "p", "family_size"]].to_dict("records")
[{'test': 'T1', 'key': 'x', 'arm_a': 'a', 'n': 3, 'p': 0.25, 'family_size': 1}]
>>> questions.shape
(3, 4)
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

import hierret.publish.runfiles as runfiles
from hierret._files import atomic_write
from hierret.evaluation.stats.evidence import (
    Ledger,
    PairedTest,
    Tested,
    detectable,
    margin_interval,
)

__all__ = [
    "READ_OPTIONS",
    "TEST_COLUMNS",
    "derived",
    "frames",
    "load",
    "paths",
    "published_tests",
    "write",
]

#: How to read both files back as written: ``pd.read_csv(path, **READ_OPTIONS)``. Ids stay
#: text (``NA``, ``None``, ``null``, ``N/A``, ``007`` included); only an empty field is missing.
READ_OPTIONS: dict[str, Any] = {
    "sep": "\t",
    "keep_default_na": False,
    "na_values": [""],
    "dtype": {"query": str, "key": str, "test": str, "arm_a": str, "arm_b": str,
              "family": str, "family_name": str},
}  # fmt: skip

#: The columns of ``{name}-tests.tsv``, in order.
TEST_COLUMNS = [
    "test", "key", "kind", "arm_a", "arm_b", "n", "diff", "low", "high", "p", "family",
    "family_name", "family_size", "p_adjusted", "confidence", "n_resamples",
    "interval_resamples", "seed", "mde", "margin_low", "margin_high",
]  # fmt: skip


def published_tests(values: Mapping[str, Any], ledger: Ledger) -> dict[str, int]:
    """Each published test's key ``K`` and the number in ``ledger`` of the test that computed
    it.

    ``K`` is published when ``K_diff``, ``K_diff_low`` and ``K_diff_high`` are
    all in ``values``; ``K_diff`` is then a :class:`~hierret.evaluation.stats.evidence.Tested`
    float, which carries its test (:func:`hierret.publish.record.table_values`
    makes it from a comparison's table), and the test is found in ``ledger`` as
    that very object: nothing is matched by its numbers.

    Raises
    ------
    ValueError
        A published difference that carries no test (made from a table whose
        tests were lost in reshaping, or typed by hand), or whose test is not in
        ``ledger``.

    Examples
    --------
    >>> from hierret.evaluation.stats.evidence import PairedTest, Tested
    >>> book = Ledger()
    >>> t = PairedTest("mean", "a", "b", ("q1", "q2"), (1.0, 0.5), (0.5, 0.5),
    ...                0.25, 0.0, 0.5, 0.5, 0.95, 99, 0)
    >>> i = book.keep(t)
    >>> published_tests({"x_diff": Tested(0.25, t), "x_diff_low": 0.0, "x_diff_high": 0.5}, book)
    {'x': 0}
    >>> published_tests({"x_diff": 0.25, "x_diff_low": 0.0, "x_diff_high": 0.5}, book)
    Traceback (most recent call last):
    ...
    ValueError: the published difference 'x_diff' carries no test: ...
    """
    where = {id(t): i for i, t in enumerate(ledger.tests)}
    found: dict[str, int] = {}
    for name, value in values.items():
        k = name[: -len("_diff")]
        if not name.endswith("_diff") or f"{k}_diff_low" not in values:
            continue
        if f"{k}_diff_high" not in values:
            continue
        test = getattr(value, "test", None)
        if not isinstance(value, Tested) or test is None:
            raise ValueError(
                f"the published difference {name!r} carries no test: make it with table_values "
                "from a comparison's table, whose 'test' column carries each row's test however "
                "the table is reshaped (keep that column), not by hand"
            )
        if id(test) not in where:
            raise ValueError(
                f"the test of the published difference {name!r} ({test.a} − {test.b}) is not in "
                "the ledger handed to publish: hand the ledger the study kept its tests in"
            )
        found[k] = where[id(test)]
    return found


def derived(
    values: Mapping[str, Any], matched: Mapping[str, int], ledger: Ledger
) -> dict[str, float]:
    """The values each test of ``ledger`` that ``matched`` names adds to the record (see the
    module's description)."""
    out: dict[str, float] = {}
    for k, i in matched.items():
        t, fam = ledger.tests[i], ledger.family_of(i)
        size = len(fam.members) if fam is not None else 1
        low, high = margin_interval(t)
        out |= {f"{k}_p": t.p, f"{k}_family_size": size,
                f"{k}_mde": detectable(t, size),
                f"{k}_margin_low": low, f"{k}_margin_high": high}  # fmt: skip
        if size > 1:
            out[f"{k}_p_holm"] = ledger.adjusted(i)
    return {k: v for k, v in out.items() if k not in values or values[k] == v}


def _common_name(keys: list[str]) -> str:
    """The words the published members' keys share at their start and at their end
    (``pyref_…_ndcg10``): a family's name when the study gave it none."""
    parts = [k.split("_") for k in keys if k]
    if not parts:
        return ""
    if len(parts) == 1:
        return "_".join(parts[0])
    head: list[str] = []
    for words in zip(*parts, strict=False):
        if len(set(words)) > 1:
            break
        head.append(words[0])
    shortest = min(len(w) for w in parts)
    tail: list[str] = []
    for words in zip(*(reversed(w[len(head) :]) for w in parts), strict=False):
        if len(set(words)) > 1 or len(head) + len(tail) >= shortest:
            break
        tail.insert(0, words[0])
    return "_".join(head) + ("_…_" + "_".join(tail) if tail else "")


def _ordered(values: Mapping[str, Any], ledger: Ledger) -> list[tuple[int, str, tuple[str, str]]]:
    """The rows of ``{name}-tests.tsv`` in order: each kept test's number, the key it
    publishes (empty for an unquoted family member) and its family's id and label
    (``(f"T{n}", "one test")`` for a test in no family, ``n`` its row)."""
    matched = published_tests(values, ledger)
    by_test: dict[int, list[str]] = {}
    for k, i in matched.items():
        by_test.setdefault(i, []).append(k)
    fams = sorted({f for i in matched.values() if (f := ledger.family_index(i)) is not None})
    order: list[int] = []
    fam_label: dict[int, tuple[str, str]] = {}
    used: dict[str, int] = {}
    for n, f in enumerate(fams, start=1):
        family = ledger.families()[f]
        named = family.name or _common_name([k for m in family.members for k in by_test.get(m, [])])
        used[named] = used.get(named, 0) + 1
        label = named if used[named] == 1 else f"{named} #{used[named]}"
        for m in family.members:
            fam_label[m] = (f"F{n}", label)
            if m not in order:
                order.append(m)
    order += [i for i in sorted(matched.values()) if i not in order]
    pairs = [(j, k) for j in order for k in by_test.get(j, [""])]
    return [(i, k, fam_label.get(i, (f"T{n}", "one test"))) for n, (i, k) in enumerate(pairs, 1)]


def frames(values: Mapping[str, Any], ledger: Ledger) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tests and questions tables of every test of ``ledger`` that ``values`` publishes,
    and of every other member of their families."""
    rows: list[list[Any]] = []
    qrows: list[tuple[str, str, float, float]] = []
    margins: dict[PairedTest, tuple[float, float]] = {}
    for n, (i, k, (fid, fname)) in enumerate(_ordered(values, ledger), start=1):
        t, fam = ledger.tests[i], ledger.family_of(i)
        size = len(fam.members) if fam is not None else 1
        low, high = margins[t] = margins.get(t) or margin_interval(t)
        rows.append([f"T{n}", k, t.kind, t.a, t.b, t.n, t.diff, t.low,
                     t.high, t.p, fid, fname, size, ledger.adjusted(i), t.confidence,
                     t.n_resamples, t.interval_resamples, t.seed,
                     detectable(t, size), low, high])  # fmt: skip
        qrows += [(f"T{n}", q, a, b) for q, a, b in zip(t.queries, t.x, t.y, strict=True)]
    tests = pd.DataFrame(rows, columns=TEST_COLUMNS)
    return tests, pd.DataFrame(qrows, columns=["test", "query", "a", "b"])


def paths(folder: str | os.PathLike[str], name: str) -> tuple[Path, Path]:
    """``folder/evidence/{name}-tests.tsv`` and ``…/{name}-questions.tsv.gz``."""
    root = Path(folder) / "evidence"
    return root / f"{name}-tests.tsv", root / f"{name}-questions.tsv.gz"


def write(
    folder: str | os.PathLike[str], name: str, values: Mapping[str, Any], ledger: Ledger
) -> int:
    """Write the evidence of every test of ``ledger`` that ``values`` publishes; returns how
    many tests.

    The questions file is gzip with no timestamp, so an unchanged run writes
    the same bytes. The runs and qrels the tests were computed from go to
    ``folder/evidence/runs/{name}/`` (:func:`hierret.publish.runfiles.write`).
    Nothing is written when no test is published.
    """
    tests, questions = frames(values, ledger)
    if tests.empty:
        return 0
    tests_path, questions_path = paths(folder, name)
    tests_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(tests_path, tests.to_csv(sep="\t", index=False).encode())
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as gz:
        gz.write(questions.to_csv(sep="\t", index=False).encode())
    atomic_write(questions_path, buffer.getvalue())
    rows = enumerate(_ordered(values, ledger), start=1)
    named = [(f"T{n}", i, fname if fid.startswith("F") else k or f"T{n}")
             for n, (i, k, (fid, fname)) in rows]  # fmt: skip
    runfiles.write(folder, name, named, ledger)
    return len(tests)


def load(folder: str | os.PathLike[str], name: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The tests and questions tables of record ``name`` in ``folder``, or ``None``."""
    tests_path, questions_path = paths(folder, name)
    if not tests_path.exists():
        return None
    tests = pd.read_csv(tests_path, **READ_OPTIONS)
    tests["key"] = tests["key"].fillna("")
    questions = pd.read_csv(questions_path, **READ_OPTIONS)
    return tests, questions
