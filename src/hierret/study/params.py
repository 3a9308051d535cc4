"""Notebook parameters are checked: unknown names, wrong types and unknown choices fail early.

Every notebook declares its parameters in a cell tagged ``parameters`` and
calls :func:`check_notebook` in the next cell. papermill only *warns* about a
name the notebook does not declare (``-p max_chrs 600``) and then injects it
as a new variable, and it passes any value along (``-p section_weight abc``
gives a ``str``), so without a check a misspelt or mistyped parameter runs
the whole notebook on the defaults, or fails an hour later far from its
cause. The check fails in the first cells instead, with a message that names
the parameter, the value and what is accepted.

The rules:

- a name is known if the parameters cell assigns it;
- a value must have its default's type: a ``bool`` for a bool, an ``int``
  (not a bool) for an int, an ``int`` or a ``float`` for a float, a ``list``
  (or tuple) whose items have the type of the default's items for a list, a
  ``dict`` likewise; a default of ``None`` (or one that is not a literal)
  accepts anything;
- a parameter given choices (:class:`Choices`, or any collection) takes one
  of them, and a list parameter a list of them; one of the choices is
  accepted whatever its type (so ``None`` can be listed as "skip"), except
  by a list parameter, which always takes a list.

:data:`CORPUS`, :data:`BEIR` and :data:`ENCODER` read the accepted names from
the package when the check runs (the corpus loader :func:`hierret.datasets.load`
and the encoder registry of :mod:`hierret.encoders`), so a notebook lists none.

Examples
--------
>>> declared = declared_parameters("max_chars = 900\\nsection_weight = 0.65\\nsmoke = False")
>>> check_parameters({"max_chars": 600, "section_weight": 1}, declared)
>>> check_parameters({"max_chrs": 600}, declared)
Traceback (most recent call last):
...
hierret.study.params.ParameterError: unknown parameter 'max_chrs' (did you mean 'max_chars'?); \
parameters of this notebook: max_chars, section_weight, smoke
>>> check_parameters({"section_weight": "abc"}, declared)
Traceback (most recent call last):
...
hierret.study.params.ParameterError: section_weight must be a float (an int will do), \
got 'abc' (str); the default is 0.65
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hierret.datasets import Bundle

__all__ = [
    "BEIR",
    "CORPUS",
    "ENCODER",
    "RULES",
    "SIZES",
    "SMOKE_ENV",
    "UNEVALUATED",
    "Choices",
    "ParameterError",
    "Rule",
    "among",
    "at_least",
    "below",
    "between",
    "check_notebook",
    "check_parameters",
    "declared_parameters",
    "notebook_parameters",
    "rule_problems",
]

# The first line of the cell papermill injects after the parameters cell.
_INJECTED_HEADER = "# Parameters"
# What check_notebook adds to a type message about a list or dict parameter.
_PAPERMILL_HINT = (
    " (papermill's -p passes only numbers, strings, True, False and None: "
    "give a list or dict with -y '{name}: [...]')"
)


class ParameterError(ValueError):
    """A notebook parameter is unknown, of the wrong type, or not one of its choices."""


class _Unevaluated:
    """The default of a parameter whose value is not a literal: its type is not checked."""

    def __repr__(self) -> str:
        return "<not a literal>"


#: The default :func:`declared_parameters` gives a parameter whose value is not a literal.
UNEVALUATED = _Unevaluated()


@dataclass(frozen=True)
class Choices:
    """The values a parameter, or each item of a list parameter, may take.

    Parameters
    ----------
    listed : callable
        Returns the accepted values; called when the check runs, so values
        registered after import count. They are listed in messages and
        offered as suggestions.
    other : callable, optional
        Accepts further string values that cannot be listed (a folder, a hub id).
    other_text : str
        What ``other`` accepts, in words, for messages.
    fold_case : bool
        Compare strings ignoring case and surrounding space.
    none : bool
        Accept ``None`` too (the notebook reads it as "skip").

    Examples
    --------
    >>> rankers = Choices(lambda: ["bm25", "dense"])
    >>> rankers.accepts("dense"), rankers.accepts("Dense"), rankers.accepts(None)
    (True, False, False)
    >>> rankers.or_none().accepts(None)
    True
    """

    listed: Callable[[], Iterable[object]]
    other: Callable[[str], bool] | None = None
    other_text: str = ""
    fold_case: bool = False
    none: bool = False

    def or_none(self) -> Choices:
        """The same choices, and ``None``."""
        return replace(self, none=True)

    def _key(self, value: object) -> object:
        return value.strip().lower() if self.fold_case and isinstance(value, str) else value

    def accepts(self, value: object) -> bool:
        """Whether ``value`` is one of the choices."""
        if value is None and self.none:
            return True
        try:
            if self._key(value) in {self._key(v) for v in self.listed()}:
                return True
        except TypeError:  # an unhashable value (a list) is never a listed choice
            return False
        return isinstance(value, str) and self.other is not None and self.other(value)

    def problem(self, label: str, value: object) -> str | None:
        """``None`` if ``value`` is accepted, else a message naming ``label`` and the choices."""
        if self.accepts(value):
            return None
        names = [str(v) for v in self.listed()] + ["None"] * self.none
        hint = ""
        if isinstance(value, str):
            close = difflib.get_close_matches(str(self._key(value)), names, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
        other = f", or {self.other_text}" if self.other_text else ""
        return f"{label} = {value!r} is not accepted{hint}; accepted: {', '.join(names)}{other}"


def _corpus_names() -> list[str]:
    from hierret.datasets import source_names

    return source_names()


def _beir_names() -> list[str]:
    from hierret.datasets.beir import BEIR_DOWNLOADS

    return sorted(BEIR_DOWNLOADS)


def _encoder_names() -> list[str]:
    from hierret.encoders.registry import registered_encoders

    return registered_encoders()


def _is_folder(value: str) -> bool:
    return Path(value).expanduser().is_dir()


def _is_path(value: str) -> bool:
    return Path(value).expanduser().exists()


def _is_folder_or_hub_id(value: str) -> bool:
    return "/" in value.strip() or _is_folder(value)


#: Corpora :func:`~hierret.datasets.load` loads: a name of
#: :func:`~hierret.datasets.source_names`, or a BEIR folder, a Qasper file or a
#: folder of documents with questions.jsonl.
CORPUS = Choices(
    _corpus_names,
    other=_is_path,
    other_text="a BEIR folder, a Qasper JSON file, or a folder of Markdown/RST/text documents "
    "with questions.jsonl",
)
#: BEIR dataset names :func:`~hierret.datasets.load_beir` downloads, or a BEIR folder.
BEIR = Choices(_beir_names, other=_is_folder, other_text="a BEIR folder")
#: Encoder names :func:`~hierret.encoders.load_encoder` knows (case-blind), or a
#: sentence-transformers folder or hub id.
ENCODER = Choices(
    _encoder_names,
    other=_is_folder_or_hub_id,
    fold_case=True,
    other_text="a sentence-transformers folder or hub id 'org/model'",
)


@dataclass(frozen=True)
class Rule:
    """A condition on a parameter's value that may read the run's other parameters.

    Parameters
    ----------
    holds : callable
        ``holds(value, values)``: whether ``value`` is accepted, given every
        parameter's value of the run (``values``). An exception counts as no.
    describe : callable
        ``describe(values)``: what is accepted, in words, for the message.
    takes_none : bool, default False
        ``None`` has a meaning for this parameter (all of them, the longest...),
        whatever the type of the notebook's default.

    Examples
    --------
    >>> below("max_chars").problem("overlap_chars", 950, {"max_chars": 900})
    'overlap_chars = 950 is not accepted; accepted: a whole number below max_chars (900)'
    >>> among("encoders").problem("baseline", "e5", {"encoders": ["e5", "minilm"]}) is None
    True
    """

    holds: Callable[[object, Mapping[str, object]], bool]
    describe: Callable[[Mapping[str, object]], str]
    takes_none: bool = False

    def problem(self, label: str, value: object, values: Mapping[str, object]) -> str | None:
        """``None`` if ``value`` is accepted, else a message naming ``label`` and the rule."""
        try:
            ok = bool(self.holds(value, values))
        except (TypeError, ValueError, KeyError):
            ok = False
        return (
            None
            if ok
            else f"{label} = {value!r} is not accepted; accepted: {self.describe(values)}"
        )


def _count(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def at_least(low: int, *, none: bool = False) -> Rule:
    """A whole number of at least ``low`` (and ``None`` with ``none``)."""
    text = f"a whole number >= {low}" + (", or None (all of them)" if none else "")
    return Rule(
        lambda v, _: (v is None and none) or (_count(v) and int(v) >= low),  # type: ignore[call-overload]
        lambda _: text,
        takes_none=none,
    )


def between(low: float, high: float, *, open_ends: bool = False) -> Rule:
    """A number in ``[low, high]`` (``(low, high)`` with ``open_ends``)."""
    ends = "()" if open_ends else "[]"

    def holds(v: object, _: Mapping[str, object]) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False
        return low < v < high if open_ends else low <= v <= high

    return Rule(holds, lambda _: f"a number in {ends[0]}{low}, {high}{ends[1]}")


def below(other: str) -> Rule:
    """A whole number >= 0 below the parameter ``other`` (an overlap below its size)."""
    return Rule(
        lambda v, values: (
            other not in values  # refused already: nothing to compare with
            or (_count(v) and 0 <= v < values[other])  # type: ignore[operator]
        ),
        lambda values: f"a whole number below {other} ({values.get(other)!r})",
    )


def among(other: str) -> Rule:
    """One of the values of the list parameter ``other`` (a baseline among the arms)."""
    return Rule(
        lambda v, values: (
            other not in values  # refused already: nothing to compare with
            or v in values[other]  # type: ignore[operator]
        ),
        lambda values: f"one of {other} ({values.get(other)!r})",
    )


def _each(rule: Rule, *, nonempty: bool = True) -> Rule:
    """Every item of a list (or every value of a dict) meets ``rule``; the list is not empty."""

    def items(v: object) -> list[object]:
        return list(v.values()) if isinstance(v, dict) else list(v)  # type: ignore[call-overload]

    return Rule(
        lambda v, values: (
            (not nonempty or len(items(v)) > 0) and all(rule.holds(x, values) for x in items(v))
        ),
        lambda values: (
            ("a non-empty list, each item " if nonempty else "each item ") + rule.describe(values)
        ),
    )


def _nonempty(v: object, _: Mapping[str, object]) -> bool:
    return isinstance(v, list | tuple) and len(v) > 0


#: What a parameter name means in every notebook (the house vocabulary): the
#: values it accepts, checked with the parameters wherever a notebook declares
#: the name, before any work.
RULES: dict[str, Rule] = {
    "max_chars": at_least(1),
    "overlap_chars": below("max_chars"),
    "max_queries": at_least(1, none=True),
    "seed": at_least(0),
    "confidence": between(0, 1, open_ends=True),
    "n_resamples": at_least(1),
    "rrf_k": at_least(0),
    "pool": at_least(1),
    "candidates": at_least(1),
    "k": at_least(1),
    "folds": at_least(2),
    "min_keep": at_least(0),
    "top_k": at_least(1, none=True),
    "latency_queries": at_least(1),
    "throughput_texts": at_least(1),
    "variation_texts": at_least(1),
    "cost_passages": at_least(1),
    "merge_candidates": at_least(1),
    "overlap_tokens": at_least(0),
    "scifact_docs": at_least(1, none=True),
    "section_weight": between(0, 1),
    "sweep_weights": _each(between(0, 1)),
    "thresholds": _each(between(0, 1)),
    "sizes": _each(at_least(1)),
    "chunk_chars": _each(at_least(1)),
    "k_values": _each(at_least(1)),
    "sampled": _each(at_least(1), nonempty=False),
    "corpora": Rule(_nonempty, lambda _: "a non-empty list"),
    "encoders": Rule(_nonempty, lambda _: "a non-empty list"),
    "weight_sweep_corpus": among("corpora"),
    "baseline": among("encoders"),
}


def _max_docs(v: object, _: Mapping[str, object]) -> bool:
    if isinstance(v, dict):
        return all(x is None or (_count(x) and int(x) >= 1) for x in v.values())
    return v is None or (_count(v) and int(v) >= 1)  # type: ignore[call-overload]


RULES["max_docs"] = Rule(
    _max_docs, lambda _: "a whole number >= 1, None (all), or a dict of corpus to either"
)


def _sample_key(values: Mapping[str, object]) -> str:
    keys = ("corpus", "max_queries", "max_docs", "seed")
    return json.dumps({k: values.get(k) for k in keys}, sort_keys=True, default=str)


@functools.lru_cache(maxsize=4)
def _bundle(sample: str) -> Bundle | None:
    """A corpus as the notebook samples it, or ``None`` when it does not load here
    (the loader explains why when the notebook runs)."""
    from hierret.datasets import load

    given = json.loads(sample)
    corpus = given.pop("corpus")
    try:
        return load(corpus, **{k: v for k, v in given.items() if v is not None})
    except Exception:  # a corpus that does not load is the loader's to explain
        return None


def _document_ids(sample: str) -> tuple[str, ...] | None:
    bundle = _bundle(sample)
    return None if bundle is None else tuple(d.id for d in bundle.corpus)


def _a_document(v: object, values: Mapping[str, object]) -> bool:
    if v is None or "corpus" not in values:  # None: the longest; a refused corpus: said
        return True
    ids = _document_ids(_sample_key(values))
    return ids is None or v in ids


def _documents_text(values: Mapping[str, object]) -> str:
    ids = _document_ids(_sample_key(values)) or ()
    some = ", ".join(map(repr, ids[:4]))
    return (
        f"None (the corpus's longest document) or a document of corpus "
        f"{values.get('corpus')!r} as sampled ({len(ids)}: {some}, ...)"
    )


RULES["document"] = Rule(_a_document, _documents_text, takes_none=True)


def _token_vectors(v: object, _: Mapping[str, object]) -> bool:
    from hierret.encoders import registered_encoders
    from hierret.encoders.sentence_transformers import MINILM_ALIASES

    if not ENCODER.accepts(v):  # a name nothing loads
        return False
    name = str(v).strip().lower()
    return name in MINILM_ALIASES or name not in {n.lower() for n in registered_encoders()}


#: An encoder whose token vectors can be read (late chunking, MaxSim): a
#: sentence-transformers model, not an engine that embeds whole texts only.
TOKEN_VECTORS = Rule(
    _token_vectors,
    lambda _: (
        "a sentence-transformers model, whose token vectors late chunking and MaxSim read "
        "(all-MiniLM-L6-v2, or a hub id or folder); minilm-int8, minilm-w8a8, e5-small and "
        "wordllama embed whole texts only"
    ),
)
RULES["maxsim_encoder"] = TOKEN_VECTORS


def _first_stage(v: object, _: Mapping[str, object]) -> bool:
    from hierret.profile import RANKERS

    ranker, colon, encoder = str(v).partition(":")
    return bool(colon) and ranker in RANKERS and ENCODER.accepts(encoder)


RULES["first_stages"] = _each(
    Rule(_first_stage, lambda _: "'ranker:encoder', a ranker of hierret.RANKERS and an encoder")
)
#: The rerankers DR-003 builds by name (cross-encoders come by ``cross_encoders``).
RERANKER_NAMES = ("none", "maxsim", "e5-rescore")
RULES["rerankers"] = _each(
    Rule(
        lambda v, _: v in RERANKER_NAMES,
        lambda _: f"one of {', '.join(RERANKER_NAMES)} (cross-encoders: cross_encoders)",
    )
)
RULES["maxsim_reduce"] = Rule(lambda v, _: v in ("mean", "sum"), lambda _: "'mean' or 'sum'")

#: A run's size, smallest first: ``smoke`` (the test suite's seconds), ``class`` (a few
#: minutes on a laptop, for teaching and trying; large enough to show the effects) and
#: ``reference`` (the published record). Each notebook declares what its smaller sizes
#: change (its ``presets``, :func:`check_notebook`).
SIZES = ("smoke", "class", "reference")
RULES["size"] = Rule(lambda v, _: v in SIZES, lambda _: "'smoke', 'class' or 'reference'")
#: Set to ``1``, every notebook runs at size ``smoke`` whatever its parameters say (the
#: test session sets it, so a notebook run under nbval directly is a smoke run too).
SMOKE_ENV = "HIERRET_SMOKE"

#: A size's preset: parameter name to its value at that size, or to a callable of the
#: run's values giving it (a value derived from another parameter).
Preset = Mapping[str, object]


def judged_at(level: str) -> Rule:
    """A ``corpus`` whose questions judge ``level``: DR-001 compares passages and sections,
    which a corpus judged at documents only (BEIR) cannot inform.

    Examples
    --------
    >>> judged_at("passages").problem("corpus", "python-reference",
    ...                               {"corpus": "python-reference", "max_queries": 3})
    """

    def holds(v: object, values: Mapping[str, object]) -> bool:
        bundle = _bundle(_sample_key({**values, "corpus": v}))
        return bundle is None or level in bundle.targets

    def describe(values: Mapping[str, object]) -> str:
        bundle = _bundle(_sample_key(values))
        now = (
            ""
            if bundle is None
            else f" ({values.get('corpus')!r} is judged at {', '.join(bundle.targets)} only)"
        )
        return (
            f"a corpus whose questions judge {level}: quoted evidence (python-reference, "
            "qasper, scifact-sections, or a folder whose questions quote their evidence)" + now
        )

    return Rule(holds, describe)


def rule_problems(values: Mapping[str, object], rules: Mapping[str, Rule]) -> list[str]:
    """Every rule of ``rules`` that a parameter of ``values`` breaks, as messages.

    Examples
    --------
    >>> rule_problems({"max_chars": 600, "overlap_chars": 600, "seed": 0}, RULES)
    ['overlap_chars = 600 is not accepted; accepted: a whole number below max_chars (600)']
    """
    found = (
        rule.problem(name, values[name], values) for name, rule in rules.items() if name in values
    )
    return [p for p in found if p is not None]


def declared_parameters(source: str) -> dict[str, object]:
    """The names a parameters cell assigns, with their default values, in order.

    A default that is not a Python literal is :data:`UNEVALUATED` (its type is
    then not checked). Statements other than assignments to plain names are
    ignored, as papermill ignores them.

    Parameters
    ----------
    source : str
        The source of the cell tagged ``parameters``.

    Returns
    -------
    dict
        Name to default value.

    Examples
    --------
    >>> declared_parameters("k = 10  # depth\\nnames: list = ['a']\\nseed = int('0')")
    {'k': 10, 'names': ['a'], 'seed': <not a literal>}
    """
    declared: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            default = ast.literal_eval(value)
        except ValueError:
            default = UNEVALUATED
        for target in targets:
            if isinstance(target, ast.Name):
                declared[target.id] = default
    return declared


def notebook_parameters(path: str | os.PathLike[str]) -> dict[str, object]:
    """The parameters the cell tagged ``parameters`` of the notebook at ``path`` declares.

    Parameters
    ----------
    path : path-like
        An ``.ipynb`` file.

    Returns
    -------
    dict
        Name to default (:func:`declared_parameters`); empty when no cell is
        tagged ``parameters``.

    Examples
    --------
    >>> import json, tempfile
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["k = 10"]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "nb.ipynb")
    ...     _ = path.write_text(json.dumps({"cells": [cell]}))
    ...     notebook_parameters(path)
    {'k': 10}
    """
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and "parameters" in cell["metadata"].get("tags", []):
            source = cell["source"]
            return declared_parameters(source if isinstance(source, str) else "".join(source))
    return {}


def _kind(values: Iterable[object]) -> object:
    """One default that stands for every value of ``values`` (ints and floats: a float)."""
    values = list(values)
    if not values or any(v is None or isinstance(v, _Unevaluated) for v in values):
        return None
    if all(type(v) is type(values[0]) for v in values):
        return values[0]
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)
    return 0.0 if numeric else None


def _noun(default: object) -> str:
    """The type of ``default`` in words, without an article: ``"list of str"``."""
    if isinstance(default, list | tuple | dict):
        item = _kind(default.values() if isinstance(default, dict) else default)
        outer = "dict" if isinstance(default, dict) else "list"
        return outer if item is None else f"{outer} of {_noun(item)}"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, numbers.Integral):
        return "int"
    if isinstance(default, numbers.Real):
        return "float"
    return type(default).__name__


def _type_name(default: object) -> str:
    """What a value with the type of ``default`` is, in words."""
    noun = _noun(default)
    remark = {"bool": " (True or False)", "float": " (an int will do)"}.get(noun, "")
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}{remark}"


def _fits(value: object, default: object) -> bool:
    """Whether ``value`` has the type of ``default`` (the rules in the module docstring)."""
    if default is None or isinstance(default, _Unevaluated):
        return True
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, numbers.Integral):
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if isinstance(default, numbers.Real):
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if isinstance(default, list | tuple):
        item = _kind(default)
        return isinstance(value, list | tuple) and all(_fits(v, item) for v in value)
    if isinstance(default, dict):
        item = _kind(default.values())
        return isinstance(value, dict) and all(_fits(v, item) for v in value.values())
    return isinstance(value, type(default))


def _as_choices(accepted: Choices | Iterable[object]) -> Choices:
    if isinstance(accepted, Choices):
        return accepted
    values = list(accepted)
    return Choices(lambda: values)


def _is_choice(value: object, default: object, choices: Choices) -> bool:
    """Whether ``value`` is itself a choice (not for a list or dict parameter: its items are)."""
    return not isinstance(default, list | tuple | dict) and choices.accepts(value)


def _choice_problems(name: str, value: object, choices: Choices) -> list[str]:
    if isinstance(value, list | tuple):
        found = (choices.problem(f"{name}[{i}]", item) for i, item in enumerate(value))
        return [p for p in found if p is not None]
    problem = choices.problem(name, value)
    return [] if problem is None else [problem]


def _problems(
    given: Mapping[str, object],
    declared: Mapping[str, object] | None,
    choices: Mapping[str, Choices | Iterable[object]],
    where: str,
    list_hint: str,
) -> list[str]:
    """Every problem with ``given``; ``declared=None`` checks the choices only."""
    known = list(declared) if declared is not None else list(given)
    stray = sorted(set(choices) - set(known))
    if stray:
        raise ValueError(
            f"choices are given for {', '.join(map(repr, stray))}, which "
            f"{where} does not declare: fix the names passed to the check"
        )
    problems = []
    for name, value in given.items():
        if declared is not None and name not in declared:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(
                f"unknown parameter {name!r}{hint}; parameters of {where}: {', '.join(known)}"
            )
            continue
        accepted = _as_choices(choices[name]) if name in choices else None
        default = declared[name] if declared is not None else None
        if accepted is not None and _is_choice(value, default, accepted):
            continue
        if value is None and _takes_none(name):  # the house rule says None means something
            continue
        if not _fits(value, default):
            hint = list_hint.format(name=name) if isinstance(default, list | tuple | dict) else ""
            problems.append(
                f"{name} must be {_type_name(default)}, got {value!r} "
                f"({type(value).__name__}); the default is {default!r}{hint}"
            )
        elif accepted is not None:
            problems.extend(_choice_problems(name, value, accepted))
    return problems


def _takes_none(name: str) -> bool:
    """Whether the house vocabulary gives ``None`` a meaning for ``name`` (``document``:
    the longest), whatever the type of the notebook's default."""
    return name in RULES and RULES[name].takes_none


