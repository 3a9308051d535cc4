"""Numbers in prose come from code: glue, result records and the published-number check.

A notebook *glues* each figure it wants the site to quote (myst-nb reads the
display output, so the kernel never imports Sphinx) and writes a *result
record*: a JSON file with the values and the identity of the run (corpus
fingerprint, parameters, package version). ``DECISIONS.md`` quotes a number by
writing it followed by a marker, ``0.900<!--@dr001.hit1_chunks-->``; the
marker is invisible on GitHub and on the site, and :func:`check_markdown`
fails when a quoted number differs from the record.

A record keeps two kinds of value apart. *Findings* (a mean nDCG, an
interval, a count) must reproduce on any machine. *Machine facts* (texts
embedded per second, a latency, a wall time, run-to-run variation) are true
of the machine that measured them and of nothing else; the record lists their
keys under ``"facts"``. Prose quotes a machine fact as the reference
machine's: its paragraph says "reference machine", and the check compares
it with the committed reference record, never with a new run, so a run on
another machine (or a loaded one) cannot fail on a time.

Examples
--------
>>> results = {"dr001": {"values": {"hit1": 0.9, "n": 40}}}
>>> check_markdown("Hit rate 0.900<!--@dr001.hit1--> of 40<!--@dr001.n-->.", results)
[]
>>> check_markdown("Hit rate 0.850<!--@dr001.hit1-->.", results)
["dr001.hit1: the text says '0.850', the results say '0.900'"]

A machine fact is checked against the reference records, not the run's:

>>> reference = {"dr001": {"values": {"hit1": 0.9, "ms": 54}, "facts": ["ms"]}}
>>> run = {"dr001": {"values": {"hit1": 0.9, "ms": 71}, "facts": ["ms"]}}
>>> check_markdown("On the reference machine, 54<!--@dr001.ms--> ms.", run, reference)
[]
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import hierret
from hierret._env import machine_facts
from hierret._files import atomic_write
from hierret.publish.evidence import load as load_evidence

__all__ = [
    "annotate_run",
    "as_json",
    "check_markdown",
    "compare_records",
    "facts_of",
    "format_value",
    "glue",
    "load_results",
    "quoted",
    "update_markdown",
    "write_results",
]

GLUE_PREFIX = "application/papermill.record/"
_MARKER = re.compile(
    r"(?P<num>[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[-+]\d+)?%?)<!--@(?P<key>[\w.-]+)(?::(?P<fmt>[^>]*?))?-->"
)


def _plain(value: Any) -> Any:
    """Numpy scalars to Python numbers (format specs and JSON need them)."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def as_json(value: Any) -> Any:
    """What JSON cannot hold, as it can: a mapping view as a dict, anything else as text.

    The ``default`` of :func:`json.dumps` for records.

    Examples
    --------
    >>> from types import MappingProxyType
    >>> json.dumps({"p": MappingProxyType({"k": 5}), "path": Path("a")}, default=as_json)
    '{"p": {"k": 5}, "path": "a"}'
    """
    return dict(value) if isinstance(value, Mapping) else str(value)


