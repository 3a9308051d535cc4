"""This run against the published record: settings, quoted numbers and claims side by side.

Every notebook ends with this comparison. A reader who reruns a decision
notebook with other parameters, another sample or their own documents sees
at once

* which **settings** differ from the run the record was published from (every
  field of the run's identity: corpus, sample, chunking, encoder, parameters),
  each once: the summary names the parameters the reader changed and counts
  the identity fields that differ with them (a corpus's fingerprint, its counts);
* the **numbers** ``DECISIONS.md`` quotes from the record, the published value
  beside this run's (machine facts, such as times, are measured anew on every
  machine and are shown, never counted as a disagreement);
* each **claim** of the record's *Claims and tests* table tested on this
  record's numbers, with the verdict the record states and the verdict this
  run's numbers give (:func:`hierret.publish.claims.verdict`); a row that
  cites another record's test is that record's to judge. A claim is stated over
  roles (:mod:`hierret.publish.roles`): a run on another corpus or passage size
  tests it on what it ran in that place, and its row says so ("C3 on notes");
  a claim whose role the run left empty reads "not testable here" and why. Two verdicts of one
  class agree: a *not established* whose detectable effect moved is the same
  verdict, and the summary says the effect moved (:func:`moved_detectable`).

On the reference parameters every setting, number and verdict agrees; the
site's reference build says so at the end of each notebook.

The published record is ``data/results/{name}.json`` and the records'
prose ``DECISIONS.md`` of the checkout the package is imported from (or the
paths given). Outside a checkout there is nothing to compare with, and the
section says so instead of failing.

Examples
--------
>>> import json, tempfile
>>> text = '''## DR-009 · A toy
... Dense beats BM25 [C1]: 0.10<!--@dr009.d_diff:.2f--> more.
...
... ### Claims and tests
...
... | id | claim | test | difference | p | adjusted p | verdict |
... |---|---|---|---|---|---|---|
... | C1 | Dense beats BM25 | `dr009.d` > 0 | 0.10<!--@dr009.d_diff:.2f--> \
(0.02<!--@dr009.d_diff_low:.2f--> to 0.20<!--@dr009.d_diff_high:.2f-->) \
| 0.01<!--@dr009.d_p:.2f--> | 0.01<!--@dr009.d_p_holm:.2f--> | holds |
... '''
>>> values = {"d_diff": 0.1, "d_diff_low": 0.02, "d_diff_high": 0.2, "d_p_holm": 0.01,
...           "d_p": 0.005, "d_family_size": 2, "d_mde": 0.08, "d_margin_low": 0.04,
...           "d_margin_high": 0.18}
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = (Path(tmp) / "DECISIONS.md").write_text(text)
...     _ = (Path(tmp) / "dr009.json").write_text(json.dumps(
...         {"name": "dr009", "identity": {"corpus": "toy", "max_chars": 900},
...          "values": values, "facts": []}))
...     same = against_published("dr009", values, {"corpus": "toy", "max_chars": 900},
...                              results=tmp, decisions=Path(tmp) / "DECISIONS.md")
...     other = against_published("dr009", values | {"d_diff": 0.01, "d_p_holm": 0.4},
...                               {"corpus": "toy", "max_chars": 600},
...                               results=tmp, decisions=Path(tmp) / "DECISIONS.md")
>>> same.agree, other.agree
(True, False)
>>> print(same.summary)
All agree: the settings are the published run's, all 5 quoted numbers equal the \
published ones, and all 1 claim verdicts are the published record's.
>>> print(other.summary)
This run differs from the published one in 1 field of the run's identity (max_chars: \
900 → 600). 2 of 5 quoted numbers differ from the published ones. 0 of the 1 claim \
verdicts are the published record's; not C1 (holds → not established (could detect ≥ 0.08)).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

import hierret.publish.claims as claims_
import hierret.publish.roles as roles_
from hierret.publish.report import as_json, format_value, quoted
from hierret.publish.tables import fields, styled

__all__ = [
    "Against",
    "against_published",
    "moved_detectable",
    "published_files",
    "shown_path",
    "verdict_word",
]


def published_files(start: str | os.PathLike[str] | None = None) -> tuple[Path, Path] | None:
    """``(data/results, DECISIONS.md)`` of the checkout above ``start``.

    By default the checkout above this package (an editable install), else the
    one above the working folder (a notebook opened from the repository with
    the package installed elsewhere); ``None`` outside any checkout.
    """
    starts = [Path(start)] if start is not None else [Path(__file__), Path.cwd()]
    for here in (p.resolve() for p in starts):
        for parent in [here, *here.parents]:
            if (parent / "DECISIONS.md").is_file() and (parent / "data" / "results").is_dir():
                return parent / "data" / "results", parent / "DECISIONS.md"
    return None


def _flat(identity: Mapping[str, Any]) -> dict[str, Any]:
    """Identity fields by dotted name, as the record stores them (JSON's view of the values).

    A local path reads as a reader can follow it: relative to the working folder
    when it lies below it, else by its last part (a record holds no local paths).
    """
    plain = _relative(json.loads(json.dumps(dict(identity), default=as_json)))
    return {str(k): v for k, v in fields(plain)["value"].items()}


def _relative(value: Any) -> Any:
    """Absolute paths in a JSON value as relative ones (:func:`shown_path`), the rest as is."""
    if isinstance(value, dict):
        return {k: _relative(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v) for v in value]
    return shown_path(value) if isinstance(value, str) else value


def shown_path(value: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """A local path as a reader can follow it; any other text unchanged.

    An absolute path, or one that climbs out of ``cwd`` (``../``: the site build
    gives the notebooks paths relative to their folder), reads relative to
    ``cwd`` (default: the working folder) when it lies below it, else as its
    last part (the name a corpus given as a path goes by).

    Examples
    --------
    >>> shown_path("/home/me/course/notes", cwd="/home/me/course")
    'notes'
    >>> shown_path("/data/elsewhere/notes/", cwd="/home/me/course")
    'notes'
    >>> shown_path("../../data/examples/handbook", cwd="/home/me/course/build/notebooks")
    'handbook'
    >>> shown_path("python-reference"), shown_path("a / b")
    ('python-reference', 'a / b')
    """
    here = Path(cwd if cwd is not None else Path.cwd())
    if "\n" in value or len(value) > 4096:
        return value
    if value.startswith("../"):  # a path relative to a notebook's folder (a site build's)
        value = os.path.normpath(here / value)
    if not os.path.isabs(value):
        return value
    path = Path(value)
    try:
        return path.relative_to(here).as_posix() or "."
    except ValueError:
        return path.name or value


#: Identity fields about the published record itself, not the run (a record adopted
#: with the reference machine's facts says so: ``docs/check_decisions.py``).
ABOUT_THE_RECORD = frozenset({"machine_facts"})


def _shown(fields_: Mapping[str, Any], key: str) -> str:
    """A setting as a reader compares it: ``None`` as written, a missing one said so."""
    if key not in fields_:
        return "(not recorded)"
    value = fields_[key]
    return "None" if value is None or (isinstance(value, float) and value != value) else str(value)


#: The row that gathers the fields only one of the two runs records (another
#: corpus's own identity fields: its gold file, its fingerprints).
ONE_SIDED = "fields only one run records"

#: What a parameter the published run did not have yet reads as in its column.
NOT_A_PARAMETER = "(not a parameter then)"
#: What an entry of a mapping parameter reads as where the run's mapping lacks it
#: (``sampled`` = ``{}``: no encoder sampled).
NOT_SET = "(not set)"


def _settings(run: Mapping[str, Any], published: Mapping[str, Any]) -> pd.DataFrame:
    """The settings that differ, each once (module notes).

    A field both runs record and that differs is one row; a parameter only
    one run has shows the other's as not a parameter then; a group of fields
    only one run has (another corpus's identity) is one row naming the group's
    members on each side (``corpora``: the corpora each run read), and the
    fields of a flat identity only one run records are one row of their names.
    A field that says what a parameter says (``max_chars`` beside
    ``parameters.max_chars``, the encoder's description beside its name) is
    part of the parameter's row, in brackets where it says more (the model a
    short name resolved to).
    """
    a, b = (
        {k: v for k, v in _flat(x).items() if k not in ABOUT_THE_RECORD} for x in (run, published)
    )
    keys = [*b, *(k for k in a if k not in b)]
    keys.sort(key=lambda k: not k.startswith("parameters."))  # what was asked for first
    rows: dict[str, dict[str, str]] = {}
    only: dict[str, list[str]] = {"published": [], "this run": []}
    for k in keys:
        if _shown(a, k) == _shown(b, k):
            continue
        if k in a and k in b:
            rows[k] = {"published": _shown(b, k), "this run": _shown(a, k)}
        elif k.startswith("parameters."):
            rows[k] = {
                "published": _shown(b, k) if k in b else _missing(published, k),
                "this run": _shown(a, k) if k in a else _missing(run, k),
            }
        else:
            absent, side = (a, "published") if k not in a else (b, "this run")
            top = _absent_prefix(k, absent)
            group = top.rpartition(".")[0]
            if group:  # a corpus one run read and the other not: one row for the corpora
                rows.setdefault(group, {"published": _members(b, group),
                                        "this run": _members(a, group)})  # fmt: skip
            elif top not in only[side]:
                only[side].append(top)
    if only["published"] or only["this run"]:
        rows[ONE_SIDED] = {s: ", ".join(names) or "–" for s, names in only.items()}
    for k in [k for k in rows if not k.startswith("parameters.") and "." not in k]:
        said = rows.get(f"parameters.{k}")
        if said:  # one row: the parameter, with what it resolved to where that says more
            field = rows.pop(k)
            for s in ("published", "this run"):
                if not _restates(field[s], said[s]):
                    said[s] = f"{said[s]} ({field[s].split(' (')[0]})"
    return pd.DataFrame.from_dict(rows, orient="index", columns=["published", "this run"])


def _missing(identity: Mapping[str, Any], key: str) -> str:
    """What a run that lacks parameter field ``key`` had: the parameter, with no such
    entry (``sampled.e5-small`` where ``sampled`` is ``{}``), or no such parameter.

    Examples
    --------
    >>> _missing({"parameters": {"sampled": {}}}, "parameters.sampled.e5-small")
    '(not set)'
    >>> _missing({"parameters": {}}, "parameters.sampled.e5-small")
    '(not a parameter then)'
    """
    name = key.split(".")[1]
    return NOT_SET if name in _parameters(identity) else NOT_A_PARAMETER


def _members(fields_: Mapping[str, Any], group: str) -> str:
    """The names under a group of fields (``corpora`` → the corpora), in order."""
    names = dict.fromkeys(
        f[len(group) + 1 :].split(".")[0] for f in fields_ if f.startswith(group + ".")
    )
    return ", ".join(names) or "–"


def _restates(field: str, parameter: str) -> bool:
    """Whether an identity field says what a parameter says (its name, its path, its model).

    Examples
    --------
    >>> _restates("900", "900"), _restates("notes", "course/notes")
    (True, True)
    >>> _restates("sentence-transformers/all-MiniLM-L6-v2 (fp32, 384 dims)", "all-MiniLM-L6-v2")
    True
    >>> _restates("python-reference", "qasper")
    False

    A folder's corpus is named ``folder-<its name>`` (:mod:`hierret.datasets.folder`):

    >>> _restates("folder-notes", "course/notes"), _restates("folder-notes", "notes2")
    (True, False)
    """
    head = field.split(" (")[0]
    return (
        field == parameter
        or Path(field).name == Path(parameter).name
        or head == parameter
        or head.endswith("/" + parameter)
        or (head.startswith("folder-") and head.removeprefix("folder-") == Path(parameter).name)
    )


def _absent_prefix(key: str, fields_: Mapping[str, Any]) -> str:
    """The shortest dotted prefix of ``key`` that no field of ``fields_`` has."""
    parts = key.split(".")
    for n in range(1, len(parts) + 1):
        prefix = ".".join(parts[:n])
        if not any(f == prefix or f.startswith(prefix + ".") for f in fields_):
            return prefix
    return key


def _numbers(
    name: str, text: str, run: Mapping[str, Any], record: Mapping[str, Any]
) -> pd.DataFrame:
    facts = set(record.get("facts", ()))
    rows = {}
    for marked, fmt in quoted(text).items():
        record_name, _, key = marked.partition(".")
        if record_name != name:
            continue
        published, mine = record["values"].get(key), run.get(key)
        show = [None if v is None else format_value(v, fmt) for v in (published, mine)]
        same = "machine fact" if key in facts else ("yes" if show[0] == show[1] else "no")
        rows[key] = {"published": show[0], "this run": show[1] or "(not in this run)", "same": same}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["published", "this run", "same"])


#: At most this many differing numbers are shown (another corpus changes nearly all).
SHOWN = 20

#: A claim whose comparison this run did not make (another record's margin).
NOT_TESTED = "(not tested in this run)"

#: How a claim the run cannot test reads in its verdict column, before the reason.
NOT_TESTABLE = "not testable here: "


def _verdict(c: claims_.Claim, values: Mapping[str, Any], field: str) -> str:
    """The verdict this run's ``values`` give claim ``c`` on its test ``field``."""
    record = c.key.partition(".")[0]
    if c.margin and c.margin.partition(".")[0] != record:
        return NOT_TESTED  # another record's margin: that record's to judge
    missing = [f"{field}_{n}" for n in claims_.NEEDED if values.get(f"{field}_{n}") is None]
    if missing:
        return f"{NOT_TESTABLE}the run made no test `{field}` (its arms or target did not run)"
    return claims_.judge(replace(c, key=f"{record}.{field}"), {record: {"values": values}})


def verdict_word(verdict: str) -> str:
    """A verdict's class, without what it adds in brackets (a detectable effect, a margin).

    Two runs agree on a claim when their verdicts are of one class: a moved
    "could detect ≥" or a fragility note is not a disagreement.

    Examples
    --------
    >>> verdict_word("not established (could detect ≥ 0.08)"), verdict_word("holds")
    ('not established', 'holds')
    >>> verdict_word("holds (fragile: rank test 0.066)"), verdict_word("Non-inferior (margin 0.02)")
    ('holds', 'non-inferior')
    """
    return verdict.split("(")[0].strip().lower()


_DETECT = re.compile(r"could detect ≥ ([0-9.]+)")


def moved_detectable(mine: str, published: str) -> str | None:
    """``"≥ 0.08 → ≥ 0.77"`` when two verdicts of one class differ in what their test
    could detect; ``None`` otherwise.

    A verdict that stays *not established* is the same verdict; the effect its
    test could detect is another fact about the run (its questions, their spread)
    and is reported as such, never as a disagreement.

    Examples
    --------
    >>> moved_detectable("not established (could detect ≥ 0.77)",
    ...                  "not established (could detect ≥ 0.08)")
    '≥ 0.08 → ≥ 0.77'
    >>> moved_detectable("not established (could detect ≥ 0.08)",
    ...                  "not established (could detect ≥ 0.08)") is None
    True
    >>> moved_detectable("holds", "not established (could detect ≥ 0.08)") is None
    True
    """
    if verdict_word(mine) != verdict_word(published):
        return None
    a, b = _DETECT.search(mine), _DETECT.search(published)
    if a is None or b is None or a[1] == b[1]:
        return None
    return f"≥ {b[1]} → ≥ {a[1]}"


def _agree(mine: str, published: str) -> str:
    """``yes`` when the two verdicts are of one class, else ``no``."""
    return "yes" if verdict_word(mine) == verdict_word(published) else "no"


def _record_id(name: str) -> str:
    """``dr001`` → ``DR-001``: the heading of the record a result record belongs to."""
    return f"DR-{name[2:]}" if name.startswith("dr") else name


def _difference(values: Mapping[str, Any], key: str) -> str:
    """``+0.140 (+0.05 to +0.23)``, or a dash when the run has no such test."""
    got = [values.get(f"{key}_{s}") for s in ("diff", "diff_low", "diff_high")]
    if any(v is None for v in got):
        return "–"
    return f"{got[0]:+.3f} ({got[1]:+.3f} to {got[2]:+.3f})"


def _claims(
    name: str,
    text: str,
    values: Mapping[str, Any],
    published: Mapping[str, Any],
    roles: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {}),
) -> pd.DataFrame:
    """Each claim of record ``name`` on this run: tested on what the run ran in the
    claim's roles (:func:`hierret.publish.roles.cast`; ``roles`` are the study's
    parameters and this run's), a row per corpus it is tested on (``C3 on notes``)."""
    rows = {}
    for c in claims_.claims(text):
        if c.key.partition(".")[0] != name or c.record != _record_id(name):
            continue
        field = c.key.partition(".")[2]
        for t in roles_.cast(name, field, *roles):
            mine = _verdict(c, values, t.key) if t.key else NOT_TESTABLE + t.why
            tested = not mine.startswith(NOT_TESTABLE) and mine != NOT_TESTED
            rows[f"{c.id} {t.on}" if t.on else c.id] = {
                "claim": c.text,
                "difference, published": _difference(published, field),
                "difference, this run": _difference(values, t.key) if t.key else "–",
                "verdict, published": c.written,
                "verdict, this run": mine,
                "agree": _agree(mine, c.written) if tested else "not tested",
            }
    columns = ["claim", "difference, published", "difference, this run"]
    columns += ["verdict, published", "verdict, this run", "agree"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


def _tested_on(ids: Sequence[object]) -> str:
    """What the claims were tested on where that is not the study's (``on notes``), each
    once, from the claims table's row names (``C3 on notes``)."""
    return ", ".join(dict.fromkeys(str(i).partition(" ")[2] for i in ids if " " in str(i)))


def _untested(rows: pd.DataFrame) -> str:
    """``2 not testable on this run — C9, C10: why`` with the rows grouped by reason
    (a claim another record judges reads as not tested in this run)."""
    why: dict[str, list[str]] = {}
    for i, r in rows[rows["agree"] == "not tested"].iterrows():
        said = str(r["verdict, this run"])
        reason = said.removeprefix(NOT_TESTABLE) if said.startswith(NOT_TESTABLE) else (
            "another record's to judge")  # fmt: skip
        why.setdefault(reason, []).append(str(i))
    if not why:
        return ""
    n = sum(len(ids) for ids in why.values())
    shown = "; ".join(
        f"{', '.join(ids[:8])}{', …' if len(ids) > 8 else ''}: {reason}"
        for reason, ids in why.items()
    )
    return f"{n} not testable on this run — {shown}"


def _parameters(identity: Mapping[str, Any]) -> Mapping[str, Any]:
    """The parameters an identity records (``{}`` when it records none)."""
    found = identity.get("parameters")
    return found if isinstance(found, Mapping) else {}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _listed(rows: pd.DataFrame, n: int = 6, *, values: bool = True) -> str:
    """The first ``n`` rows as ``name: published → this run`` (or their names), then ``…``."""
    said = [
        f"{k}: {r['published']} → {r['this run']}" if values else str(k)
        for k, r in rows.head(n).iterrows()
    ]
    return ", ".join(said) + (", …" if len(rows) > n else "")


def _changed(settings: pd.DataFrame) -> str:
    """What differs in the settings, in one sentence: the parameters a reader changed,
    named, then the count of the other identity fields that differ with them (a corpus's
    fingerprint and counts, a library's version), which a reader did not set.

    Examples
    --------
    >>> rows = pd.DataFrame({"published": ["900", "79"], "this run": ["600", "4"]},
    ...                     index=["parameters.max_chars", "documents"])
    >>> _changed(rows)
    "This run differs from the published one in 1 parameter (max_chars: 900 → 600); 1 \
other field of the run's identity differs with it (documents)."
    >>> _changed(rows.iloc[1:]), _changed(rows.iloc[:0])
    ("This run differs from the published one in 1 field of the run's identity \
(documents: 79 → 4).", "The settings are the published run's.")
    """
    if settings.empty:
        return "The settings are the published run's."
    asked = settings[settings.index.str.startswith("parameters.")]
    asked = asked.rename(index=lambda k: k.removeprefix("parameters."))
    other = settings[~settings.index.str.startswith("parameters.")]
    head = "This run differs from the published one in"
    if asked.empty:
        return f"{head} {_plural(len(other), 'field')} of the run's identity ({_listed(other)})."
    said = f"{head} {_plural(len(asked), 'parameter')} ({_listed(asked)})"
    if other.empty:
        return said + "."
    verb = "differs" if len(other) == 1 else "differ"
    them = "them" if len(asked) > 1 else "it"
    return (
        f"{said}; {_plural(len(other), 'other field')} of the run's identity {verb} with "
        f"{them} ({_listed(other, values=False)})."
    )


@dataclass(frozen=True, repr=False)
class Against:
    """A run beside its published record (:func:`against_published`).

    Attributes
    ----------
    name : str
        The record (``"dr001"``).
    settings : pandas.DataFrame
        The identity fields that differ: ``published`` and ``this run``.
    numbers : pandas.DataFrame
        Each number ``DECISIONS.md`` quotes from the record, as quoted:
        ``published``, ``this run`` and ``same`` (``yes``, ``no`` or
        ``machine fact``).
    claims : pandas.DataFrame
        Each claim: its text, the published verdict, this run's, ``agree``.
    found : bool
        Whether a published record was found to compare with.
    """

    name: str
    settings: pd.DataFrame
    numbers: pd.DataFrame
    claims: pd.DataFrame
    found: bool = True

    @property
    def agree(self) -> bool:
        """Same settings, every quoted finding equal, every verdict the published one."""
        return (
            self.found
            and self.settings.empty
            and not (self.numbers["same"] == "no").any()
            and bool((self.claims["agree"] == "yes").all())
        )

    @property
    def summary(self) -> str:
        """One paragraph: what differs, how many numbers and verdicts agree."""
        if not self.found:
            return (
                f"No published record {self.name!r} was found to compare with: the records "
                "and DECISIONS.md come with a checkout of the hierret repository."
            )
        n_num = int((self.numbers["same"] != "machine fact").sum())
        n_same = int((self.numbers["same"] == "yes").sum())
        n_claims, n_agree = len(self.claims), int((self.claims["agree"] == "yes").sum())
        said = (
            f"all {n_claims} claim verdicts are the published record's"
            if n_claims
            else "the record states no claims"
        )
        if self.agree:
            return (
                f"All agree: the settings are the published run's, all {n_num} quoted "
                f"numbers equal the published ones, and {said}."
            )
        parts = [_changed(self.settings)]
        parts.append(
            f"All {n_num} quoted numbers equal the published ones."
            if n_same == n_num
            else f"{n_num - n_same} of {n_num} quoted numbers "
            f"{'differs' if n_num - n_same == 1 else 'differ'} from the published ones."
        )
        differ = [
            f"{i} ({r['verdict, published']} → {r['verdict, this run']})"
            for i, r in self.claims.iterrows()
            if r["agree"] == "no"
        ]
        if len(differ) > 6:
            differ = [*differ[:6], f"and {len(differ) - 6} more"]
        moved = [
            f"{i} {m}"
            for i, r in self.claims.iterrows()
            if r["agree"] == "yes"
            and (m := moved_detectable(r["verdict, this run"], r["verdict, published"]))
        ]
        if n_claims and (where := _tested_on(list(self.claims.index))):
            parts.append(f"The claims are tested on what this run ran in their place: {where}.")
        untested = _untested(self.claims)
        parts.append(
            f"{n_agree} of the {n_claims} claim verdicts are the published record's"
            + (
                f" ({len(moved)} of them with another detectable effect: "
                f"{', '.join(moved[:4])}{', …' if len(moved) > 4 else ''})"
                if moved
                else ""
            )
            + f"{'; not ' + '; '.join(differ) if differ else ''}"
            + (f"; {untested}." if untested else ".")
            if n_claims
            else "The record states no claims."
        )
        return " ".join(parts)

    def tables(self) -> list[Any]:
        """The three tables as a page shows them (empty ones left out)."""
        out = []
        if not self.settings.empty:
            out.append(styled(self.settings, "Settings that differ from the published run"))
        if not self.claims.empty:
            out.append(styled(self.claims, "Each claim's verdict: published and this run"))
        differ = self.numbers[self.numbers["same"] != "yes"] if len(self.numbers) else self.numbers
        if not differ.empty:  # the equal ones are counted in the summary; all are in .numbers
            some = f"the first {SHOWN} of {len(differ)}" if len(differ) > SHOWN else "the"
            caption = (
                f"{some.capitalize()} quoted numbers that differ, as DECISIONS.md formats them"
            )
            shown = differ.head(SHOWN).rename_axis("number").reset_index()  # long keys wrap
            out.append(styled(shown, caption, index=False))
        return out

    def __repr__(self) -> str:
        return f"Against({self.name!r}): {self.summary}"

    def _repr_html_(self) -> str:
        """The summary, then the tables: what a notebook shows for the comparison."""
        head = "All agree." if self.agree else "This run against the published record."
        said = self.summary.removeprefix("All agree: ")  # the head says it once
        tables = "".join(t.to_html() for t in self.tables())
        return f"<p><strong>{head}</strong> {html.escape(said[:1].upper() + said[1:])}</p>{tables}"


def against_published(
    name: str,
    values: Mapping[str, Any],
    identity: Mapping[str, Any],
    *,
    results: str | os.PathLike[str] | None = None,
    decisions: str | os.PathLike[str] | None = None,
) -> Against:
    """Compare a run's record with the published one (module notes).

    Parameters
    ----------
    name : str
        The record (``"dr001"``), as given to :func:`hierret.publish.record.publish`.
    values, identity : mapping
        This run's values and identity, as given to ``publish``.
    results : path-like, optional
        The folder of published records (default: ``data/results`` of the
        checkout).
    decisions : path-like, optional
        The records' prose (default: the checkout's ``DECISIONS.md``).

    Returns
    -------
    Against
        Its ``summary`` says in one paragraph what agrees; ``tables()`` shows
        the details.
    """
    found = published_files()
    results_dir = Path(results) if results is not None else (found[0] if found else None)
    text_path = Path(decisions) if decisions is not None else (found[1] if found else None)
    record_path = results_dir / f"{name}.json" if results_dir else None
    empty = pd.DataFrame()
    if record_path is None or not record_path.is_file() or text_path is None:
        return Against(name, empty, empty, empty, found=False)
    record = json.loads(record_path.read_text(encoding="utf-8"))
    text = text_path.read_text(encoding="utf-8")
    return Against(
        name,
        _settings(identity, record.get("identity", {})),
        _numbers(name, text, values, record),
        _claims(
            name,
            text,
            values,
            record["values"],
            (_parameters(record.get("identity", {})), _parameters(identity)),
        ),
    )