def _raise(problems: list[str]) -> None:
    if len(problems) == 1:
        raise ParameterError(problems[0])
    if problems:
        raise ParameterError(f"{len(problems)} parameter problems:\n- " + "\n- ".join(problems))


def check_parameters(
    given: Mapping[str, object],
    declared: Mapping[str, object],
    *,
    choices: Mapping[str, Choices | Iterable[object]] | None = None,
    where: str = "this notebook",
    list_hint: str = "",
) -> None:
    """Fail if a given parameter is unknown, of the wrong type, or not one of its choices.

    Parameters
    ----------
    given : mapping
        Parameter name to the value given.
    declared : mapping
        Parameter name to default value, as :func:`declared_parameters` reads them.
    choices : mapping, optional
        Parameter name to its accepted values: a :class:`Choices` or any
        collection. Every name must be declared.
    where : str
        What declares the parameters, for messages.
    list_hint : str
        Added to a message about a list or dict parameter given something
        else: how to give one where the values come from (``{name}`` is
        replaced by the parameter's name).

    Raises
    ------
    ParameterError
        Naming each problem: the parameter, the value and what is accepted.
    ValueError
        ``choices`` names a parameter that is not declared.

    Examples
    --------
    >>> declared = {"corpora": ["scifact"], "smoke": False}
    >>> check_parameters({"corpora": ["scifact"]}, declared, choices={"corpora": CORPUS})
    >>> check_parameters({"corpora": ["scifcat"], "smoke": 1}, declared,
    ...                  choices={"corpora": CORPUS})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hierret.study.params.ParameterError: 2 parameter problems:
    - corpora[0] = 'scifcat' is not accepted (did you mean 'scifact'?); accepted: ...
    - smoke must be a bool (True or False), got 1 (int); the default is False
    """
    _raise(_problems(given, declared, choices or {}, where, list_hint))