def glue(name: str, value: Any, display: bool = False) -> None:
    """Glue ``value`` under ``name`` for myst-nb, without importing myst-nb.

    Emits the same display output as ``myst_nb.glue``; paste it in a page with
    ``{glue:text}`notebooks/01_structure::name:.3f```.

    Parameters
    ----------
    name : str
        Key, unique within the notebook.
    value : object
        Anything IPython can display; numpy scalars become Python numbers.
    display : bool, default False
        Also show the value in the notebook.
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    bundle, metadata = format_display_data(_plain(value))  # type: ignore[no-untyped-call]
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display(  # type: ignore[no-untyped-call]
        {prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata
    )


def write_results(
    path: str | os.PathLike[str],
    name: str,
    values: Mapping[str, Any],
    identity: Mapping[str, Any],
    facts: Iterable[str] = (),
) -> Path:
    """Write a result record atomically as JSON.

    Parameters
    ----------
    path : path-like
        Where to write (folders are created).
    name : str
        The record's namespace in markers (``dr001`` in ``<!--@dr001.key-->``).
    values : mapping
        The published numbers, by key.
    identity : mapping
        Corpus fingerprint, parameters, model identities... of the run.
        :func:`machine_facts` are added under ``"machine"``.
    facts : iterable of str, optional
        The keys of ``values`` that are machine facts (times, costs,
        throughputs, run-to-run variation): kept under ``"facts"``, checked
        against the reference record rather than reproduced (module notes).

    Raises
    ------
    ValueError
        A fact key that is not a key of ``values``.
    """
    facts = sorted(set(facts))
    unknown = [k for k in facts if k not in values]
    if unknown:
        raise ValueError(
            f"facts {unknown[:5]} are not keys of the values: list the keys of the "
            "machine facts among the values published"
        )
    record = {
        "name": name,
        "hierret_version": hierret.__version__,
        "machine": machine_facts(),
        "identity": {k: _plain(v) for k, v in identity.items()},
        "values": {k: _plain(v) for k, v in sorted(values.items())},
        "facts": facts,
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(out, json.dumps(record, indent=1, sort_keys=False, default=as_json) + "\n")


def load_results(folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Load every ``*.json`` result record of ``folder``, keyed by record name.

    A record with evidence (``folder/evidence/{name}-tests.tsv``,
    :mod:`hierret.publish.evidence`) has its tests table under ``"evidence"`` and
    its questions table under ``"questions"``.
    """
    records: dict[str, dict[str, Any]] = {}
    for file in sorted(Path(folder).glob("*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        found = load_evidence(folder, record["name"])
        if found is not None:
            record["evidence"], record["questions"] = found
        records[record["name"]] = record
    return records


def quoted(text: str) -> dict[str, str | None]:
    """Every marked key of ``text`` (``record.key``), first quote first, with its format.

    Examples
    --------
    >>> quoted("0.25<!--@dr001.hit1:.2f--> and 40<!--@dr001.n--> and 0.250<!--@dr001.hit1-->")
    {'dr001.hit1': '.2f', 'dr001.n': None}
    """
    out: dict[str, str | None] = {}
    for m in _MARKER.finditer(text):
        out.setdefault(m["key"], m["fmt"])
    return out


def round_up(value: float, digits: int) -> float:
    """``value`` rounded up to ``digits`` decimals (a bound that must not be understated).

    Values within 1e-9 of a grid point stay there (a float's representation error
    does not push 0.07 up to 0.08).

    Examples
    --------
    >>> round_up(0.0712, 2), round_up(0.07, 2), round_up(0.1, 1)
    (0.08, 0.07, 0.1)
    """
    scale = 10**digits
    return float(math.ceil(value * scale - 1e-9) / scale)


def format_value(value: Any, fmt: str | None = None) -> str:
    """Format a published number: ``fmt`` if given, else 3 decimals for floats.

    Examples
    --------
    >>> format_value(0.25), format_value(12), format_value(0.1234, ".1%")
    ('0.250', '12', '12.3%')
    >>> format_value(5183, ",")
    '5,183'

    ``up`` before a fixed-point spec rounds up, as a detectable effect must be
    printed ("could detect ≥ 0.08" for 0.0712: a test that could detect 0.0712
    cannot be said to detect 0.07):

    >>> format_value(0.0712, "up.2f"), format_value(0.07, "up.2f")
    ('0.08', '0.07')
    """
    if fmt and fmt.startswith("up"):
        return format(round_up(float(value), int(fmt[3:-1])), fmt[2:])
    if fmt:
        return format(value, fmt)
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _lookup(results: Mapping[str, Mapping[str, Any]], key: str) -> Any:
    name, _, field = key.partition(".")
    try:
        return results[name]["values"][field]
    except KeyError:
        raise KeyError(
            f"marker <!--@{key}--> names no published value: record {name!r} "
            f"{'exists' if name in results else 'is missing'}; rerun `nox -s reproduce`"
        ) from None


def compare_records(
    run: Mapping[str, Mapping[str, Any]], reference: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, list[str]]]:
    """Every value of every record compared key by key: what differs, findings and facts apart.

    Returns, per record present in both, ``{"findings": [...], "facts": [...],
    "missing": [...], "new": [...]}``: the keys whose values differ (exactly,
    published or not), the keys only the reference has, and those only the
    run has. Findings should be empty on any machine; facts are expected to
    differ.

    Examples
    --------
    >>> ref = {"dr": {"values": {"a": 0.5, "ms": 54}, "facts": ["ms"]}}
    >>> compare_records({"dr": {"values": {"a": 0.5, "ms": 71}, "facts": ["ms"]}}, ref)
    {'dr': {'findings': [], 'facts': ['ms'], 'missing': [], 'new': []}}
    """
    out = {}
    for name in sorted(set(run) & set(reference)):
        a, b = run[name]["values"], reference[name]["values"]
        facts = set(run[name].get("facts", ())) | set(reference[name].get("facts", ()))
        differ = sorted(k for k in set(a) & set(b) if a[k] != b[k])
        out[name] = {
            "findings": [k for k in differ if k not in facts],
            "facts": [k for k in differ if k in facts],
            "missing": sorted(set(b) - set(a)),
            "new": sorted(set(a) - set(b)),
        }
    return out


def facts_of(results: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The marker keys (``record.key``) of every machine fact in ``results``.

    Examples
    --------
    >>> sorted(facts_of({"t": {"values": {"s": 1.0, "n": 3}, "facts": ["s"]}}))
    ['t.s']
    """
    return {f"{name}.{k}" for name, rec in results.items() for k in rec.get("facts", ())}


#: What a paragraph quoting a machine fact must say (module notes).
REFERENCE_LABEL = "reference machine"


def _paragraph(text: str, at: int) -> str:
    """The paragraph (or list item) of ``text`` around position ``at``."""
    start = max(text.rfind("\n\n", 0, at), text.rfind("\n* ", 0, at), text.rfind("\n- ", 0, at))
    ends = [
        e for e in (text.find("\n\n", at), text.find("\n* ", at), text.find("\n- ", at)) if e >= 0
    ]
    return text[max(start, 0) : min(ends, default=len(text))]


def check_markdown(
    text: str,
    results: Mapping[str, Mapping[str, Any]],
    reference: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """List every marked number in ``text`` that differs from ``results``, and every marker
    that is not one.

    Findings are compared with ``results`` (the run's records). Machine facts
    (the keys a record lists under ``"facts"``) are compared with
    ``reference`` (the committed records; default: ``results``), and the
    paragraph quoting one must say ``"reference machine"``: a new run on
    another machine re-measures them, which is no reason to fail.

    A marker must follow its number directly and close with ``-->``: an unclosed
    ``<!--@key>`` is checked by nothing, and on the site it either shows as
    text or, read as an HTML comment, hides everything up to the next ``-->``.

    Examples
    --------
    >>> check_markdown("n = 40<!--@dr001.n>, and more text", {"dr001": {"values": {"n": 40}}})
    ["line 1: a marker the check cannot read (not '<number><!--@record.key-->'): \
'n = 40<!--@dr001.n>, and more text'"]
    """
    problems = []
    checked = {m.start("key") - len("<!--@") for m in _MARKER.finditer(text)}
    for start in (m.start() for m in re.finditer(re.escape("<!--@"), text)):
        if start not in checked:
            line = text.count("\n", 0, start) + 1
            around = text.splitlines()[line - 1].strip()[:80]
            problems.append(
                f"line {line}: a marker the check cannot read (not "
                f"'<number><!--@record.key-->'): {around!r}"
            )
    reference = results if reference is None else reference
    facts = facts_of(reference) | facts_of(results)
    for m in _MARKER.finditer(text):
        fact = m["key"] in facts
        want = format_value(_lookup(reference if fact else results, m["key"]), m["fmt"])
        got = m["num"].replace("−", "-")
        if got != want:
            source = "the reference record says" if fact else "the results say"
            problems.append(f"{m['key']}: the text says {got!r}, {source} {want!r}")
        if fact and REFERENCE_LABEL not in _paragraph(text, m.start()).replace("\n", " "):
            problems.append(
                f"{m['key']}: a machine fact quoted in a paragraph that does not say it "
                f"is the {REFERENCE_LABEL}'s (another machine measures another value): "
                f"write 'on the {REFERENCE_LABEL}' beside it"
            )
    return problems


def annotate_run(
    text: str,
    run: Mapping[str, Mapping[str, Any]],
    reference: Mapping[str, Mapping[str, Any]],
) -> str:
    """``text`` with this run's value beside each machine fact quoted from the reference.

    For the site: a reader sees the reference machine's number, which the
    record's prose discusses, and what the run that built the page measured.
    Findings are left as they are (the numbers check holds them equal).

    Examples
    --------
    >>> ref = {"t": {"values": {"ms": 54}, "facts": ["ms"]}}
    >>> annotate_run("54<!--@t.ms--> ms", {"t": {"values": {"ms": 71}, "facts": ["ms"]}}, ref)
    '54<!--@t.ms--> (this run: 71) ms'
    """
    facts = facts_of(reference) | facts_of(run)

    def repl(m: re.Match[str]) -> str:
        if m["key"] not in facts:
            return m[0]
        try:
            value = format_value(_lookup(run, m["key"]), m["fmt"])
        except KeyError:
            return m[0]
        return f"{m[0]} (this run: {value})"

    return _MARKER.sub(repl, text)


def update_markdown(text: str, results: Mapping[str, Mapping[str, Any]]) -> str:
    """Rewrite every marked number in ``text`` from ``results``.

    Examples
    --------
    >>> update_markdown("n = 1<!--@a.n-->", {"a": {"values": {"n": 7}}})
    'n = 7<!--@a.n-->'

    A typographic minus (U+2212) in the text stays one:

    >>> update_markdown("d = −0.1<!--@a.d-->", {"a": {"values": {"d": -0.2}}})
    'd = −0.200<!--@a.d-->'
    """

    def repl(m: re.Match[str]) -> str:
        value = format_value(_lookup(results, m["key"]), m["fmt"])
        if "−" in m["num"] or (m["num"][0].isdigit() and value.startswith("-")):
            value = value.replace("-", "−", 1)
        fmt = f":{m['fmt']}" if m["fmt"] else ""
        return f"{value}<!--@{m['key']}{fmt}-->"

    return _MARKER.sub(repl, text)
