"""Roles: what a claim is about, so that a run on other corpora or sizes tests it too.

A claim of a decision record is tested by a key of its result record
(:mod:`hierret.publish.claims`), and the key names what the study ran: the
corpus (``test_pyref_900_…``: the Python reference), the passage size
(``…_900_…``), the size swept against the default (``sweep_dense_600``), the
BEIR corpus (``scifact_…``). Those are *roles*: "the corpus", "the first
passage size", "a smaller size than the default", "the BEIR corpus". A run
with other parameters fills the same roles with what it ran, so the same claim
is tested on its numbers, with its own interval and detectable effect:

* a **corpus** the claim names is this run's corpus of that name when it read
  it, else each corpus it read that the study did not ("C3 on course_notes");
* a **passage size** is this run's size in the same place of its list
  (``chunk_chars``: the first, the second);
* a **swept size** is this run's size on the same side of its default, in the
  same order outward from it;
* the **BEIR corpus** is this run's, if it ran one.

Where a role is empty on the run (one passage size, no BEIR corpus, a corpus
it did not read and nothing new in its place), the claim is not testable there,
and :attr:`Trial.why` says why in one line. DR-002's keys also name

* an **encoder compared** against the baseline (``…_e5_small``): a run that
  did not compare it cannot test the claim, and one with another baseline
  tests it "against" that one;
* a **sample** of a corpus (``scifact_1000``: the abstracts an encoder too slow
  for the whole corpus was compared on): the run's sample at the same place,
  or the whole corpus when the run sampled none; a run that did not read the
  corpus tests the claim on its own corpora, as for any corpus.

A record's roles are declared in :data:`SPECS`; a record with none (DR-003's
first stages and rerankers are named in its keys) is tested on the keys as
published.

Examples
--------
>>> published = {"corpora": ["python-reference", "qasper"], "chunk_chars": [900, 1800],
...              "encoder": "all-MiniLM-L6-v2"}
>>> run = {"corpora": ["tests/data/notes"], "chunk_chars": [900],
...        "encoder": "all-MiniLM-L6-v2"}
>>> cast("dr004", "test_pyref_900_fusion_chunk_section", published, run)
[Trial(key='test_notes_900_fusion_chunk_section', on='on notes', why='')]
>>> print(cast("dr004", "test_qasper_1800_fusion_chunk_section", published, run)[0].why)
the run has 1 passage size (chunk_chars = [900]), the claim is about its 2nd (1800 \
in the study)
>>> cast("dr004", "test_pyref_900_fusion_chunk_section", published, published)
[Trial(key='test_pyref_900_fusion_chunk_section', on='', why='')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from hierret.publish.record import key as record_key

__all__ = ["SHORT", "SPECS", "Spec", "Trial", "cast", "corpus_token"]

#: The short names the notebooks give corpora in record keys (any other corpus goes by
#: its name, or a path's last part, as :func:`hierret.publish.record.key` writes it).
SHORT = {"python-reference": "pyref", "scifact-sections": "scifact"}


@dataclass(frozen=True)
class Spec:
    """Where a record's keys name what the study ran (module notes).

    Attributes
    ----------
    corpora : str
        The parameter listing the corpora whose short names the keys carry
        (``"corpora"``); empty when the keys name no corpus.
    corpus : str
        The parameter naming the one corpus every key is about (``"corpus"``,
        DR-001); empty when there is none.
    sizes : str
        The parameter listing passage sizes the keys carry, by place
        (``"chunk_chars"``).
    sweep : tuple of (str, str, str)
        ``(prefix, sizes parameter, default parameter)``: keys ``prefix…_N``
        carry a size ``N`` swept against the default (``sweep_dense_600``).
    beir : tuple of (str, str)
        ``(prefix, parameter)``: keys starting ``prefix`` are about the BEIR
        corpus the parameter names (``None``: none ran).
    encoder : str
        The parameter naming the encoder every key is about.
    named : tuple of str
        List parameters whose entries the keys name (DR-002's ``encoders``:
        ``test_pyref_dense_e5_small``; DR-003's ``first_stages`` and
        ``rerankers``: ``pyref_dense_e5_maxsim_vs_first``); a run without an
        entry a key names cannot test its claim.
    baseline : str
        The parameter naming the entry the others are compared against (not
        named in the keys); a run with another one tests the claims against it.
    short : mapping of str to str
        Short names the keys give an entry's parts (``"e5-small"``: ``"e5"``).
    samples : str
        The parameter whose sizes (``{"e5-small": 1000}``) name a sample of a
        corpus in the keys (``scifact_1000``: 1,000 of SciFact's abstracts).
    """

    corpora: str = ""
    corpus: str = ""
    sizes: str = ""
    sweep: tuple[str, str, str] | None = None
    beir: tuple[str, str] | None = None
    encoder: str = "encoder"
    named: tuple[str, ...] = ()
    baseline: str = ""
    short: Mapping[str, str] = field(default_factory=dict)
    samples: str = ""

    def token(self, entry: str) -> str:
        """How the keys name an entry: ``"dense:e5-small"`` → ``"dense_e5"`` with
        ``short`` ``{"e5-small": "e5"}``, ``"e5-rescore"`` → ``"e5_rescore"``."""
        return record_key("_".join(self.short.get(p, p) for p in entry.split(":")))


#: Each record's roles (module notes).
SPECS: dict[str, Spec] = {
    "dr001": Spec(
        corpus="corpus", sweep=("sweep_", "sizes", "max_chars"), beir=("scifact_", "beir")
    ),
    "dr002": Spec(
        corpora="corpora",
        encoder="",
        named=("encoders",),
        baseline="baseline",
        samples="sampled",
    ),
    "dr003": Spec(
        corpora="corpora",
        encoder="",
        named=("first_stages", "rerankers"),
        short={"all-MiniLM-L6-v2": "minilm", "e5-small": "e5"},
    ),
    "dr004": Spec(corpora="corpora", sizes="chunk_chars"),
    "dr005": Spec(corpora="corpora", sizes="chunk_chars"),
}


@dataclass(frozen=True)
class Trial:
    """A claim's test on one run (:func:`cast`).

    Attributes
    ----------
    key : str or None
        The run's key that tests the claim (the field, without ``record.``);
        ``None`` when the run cannot test it.
    on : str
        What the run tested it on where that is not the study's, e.g.
        ``"on course_notes"`` or ``"on notes, at 600 characters"``; empty when
        the roles are the study's.
    why : str
        When ``key`` is ``None``: why, in one line.
    """

    key: str | None
    on: str = ""
    why: str = ""


def corpus_token(name: object) -> str:
    """A corpus as record keys name it: its short name, or a path's last part.

    Examples
    --------
    >>> corpus_token("python-reference"), corpus_token("/home/me/course/notes/")
    ('pyref', 'notes')
    >>> corpus_token("tests/data/course_notes"), corpus_token("qasper")
    ('course_notes', 'qasper')
    """
    base = PurePath(str(name)).name or str(name)
    return record_key(SHORT.get(base, base))


def _shown(name: object) -> str:
    """A corpus as a reader knows it: a path's last part, a name as given."""
    return PurePath(str(name)).name or str(name)


def _ordinal(i: int) -> str:
    return {0: "1st", 1: "2nd", 2: "3rd"}.get(i, f"{i + 1}th")


def _token(field: str, token: str) -> bool:
    """Whether ``token`` is one of ``field``'s ``_``-separated parts (or a run of them)."""
    return f"_{token}_" in f"_{field}_"


def _replace(field: str, subst: Mapping[str, str]) -> str:
    """``field`` with each ``_``-separated run of parts in ``subst`` replaced, at once."""
    parts = field.split("_")
    out: list[str] = []
    i = 0
    while i < len(parts):
        for n in range(len(parts) - i, 0, -1):  # the longest run first (course_notes)
            run = "_".join(parts[i : i + n])
            if run in subst:
                out.append(subst[run])
                i += n
                break
        else:
            out.append(parts[i])
            i += 1
    return "_".join(out)


def _sizes(params: Mapping[str, Any], name: str) -> list[int]:
    value = params.get(name)
    return [int(s) for s in value] if isinstance(value, Sequence) else []


def _sides(sizes: Sequence[int], default: int) -> tuple[list[int], list[int]]:
    """The sizes below ``default``, nearest first, and those above it, nearest first."""
    return (sorted({s for s in sizes if s < default}, reverse=True),
            sorted({s for s in sizes if s > default}))  # fmt: skip


def _sample(
    spec: Spec, field: str, corpus: str, published: Mapping[str, Any], run: Mapping[str, Any]
) -> tuple[str, str, str] | None:
    """Where ``field`` names a sample of ``corpus`` (``scifact_1000``): that token, the
    run's in its place (its sample at the same place in its sorted sizes, else the
    whole corpus) and how to say it; ``None`` when the field names no sample."""
    if not spec.samples:
        return None
    given = published.get(spec.samples) or {}
    theirs = sorted({int(n) for n in given.values()})
    mine = sorted({int(n) for n in (run.get(spec.samples, given) or {}).values()})
    for i, n in enumerate(theirs):
        token = f"{corpus}_{n}"
        if _token(field, token):
            if i < len(mine):
                return token, f"{corpus}_{mine[i]}", f"a sample of {mine[i]:,} of {corpus}"
            return token, corpus, f"all of {corpus}"
    return None


def cast(
    record: str, field: str, published: Mapping[str, Any], run: Mapping[str, Any]
) -> list[Trial]:
    """The keys of this run that test the claim the study tested with ``field``.

    Parameters
    ----------
    record : str
        The record (``"dr004"``); its roles are :data:`SPECS`'s.
    field : str
        The claim's test key in the study's record, without ``record.``.
    published, run : mapping
        The study's parameters and this run's (each record's
        ``identity["parameters"]``).

    Returns
    -------
    list of Trial
        One per corpus the claim is tested on (several when the run read
        several corpora the study did not); one with ``key=None`` and the
        reason when the run cannot test it.
    """
    spec = SPECS.get(record)
    if spec is None:
        return [Trial(field)]
    subst: dict[str, str] = {}
    on: list[str] = []
    if spec.encoder and run.get(spec.encoder, published.get(spec.encoder)) != published.get(
        spec.encoder
    ):
        on.append(f"with {_shown(run[spec.encoder])}")
    for names in spec.named:
        mine_e = list(run.get(names, published.get(names, [])))
        for e in published.get(names, []):
            if spec.baseline and e == published.get(spec.baseline):
                continue
            if _token(field, spec.token(e)) and e not in mine_e:
                return [Trial(None, why=f"the run ran no {e} ({names} = {mine_e})")]
    base = spec.baseline
    if base and run.get(base, published.get(base)) != published.get(base):
        on.append(f"against {run[base]}")
    if spec.beir and field.startswith(spec.beir[0]):
        name = spec.beir[1]
        if run.get(name, published.get(name)) is None:
            return [Trial(None, why=f"no BEIR corpus ran ({name} = None)")]
        if _shown(run.get(name, published[name])) != _shown(published[name]):
            on.insert(0, f"on {_shown(run[name])}")
    elif spec.corpus and corpus_token(run.get(spec.corpus, published[spec.corpus])) != (
        corpus_token(published[spec.corpus])
    ):
        on.insert(0, f"on {_shown(run[spec.corpus])}")
    if spec.sizes:
        theirs = _sizes(published, spec.sizes)
        mine = _sizes(run, spec.sizes) or theirs
        moved: list[str] = []
        for i, size in enumerate(theirs):
            if not _token(field, str(size)):
                continue
            if i >= len(mine):
                n = f"{len(mine)} passage size{'s' * (len(mine) != 1)}"
                return [Trial(None, why=f"the run has {n} ({spec.sizes} = {mine}), the claim "
                               f"is about its {_ordinal(i)} ({size} in the study)")]  # fmt: skip
            subst[str(size)] = str(mine[i])
            if mine[i] != size:
                moved.append(str(mine[i]))
        if moved:
            on.append(f"at {' and '.join(moved)} characters")
    if spec.sweep and field.startswith(spec.sweep[0]) and field.rpartition("_")[2].isdigit():
        _, name, default = spec.sweep
        size = int(field.rpartition("_")[2])
        d0, d1 = int(published[default]), int(run.get(default, published[default]))
        study = _sides([*_sizes(published, name), d0], d0)
        ours = _sides([*(_sizes(run, name) or _sizes(published, name)), d1], d1)
        side = 0 if size < d0 else 1
        at = study[side].index(size)
        if at >= len(ours[side]):
            word = ("below", "above")[side]
            nth = f"{_ordinal(at)} " if at else ""
            return [Trial(None, why=f"the run swept no {nth}size {word} its {d1} ({name} = "
                           f"{sorted({*_sizes(run, name), d1})}), the claim {size} against "
                           f"{d0} in the study")]  # fmt: skip
        subst[str(size)] = str(ours[side][at])
        if ours[side][at] != size or d1 != d0:
            on.append(f"at {ours[side][at]} against {d1} characters")
    if not spec.corpora:
        return [Trial(_replace(field, subst), ", ".join(on))]
    theirs_c = [corpus_token(c) for c in published.get(spec.corpora, [])]
    mine_c = {corpus_token(c): _shown(c) for c in run.get(spec.corpora, published[spec.corpora])}
    named = [c for c in theirs_c if _token(field, c)]
    if not named:
        return [Trial(_replace(field, subst), ", ".join(on))]
    corpus = max(named, key=len)
    sample = _sample(spec, field, corpus, published, run)
    if corpus in mine_c:
        if sample and sample[1] != sample[0]:
            subst[sample[0]] = sample[1]
            on.insert(0, f"on {sample[2]}")
        return [Trial(_replace(field, subst), ", ".join(on))]
    new = [c for c in mine_c if c not in theirs_c]
    if not new:
        given = [_shown(c) for c in run.get(spec.corpora, [])]
        study = published[spec.corpora][theirs_c.index(corpus)]
        return [Trial(None, why=f"the run did not read {study} and read no corpus of its own "
                       f"({spec.corpora} = {given})")]  # fmt: skip
    # the study's sample of a corpus the run did not read: the run's own corpus, whole
    whole = [sample[0]] if sample else []
    return [
        Trial(
            _replace(field, subst | dict.fromkeys([corpus, *whole], c)),
            ", ".join([f"on {mine_c[c]}", *on]),
        )
        for c in new
    ]