def check_notebook(
    namespace: dict[str, object],
    /,
    also: Mapping[str, Rule] | None = None,
    presets: Mapping[str, Preset] | None = None,
    **choices: Choices | Rule | Iterable[object],
) -> RunParameters:
    """Check a notebook's parameters from the cell right after its parameters cell.

    Call it as ``check_notebook(globals(), corpora=CORPUS, encoder=ENCODER)``.
    The kernel's input history (IPython's ``In``) tells what ran before this
    cell: when papermill injected parameters, the cell just before is the
    injected one (its first line is ``# Parameters``) and the one before that
    is the notebook's parameters cell. Then every injected name must be
    declared, and every value must have its default's type and be one of its
    choices. Without injected parameters (a notebook run as it is, or cells run
    by hand) only the choices are checked, on the current values.

    Parameters
    ----------
    namespace : mapping
        The notebook's ``globals()``.
    also : mapping of str to Rule, optional
        Further rules of this notebook, checked with the house vocabulary's
        (:data:`RULES`): a name given choices too (``corpus``: one the loader
        takes, and one whose questions judge passages, :func:`judged_at`).
    presets : mapping of str to mapping, optional
        What each smaller size changes (``{"smoke": {...}, "class": {...}}``):
        for a run whose ``size`` parameter names one of them, each parameter of
        that preset not given to this run is set to the preset's value (a
        callable is called with the run's values: ``lambda p: p["sizes"][:1]``)
        in ``namespace``, before the rules are checked. Parameters given with
        papermill win over the preset; cells run by hand take it whole.
        ``$HIERRET_SMOKE=1`` (:data:`SMOKE_ENV`) makes the run a smoke run.
    **choices : Choices or collection
        Parameter name to its accepted values.

    Returns
    -------
    RunParameters
        The notebook's parameters (those its parameters cell declares, output
        folders left out) as they stand at any later moment: keep it as
        ``PARAMETERS = check_notebook(...)`` and put it in the run's record
        (``identity["parameters"]``), so that
        :func:`hierret.publish.against_published` can name the settings a
        run changed. Cells run by hand out of order give only ``choices``.

    Raises
    ------
    ParameterError
        Naming each problem: the parameter, the value and what is accepted.
    ValueError
        ``namespace`` is not an IPython namespace, or ``choices`` names a
        variable the notebook does not have.

    Examples
    --------
    >>> ns = {"In": ["", "k = 10\\nresults_dir = None", "check_notebook(globals())"],
    ...       "k": 10, "results_dir": None}
    >>> run = check_notebook(ns)
    >>> ns["k"] = 5  # a later cell changes it (a smoke run's smaller sample)
    >>> run
    RunParameters({'k': 5})
    >>> ns = {"In": ["", "k = 10\\nencoder = 'minilm'", "# Parameters\\nk = 5\\nencodr = 'e5'\\n",
    ...              "check_notebook(globals())"], "k": 5, "encoder": "minilm", "encodr": "e5"}
    >>> check_notebook(ns, encoder=ENCODER)
    Traceback (most recent call last):
    ...
    hierret.study.params.ParameterError: unknown parameter 'encodr' (did you mean 'encoder'?); \
parameters of this notebook: k, encoder

    A smoke run of a notebook whose presets say what its smaller sizes change;
    ``seed`` was given, so the preset leaves it:

    >>> cell = "size = 'reference'\\nk = 10\\nseed = 0"
    >>> ns = {"In": ["", cell, "# Parameters\\nsize = 'smoke'\\nseed = 1\\n", "check_notebook()"],
    ...       "size": "smoke", "k": 10, "seed": 1}
    >>> presets = {"smoke": {"k": lambda p: p["k"] // 5, "seed": 7}, "class": {"k": 5}}
    >>> check_notebook(ns, presets=presets)
    RunParameters({'size': 'smoke', 'seed': 1, 'k': 2})
    """
    history = namespace.get("In")
    if not isinstance(history, list) or not history:
        raise ValueError(
            "check_notebook reads the kernel's input history: call it in a "
            "notebook cell as check_notebook(globals(), ...)"
        )
    before = [str(source) for source in history[:-1]]  # the last input is this cell
    if len(before) >= 2 and before[-1].lstrip().startswith(_INJECTED_HEADER):
        in_cell = declared_parameters(before[-2])
        declared: dict[str, object] | None = in_cell
        names = [*declared_parameters(before[-1]), *in_cell, *choices]
    else:
        declared, names = None, [*_cell_names(before[-1:]), *choices]
    missing = [name for name in names if name not in namespace]
    if missing:
        raise ValueError(
            f"the notebook has no variable {', '.join(map(repr, missing))}: "
            "fix the names passed to check_notebook"
        )
    given = {name: namespace[name] for name in dict.fromkeys(names)}
    rules = {n: r for n, r in choices.items() if isinstance(r, Rule)} | dict(also or {})
    listed = {n: c for n, c in choices.items() if not isinstance(c, Rule)}
    problems = _problems(given, declared, listed, "this notebook", _PAPERMILL_HINT)
    if not problems and "size" in namespace:
        _resize(
            namespace, presets or {}, set(declared_parameters(before[-1])) if declared else set()
        )
    named = {p.split(" ", 1)[0].split("[", 1)[0] for p in problems}  # already refused
    values = {  # what the rules read: theirs, and the values they refer to (a corpus)
        n: namespace[n] for n in {*RULES, *rules, *given} if n in namespace and n not in named
    }
    _raise(problems + rule_problems(values, {**RULES, **rules}))  # what they mean, together
    return RunParameters([n for n in dict.fromkeys(names) if n not in OUTPUT_FOLDERS], namespace)


