"""Words bound to their tests: a record's sentence may say no more than its rows' verdicts.

:mod:`hierret.publish.claims` makes every row of a *Claims and tests* table
carry the verdict its numbers give. This module reads the *sentences* that
cite those rows and checks that their wording is compatible with the cited
rows' verdict class:

* ``directional`` (beats, trails, better, lower, helps, repairs): every cited
  row established in a direction (holds, contradicted, inferior, superior);
* ``no_effect`` (the same results, alike, level with, close, barely moves,
  does nothing, makes no difference): an equivalence row that holds
  (``≈ 0 (margin …)``, *equivalent*);
* ``no_loss`` (at least as good, no worse, loses less than the margin): a
  non-inferior (or equivalent) row; ``no_gain`` (no better, gains less than
  the margin): a non-superior (or equivalent) row;
* ``interaction`` (matters most when, wherever, the gap widens, carries part
  of): an interaction row (its test cell ends ``(interaction)``);
* ``hedge`` (not established, does not survive the adjustment, inconclusive):
  rows that are not established or inconclusive, and the clause says what the
  test could detect;
* ``comparison`` (its gain over, a lead over, headroom): any cited row;
* ``history`` (was not established on the sample), ``reported`` (the study
  found …) and ``untested`` (an interaction this record does not test) need no
  row;

and a row that is *not established* or *inconclusive* may only be said to be
so: its clause must carry a ``hedge`` phrase and say what the test could
detect. A *fragile* holds (one that does not survive the record's
robustness alternatives) must be called fragile where a sentence leans on it.

Why a vocabulary rather than sentences generated from the rows: the records
are read as prose, by people, and a generated sentence per row would turn
them into the claims table again. The vocabulary is small, explicit and
tested on sentences the records never contained; where a sentence's words
fall outside it the check errs towards asking for a citation.

A sentence is split into clauses at its citations: each citation group
``[C1, C2]`` governs the text since the previous group (the text after the
last group joins the last clause). Phrases are matched in a fixed order:
hedges first (so "no gain survives the adjustment" is a hedge, not a claim
of no gain), then no-loss and no-gain phrases, then no-effect phrases, then
directional words, a directional word after a negation ("does not beat")
counting as a claim of no effect. What the check cannot see is which arm a
sentence puts first: the direction lives in the cited row's own claim text
and verdict, which the citation links to.

A citation names a row of the same record (``[C3]``) or of another
(``[DR-001 C4]``): a comparison is tested once, in one record, and cited
from the others (:func:`duplicates` finds two rows that test the same
comparison).

Examples
--------
>>> classes("BM25 trails dense, and neither difference survives the adjustment")
['hedge', 'directional']
>>> classes("the two arms are level with each other")
['no_effect']
>>> classes("it is at least as good as fp32 within the declared margin")
['no_loss']
>>> classes("late chunking matters most when the passages are long")
['interaction']
>>> rows = {"C1": "holds", "C2": "not established (could detect ≥ 0.07)"}
>>> problems("Passages beat whole units [C1].", rows)
[]
>>> problems("Passages beat whole units [C1, C2].", rows)[0][:60]
"'beat' is directional, but C2 is not established (could dete"
>>> problems("The hybrid's gain is not established (could detect ≥ 0.07) [C2].", rows)
[]
>>> problems("The hybrid and dense are close [C2].", rows)[0][:66]
"'are close' claims no effect, which needs an equivalence row that "
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "CLASSES",
    "Clause",
    "classes",
    "clauses",
    "duplicates",
    "problems",
    "verdict_class",
]

_W = r"(?:\w+[-']?\w*,?\s+)"  # one word (a comma may follow) and its space
#: The wording classes, each a pattern; matched in this order, each match blanked
#: before the next class is looked for.
CLASSES: dict[str, re.Pattern[str]] = {
    # a verdict of an earlier run, told as history ("was not established on the sample")
    "history": re.compile(
        r"\b((?:was|were|had been) not (?:yet )?(?:established|shown)|"
        r"not established (?:before|earlier|then|on the sample|in the earlier run))(?!\w)",
        re.IGNORECASE,
    ),
    # another study's finding, reported: a mention, which needs no row of ours
    "reported": re.compile(
        r"\b(the (?:study|studies|seed study|earlier study|original study|erratum)(?:'s)?"
        r"(?: \w+)? (?:found|finds|reported|reports|claimed|claims|showed|shows|warned|saw|"
        r"measured|concluded))(?!\w)",
        re.IGNORECASE,
    ),
    "untested": re.compile(
        r"\b(not (?:yet )?tested|untested|(?:does|do|did)(?: not|n't) test|"
        r"no test (?:compares|tests|of|here|in)|(?:is|are|was|were) not compared|"
        r"(?:is|are) not (?:a )?(?:finding|test)|not (?:a |an )?finding)(?!\w)",
        re.IGNORECASE,
    ),
    "hedge": re.compile(
        r"\b(not (?:been |yet |be )?(?:established|shown|significant|tested)|"
        r"never (?:been )?(?:established|shown)|untested|unestablished|inconclusive|"
        r"(?:could|can|did|does|do)(?: not|n't) (?:show|tell|establish|clear|survive|settle)|"
        r"cannot (?:show|tell|establish|settle)|fails? to (?:clear|survive|show|establish)|"
        r"(?:does|do|did)(?: not|n't) survive|survives? no\b|"
        r"(?:no|none|neither|nor)\b(?:[^.;]|\.(?=\d)){0,200}?\b"
        r"(?:survives?|(?:is|are|was|were) established|"
        r"clears?|holds?)|"
        r"without (?:the |a |any |its )?" + _W + r"{0,3}being (?:established|shown)|"
        r"no (?:established|significant|tested) \w+|"
        r"no \w+(?: [\w-]+){0,5} (?:is|was|are|were) (?:shown|established))(?!\w)",
        re.IGNORECASE,
    ),
    "no_loss": re.compile(
        r"\b(at least as (?:good|high|well|accurate)|no worse|not worse|"
        r"(?:loses?|lost|losing) (?:less|no more) than (?:the|its|a) (?:declared )?margin|"
        r"non-inferior|no (?:real |measurable )?loss|(?:does|do|did)(?: not|n't) lose|"
        r"loses? nothing|costs? nothing in (?:quality|ndcg)|gives? up nothing|sacrifices? nothing|"
        r"(?:is|are) not worse)(?!\w)",
        re.IGNORECASE,
    ),
    "no_gain": re.compile(
        r"\b(no better|not better|(?:gains?|gained) less than (?:the|its|a) (?:declared )?margin|"
        r"non-superior|no (?:real |measurable )?gain|(?:does|do|did)(?: not|n't) gain|"
        r"at most as (?:good|high))(?!\w)",
        re.IGNORECASE,
    ),
    "no_effect": re.compile(
        r"\b(the same (?:results?|scores?|quality|figures?|ranking|accuracy|ndcg\S*|hit\S*)|"
        r"alike|(?:is|are|was|were|stays?|sits?|remains?|stand|stands) level with|level with or|"
        r"on a par|on par|neck and neck|"
        r"(?:are|is|were|was|stay|stays|remain|remains|sit|sits|lie|lies) (?:\w+ )?close\b|"
        r"close (?:to each other|together|behind|to one another)|"
        r"(?:does|do|did|changes?|changed|change) (?:little|nothing)|barely|hardly|"
        r"negligible|(?:makes?|made) (?:little |no )(?:real )?difference|"
        r"no (?:real |meaningful |practical )?(?:difference|effect)|"
        r"equivalent|equally (?:good|well|strong)|indistinguishable|interchangeable|"
        r"(?:are|is) comparable|much the same|about the same|roughly equal|"
        r"(?:do|does|did)(?: not|n't) (?:differ|matter|help|hurt|change)|"
        r"nothing to choose|as good as|just as good|tie[ds]? with|about what|"
        r"similar(?:ly)?(?= (?:to|in|on|at|across|quality|scores?|results?|ndcg)|[.,;)]|$)|"
        r"perform(?:s|ed)? similarly|perform(?:s|ed)? the same|"
        r"match(?:es|ed)? (?:the |its |plain |dense |bm25 |fp32 |the default)|"
        r"immaterial|irrelevant to|"
        r"(?:essentially|practically|virtually) (?:identical|equal|the same)|"
        r"identical (?:quality|scores|results|ndcg\S*)|(?:reach(?:es)?|at|achieves?) parity|"
        r"no (?:meaningful|material|practical|real|measurable|appreciable) "
        r"(?:gap|benefit|gain|loss|effect|difference|change|advantage)|"
        r"(?:adds?|brings?|gives?) (?:nothing|no (?:benefit|gain|improvement|advantage))|"
        r"(?:is|are|was|were) (?:just |equally )?as "
        r"(?:effective|accurate|strong|useful|precise) as|"
        r"about as (?:good|well|high|strong) as|roughly what|much like)(?!\w)",
        re.IGNORECASE,
    ),
    "interaction": re.compile(
        r"\b(matters? (?:most|more|less|only)|more (?:so )?(?:when|where)\b|"
        r"especially (?:when|where|for|with|on)|in particular (?:when|where)|"
        r"wherever|whenever|grows? with|(?:increases?|decreases?|rises?|declines?) with|"
        r"(?:better|worse|higher|lower|helps?|hurts?) (?:for|on|when|with) [^,;]{1,40}?"
        r"(?:and|but|while) (?:\w+ )?(?:better|worse|higher|lower|helps?|hurts?) "
        r"(?:for|on|when|with)|"
        r"(?<!not )(?<!n't )depends? on (?:the )?"
        r"(?:corpus|corpora|size|length|encoder|target|level|passage|"
        r"document|section|first stage|question)|"
        r"(?:helps?|hurts?|works?|pays? off) (?:most|best|least|more|less) "
        r"(?:for|when|with|on|where)|"
        r"(?:stronger|weaker|larger|smaller|bigger) (?:for|when|with|on) "
        r"(?:long|short|weak|strong|large|small|bigger|longer)|"
        r"(?:gaps?|differences?|leads?|advantages?|deficits?|gains?)(?: \w+){0,4} "
        r"(?:shrinks?|shrank|shrunk|narrows?|narrowed|widens?|widened|widening)|"
        r"(?:shrinks?|shrank|narrows?|narrowed|widens?|widened|widening) the "
        r"(?:gaps?|differences?|lead|advantage|deficit|gain)|"
        r"carr(?:y|ies) (?:part|some|most) of|(?<!late )interactions? (?:between|of|with)|"
        r"the (?:longer|larger|shorter|smaller|more|fewer|weaker|stronger) " + _W + r"{0,5}"
        r"the (?:more|less|larger|smaller|better|worse|higher|lower))(?!\w)",
        re.IGNORECASE,
    ),
    "directional": re.compile(
        r"\b(beats?|beaten|beating|outperform(?:s|ed|ing)?|outscores?|outranks?|"
        r"trails?|trailed|trailing|falls? (?:behind|short)|fell (?:behind|short)|"
        r"better|worse|higher|lower(?:s|ed)?|stronger|weaker|strongest|weakest|"
        r"improves?|improved|improving|hurts?|harms?|harmed|helps?|helped|"
        r"exceeds?|exceeded|repairs|repaired|"
        r"more often|less often|superior|inferior|ahead of(?! \w+ing\b| time\b)|ahead(?! of)|"
        r"(?:is|are|was|were|stays?|stayed|lies?|lie|sits?|remains?|comes?) (?:well |far )?behind|"
        r"(?:above|below)(?= (?:the |its |a |dense|bm25|passages|plain|centroid|raw|fused|"
        r"chunk|whole|every|all|minilm|e5|wordllama|int8|\w+'s))|"
        r"collapses?|collapsed|wins?(?! \d)|won(?! \d)|loses? to|costs? (?:more|less)|lost to|"
        r"edges? out|lags?|lagged|lagging|boost(?:s|ed)?|winner|degrades?|degraded|"
        r"pays? off|paid off|outshines?|worsens?|worsened|preferable|"
        r"comes? out (?:ahead|on top|behind)|(?:an|the|its) edge over|"
        r"surpass(?:es|ed)?|outdoes|outdid|underperforms?|overtakes?|dominates?|"
        r"highest|lowest|leads|led)(?!\w)",
        re.IGNORECASE,
    ),
    "comparison": re.compile(
        r"\b(headroom|room (?:for|to) improve(?:ment)?|upside|"
        r"(?:a|the|its|their|any) (?:boost|benefit|penalty|improvement)(?! \w+ing)|"
        r"(?:a|the|its|their|any) (?:lead|deficit|shortfall|advantage|gain|loss|"
        r"drop|improvement) (?:over|of|against|to|from|on)|gains? (?:over|on|against))(?!\w)",
        re.IGNORECASE,
    ),
}
#: A negation close enough before a directional word to turn it into a claim of no
#: effect ("does not beat", "never helps").
_NEGATION = re.compile(r"\b(?:not|never|no|n't|nor|neither|without)\W+(?:\w+\W+){0,2}$", re.I)
_CITE = re.compile(r"\[((?:DR-\d+ )?C\d+(?:,\s*(?:DR-\d+ )?C\d+)*)\]")
_DETECT = re.compile(r"\bcould (?:have )?detect|\bdetectable\b", re.IGNORECASE)
_WHETHER = re.compile(r"\bwhether\b", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“][^\"”]{1,200}[\"”]")
_SHOWN = re.compile(r"\b(?:shown|established|proven|found|known) to (?:\w+ )?$", re.I)
_POINT = re.compile(r"\bpoint estimates?\b", re.IGNORECASE)

#: Verdict classes of a row (:func:`verdict_class`).
ESTABLISHED, UNESTABLISHED = "established", "unestablished"
NO_LOSS, NO_GAIN, EQUIVALENT = "no_loss", "no_gain", "equivalent"


def verdict_class(verdict: str) -> str:
    """The class of a claims row's verdict cell.

    Examples
    --------
    >>> [verdict_class(v) for v in ("holds", "holds (fragile: rank test 0.066)",
    ...  "contradicted", "inferior (margin 0.02)", "non-inferior (margin 0.02)",
    ...  "non-superior (margin 0.02)", "equivalent (margin 0.02)",
    ...  "not established (could detect ≥ 0.08)", "inconclusive (margin 0.02)")]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['established', 'established', 'established', 'established', 'no_loss', 'no_gain',
     'equivalent', 'unestablished', 'unestablished']
    """
    v = verdict.strip().lower()
    if v.startswith(("holds", "contradicted", "inferior", "superior", "not equivalent")):
        return ESTABLISHED
    if v.startswith("non-inferior"):
        return NO_LOSS
    if v.startswith("non-superior"):
        return NO_GAIN
    if v.startswith("equivalent"):
        return EQUIVALENT
    return UNESTABLISHED


@dataclass(frozen=True)
class Clause:
    """A stretch of a sentence and the rows it cites (ids, ``"C3"`` or ``"DR-001 C4"``)."""

    text: str
    cites: tuple[str, ...]


def clauses(sentence: str) -> list[Clause]:
    """``sentence`` split at its citation groups: each group governs the text before it
    (since the previous group); text after the last group joins the last clause.

    Examples
    --------
    >>> [(c.text, c.cites) for c in clauses("A beats B [C1], while C trails D [C2, DR-001 C4].")]
    [('A beats B', ('C1',)), (', while C trails D .', ('C2', 'DR-001 C4'))]
    >>> clauses("Nothing cited here.")
    [Clause(text='Nothing cited here.', cites=())]
    """
    out: list[Clause] = []
    at = 0
    for m in _CITE.finditer(sentence):
        ids = tuple(i.strip() for i in m[1].split(","))
        text = sentence[at : m.start()].strip()
        if out and not re.search(r"[^\W\d_]", text):  # "…[C6]) [C4]": no words of its own
            out[-1] = Clause(f"{out[-1].text} {text}".strip(), out[-1].cites + ids)
        else:
            out.append(Clause(text, ids))
        at = m.end()
    rest = sentence[at:].strip()
    if not out:
        return [Clause(rest, ())]
    if rest:
        last = out[-1]
        out[-1] = Clause(f"{last.text} {rest}".strip(), last.cites)
    return out


def _find(text: str) -> list[tuple[str, str, int]]:
    """(class, words, position) of every vocabulary match, classes in :data:`CLASSES`
    order, each match blanked before later classes are looked for. Quoted words
    ("loses nothing") are mentioned, not used, and are skipped."""
    text = _QUOTED.sub(lambda m: " " * len(m[0]), text)
    found: list[tuple[str, str, int]] = []
    for name, pattern in CLASSES.items():
        for m in pattern.finditer(text):
            kind = name
            if name == "directional" and _SHOWN.search(text[: m.start()]):
                kind = "hedged" if any(k == "hedge" for k, _, _ in found) else name
            elif name == "directional" and _NEGATION.search(text[: m.start()]):
                # "does not beat" claims no difference, unless a hedge governs it
                # ("cannot show that no encoder beats")
                hedged = any(k == "hedge" and at < m.start() for k, _, at in found)
                kind = "hedged" if hedged else "no_effect"
            found.append((kind, m[0], m.start()))
        text = pattern.sub(lambda m: " " * len(m[0]), text)
    return found


def classes(text: str) -> list[str]:
    """The wording classes ``text`` uses, in :data:`CLASSES` order, each once."""
    kinds = {k for k, _, _ in _find(text)}
    return [k for k in CLASSES if k in kinds]


def problems(sentence: str, rows: Mapping[str, str], interactions: Iterable[str] = ()) -> list[str]:
    """What is wrong with ``sentence``'s wording given the verdicts of the rows it cites.

    Parameters
    ----------
    sentence : str
        One sentence, its published-number markers removed.
    rows : mapping of str to str
        Row id (as cited: ``"C3"`` or ``"DR-001 C4"``) to its verdict cell.
        Cited ids missing here are reported.
    interactions : iterable of str
        The ids of rows whose test is an interaction.

    Returns
    -------
    list of str
        One line per problem; empty when the wording fits every cited row.
    """
    inter = set(interactions)
    out: list[str] = []
    for clause in clauses(sentence):
        found = [f for f in _find(clause.text) if f[0] != "hedged"]
        kinds = {k for k, _, _ in found}
        first = {k: w for k, w, _ in sorted(found, key=lambda f: f[2], reverse=True)}
        missing = [i for i in clause.cites if i not in rows]
        out += [f"cites {i}, which no claims table has" for i in missing]
        cited = {i: rows[i] for i in clause.cites if i in rows}
        if not cited:
            # "an interaction this record does not test": said of what no row tests
            free = {"hedge", "untested", "history", "reported"}
            if "reported" in kinds:  # "the study found A ahead of B": its words, not ours
                free |= {"directional", "no_effect", "comparison", "interaction"}
            if "untested" in kinds:  # "whether A helps B more than C is not tested"
                free |= {"interaction", "comparison"}
                either = _WHETHER.search(clause.text) or _POINT.search(clause.text)
                free |= {"directional"} if either else set()
            if _WHETHER.search(clause.text):  # a question asked, not an answer given
                free |= {"directional", "comparison"}
            if kinds - free:
                k = next(k for k in CLASSES if k in kinds and k not in free)
                out.append(
                    f"a comparative sentence ({first[k]!r}, {k}) cites no claim: cite the row "
                    "that tests it"
                )
            elif "hedge" in kinds:
                out.append(f"{first['hedge']!r} says a test's verdict but cites no row")
            continue
        cls = {i: verdict_class(v) for i, v in cited.items()}
        say = {i: f"{i} is {v}" for i, v in cited.items()}
        # "whether A beats B is not established"; "its point estimate is lower, the
        # difference not established": a direction that the clause itself hedges
        hedged = bool(kinds & {"hedge", "untested"}) and bool(
            _WHETHER.search(clause.text) or _POINT.search(clause.text)
        )
        if "directional" in kinds and not hedged:
            out += [
                f"{first['directional']!r} is directional, but {say[i]}: say what was "
                "established (a row that holds), or that it is not established"
                for i, c in cls.items()
                if c != ESTABLISHED
            ]
        if "no_effect" in kinds:
            out += [
                f"{first['no_effect']!r} claims no effect, which needs an equivalence row "
                f"that holds (two one-sided tests, a declared margin); {say[i]}"
                for i, c in cls.items()
                if c != EQUIVALENT
            ]
        for k, ok in (("no_loss", (NO_LOSS, EQUIVALENT)), ("no_gain", (NO_GAIN, EQUIVALENT))):
            if k in kinds and not hedged:
                out += [
                    f"{first[k]!r} claims {k.replace('_', ' ')}, which needs a "
                    f"{'non-inferior' if k == 'no_loss' else 'non-superior'} row; {say[i]}"
                    for i, c in cls.items()
                    if c not in ok
                ]
        if "interaction" in kinds:
            out += [
                f"{first['interaction']!r} states an interaction, which needs its own row "
                f"(a test of the difference between differences); {i} is not one"
                for i in cited
                if i not in inter
            ]
        unestablished = [i for i, c in cls.items() if c == UNESTABLISHED]
        numbers_only = not kinds and bool(re.search(r"\d", clause.text))  # "1.000 and 1.000"
        if unestablished and not numbers_only and "hedge" not in kinds:
            out += [
                f"{say[i]}: the clause may only say it is not established (or inconclusive)"
                for i in unestablished
            ]
        elif (
            unestablished
            and "hedge" in kinds
            and not _DETECT.search(clause.text)
            and not any(v.lower().startswith("inconclusive") for v in cited.values())
        ):
            out.append(
                f"{', '.join(unestablished)} not established: say what the test could detect "
                "(e.g. 'could detect ≥ 0.08', with its marker)"
            )
        if "hedge" in kinds and kinds.isdisjoint({"directional", "no_effect"}):
            out += [
                f"{first['hedge']!r} says not established, but {say[i]}"
                for i, c in cls.items()
                if c == ESTABLISHED
            ]
        out += [
            f"{say[i]}: a sentence that leans on it must say it is fragile"
            for i, v in cited.items()
            if cls[i] == ESTABLISHED and "fragile" in v and "fragile" not in clause.text.lower()
        ]
    return out


def duplicates(
    per_question: Mapping[str, Mapping[str, float]],
) -> list[tuple[str, str]]:
    """Pairs of rows that test the same comparison: the same per-question differences,
    or the same with the sign flipped (arms swapped).

    Parameters
    ----------
    per_question : mapping
        Row id to its test's per-question differences (question id to arm minus base).

    Examples
    --------
    >>> duplicates({"DR-1 C1": {"q1": 0.5, "q2": 0.0}, "DR-2 C8": {"q1": -0.5, "q2": -0.0},
    ...             "DR-2 C9": {"q1": 0.5, "q2": 0.1}})
    [('DR-1 C1', 'DR-2 C8')]
    """
    seen: dict[tuple[tuple[str, float], ...], str] = {}
    out = []
    for row, diffs in per_question.items():
        key = tuple(sorted((q, round(float(d), 12) + 0.0) for q, d in diffs.items()))
        flipped = tuple((q, -d + 0.0) for q, d in key)
        for k in (key, flipped):
            if k in seen:
                out.append((seen[k], row))
                break
        else:
            seen[key] = row
    return out
