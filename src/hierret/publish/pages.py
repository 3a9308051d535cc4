"""A published page checked (or rewritten) against the records, and a run adopted.

Every number a page quotes carries a marker (``0.900<!--@dr001.hit1_chunks-->``);
:func:`check_page` runs every check a page gets, in one place, and
:func:`update_page` rewrites what those checks read, in the same order:

* the marked numbers (:func:`hierret.publish.report.check_markdown`): findings
  against the run's records, machine facts against the reference's;
* the floors of p values (:mod:`hierret.publish.floors`): a floor is a bound;
* on DECISIONS.md, each record's claims table (:mod:`hierret.publish.claims`)
  and the results table atop it (:mod:`hierret.publish.summary`); on any other
  page, every comparative sentence against the claims it cites.

:func:`adopt` copies a run's records (and their evidence) into the reference
folder, as ``docs/check_decisions.py --update`` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import hierret.publish.claims as claims
import hierret.publish.floors as floors
import hierret.publish.summary as summary
from hierret._files import atomic_write
from hierret.publish.report import check_markdown, update_markdown

__all__ = ["adopt", "check_page", "update_page"]

Records = Mapping[str, Mapping[str, Any]]


def check_page(
    text: str, results: Records, reference: Records, *, decisions: str | None = None
) -> list[str]:
    """Every difference between a page's published numbers and the records.

    Parameters
    ----------
    text : str
        The page (Markdown).
    results : mapping
        The run's records by name (:func:`hierret.publish.report.load_results`).
    reference : mapping
        The committed reference records: machine facts are checked against them.
    decisions : str, optional
        DECISIONS.md's text when ``text`` is another page: its sentences may say
        no more than the claims they cite. ``None`` when ``text`` is DECISIONS.md
        itself, whose claims tables and results table are checked.

    Returns
    -------
    list of str
        One line per difference; empty when the page says what the records say.

    Examples
    --------
    >>> rec = {"dr001": {"values": {"hit1": 0.9}, "facts": []}}
    >>> check_page("Hit@1 is 0.900<!--@dr001.hit1-->.", rec, rec, decisions="")
    []
    """
    found = check_markdown(text, results, reference)
    found += floors.problems(text, results)  # a floor p is a bound: "≤", never "="
    if decisions is None:
        found += claims.check(text, results) + summary.check(text, results)
    else:
        found += claims.check_prose(text, claims.claims(decisions))
    return found


def update_page(text: str, results: Records, *, decisions: bool) -> str:
    """``text`` with its marked numbers (and, on DECISIONS.md, its claims and results
    tables) rewritten from ``results``.

    Parameters
    ----------
    text : str
        The page (Markdown).
    results : mapping
        The records by name.
    decisions : bool
        Whether ``text`` is DECISIONS.md: its claims tables, then the results table
        their rows feed, are rewritten too.

    Returns
    -------
    str
        The page as the records say it.

    Examples
    --------
    >>> rec = {"dr001": {"values": {"hit1": 0.9}, "facts": []}}
    >>> update_page("Hit@1 is 0.800<!--@dr001.hit1-->.", rec, decisions=False)
    'Hit@1 is 0.900<!--@dr001.hit1-->.'
    """
    text = update_markdown(text, results)
    if decisions:
        text = summary.update(claims.update(text, results), results)
    return text


def adopt(run: Path, reference: Path, keep_facts: bool = False) -> None:
    """Copy the run's records into the reference folder (the new reference).

    With ``keep_facts`` only the findings are adopted: each record keeps the
    reference machine's facts and machine description, and records made of
    machine facts alone (timing, bench) are left as they are. The run's evidence
    files replace the reference's; a record's stale run files are removed.

    Parameters
    ----------
    run, reference : Path
        The run's results folder and the reference one (``data/results``).
    keep_facts : bool, default False
        Adopt the findings only.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     run, ref = Path(tmp, "run"), Path(tmp, "ref")
    ...     run.mkdir()
    ...     _ = (run / "dr001.json").write_text('{"values": {"a": 1}}')
    ...     adopt(run, ref)
    ...     json.loads((ref / "dr001.json").read_text())
    adopted dr001.json as the reference record
    {'values': {'a': 1}}
    """
    if run.resolve() == reference.resolve():
        return
    reference.mkdir(parents=True, exist_ok=True)
    for file in sorted(run.glob("*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        target = reference / file.name
        if keep_facts and target.exists():
            kept = json.loads(target.read_text(encoding="utf-8"))
            facts = kept.get("facts", [])
            if set(record["values"]) <= set(facts) | set(record.get("facts", [])):
                continue  # nothing but machine facts: the reference machine's stay
            record["values"] |= {k: kept["values"][k] for k in facts if k in record["values"]}
            new_facts = set(record.get("facts", [])) - set(facts)  # measured first by this run
            # a fact the run no longer measures (a corpus it no longer reads) is not listed
            record["facts"] = sorted((set(facts) | new_facts) & set(record["values"]))
            record["machine"] = kept["machine"]
            record["identity"]["machine_facts"] = (
                "the reference record's (the machine named here); the findings come from "
                "a run on another machine, which must not change them"
            )
        atomic_write(target, json.dumps(record, indent=1) + "\n")
        print(f"adopted {file.name} as the reference record")
    evidence = run / "evidence"  # each published test's questions, and its arms' runs
    for file in sorted(p for p in evidence.rglob("*") if p.is_file()):
        target = reference / "evidence" / file.relative_to(evidence)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, file.read_bytes())
    for runs in sorted(p for p in (evidence / "runs").glob("*") if p.is_dir()):
        for old in (reference / "evidence" / "runs" / runs.name).iterdir():
            if not (runs / old.name).exists():  # a record's runs are the run's, none stale
                old.unlink()