def _resize(namespace: dict[str, object], presets: Mapping[str, Preset], given: set[str]) -> None:
    """Set the run's size (``$HIERRET_SMOKE``), then its preset's parameters not ``given``."""
    if os.environ.get(SMOKE_ENV) == "1" and namespace["size"] in SIZES:  # a bad one: refused
        namespace["size"] = "smoke"
    stray = sorted(set(presets) - set(SIZES[:-1]))
    if stray:
        raise ValueError(f"presets for {stray}: a preset is for a smaller size, {SIZES[:-1]}")
    preset = presets.get(str(namespace["size"]), {})
    unknown = sorted(set(preset) - set(namespace))
    if unknown:
        raise ValueError(f"the preset sets {unknown}, which the notebook does not have")
    values = dict(namespace)  # every callable reads the values as given
    for name, value in preset.items():
        if name not in given:
            namespace[name] = value(values) if callable(value) else value


class RunParameters(Mapping[str, object]):
    """A notebook's parameters, read from its namespace when asked (:func:`check_notebook`).

    A view, not a copy: a cell that narrows a parameter after the check (a
    smoke run's sample) shows in the record as it ran. A record writes it as
    a plain mapping (:func:`hierret.publish.report.as_json`).

    Examples
    --------
    >>> ns = {"k": 10, "seed": 0}
    >>> view = RunParameters(["k"], ns)
    >>> ns["k"] = 5
    >>> dict(view), len(view)
    ({'k': 5}, 1)
    """

    def __init__(self, names: Iterable[str], namespace: Mapping[str, object]) -> None:
        self._names = tuple(names)
        self._namespace = namespace

    def __getitem__(self, name: str) -> object:
        if name not in self._names:
            raise KeyError(name)
        return self._namespace[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"RunParameters({dict(self)!r})"


#: Parameters that say where a run writes, not what it computes (no record holds them).
OUTPUT_FOLDERS = frozenset({"figures_dir", "results_dir"})


def _cell_names(sources: list[str]) -> list[str]:
    """The names a cell of assignments declares; none for a cell that is anything else."""
    try:
        tree = ast.parse(sources[0]) if sources else None
    except SyntaxError:
        return []
    if tree is None or not all(isinstance(n, ast.Assign | ast.AnnAssign) for n in tree.body):
        return []
    return list(declared_parameters(sources[0]))
