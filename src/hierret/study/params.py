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

This module reads and checks a notebook's parameters; the kinds of rule are
:mod:`hierret.study.rules`', what each parameter name means (:data:`RULES`) is
:mod:`hierret.study.vocabulary`', and the run sizes with their presets are
:mod:`hierret.study.sizes`'. Every public name of the first two is listed here.

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
import json
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hierret.study.rules import Choices, Rule, among, at_least, below, between
from hierret.study.sizes import PRESETS, SIZES, SMOKE_ENV, Preset, resize
from hierret.study.vocabulary import (
    BEIR,
    CORPUS,
    ENCODER,
    RERANKER_NAMES,
    RULES,
    TOKEN_VECTORS,
    judged_at,
)

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

__all__ = [
    "BEIR",
    "CORPUS",
    "ENCODER",
    "NOTEBOOK_ENV",
    "RERANKER_NAMES",
    "RULES",
    "SIZES",
    "SMOKE_ENV",
    "TOKEN_VECTORS",
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
    "judged_at",
    "notebook_parameters",
    "rule_problems",
]


# The first line of the cell papermill injects after the parameters cell.
_INJECTED_HEADER = "# Parameters"
#: The path of the notebook file a kernel runs, set by the test session's nbval runner
#: (``docs/execute.py --nbval``) before the kernel starts: nbval's kernels keep no input
#: history (IPython's ``In`` holds nothing), so :func:`check_notebook` reads the
#: parameters cell and papermill's injected cell from the file instead.
NOTEBOOK_ENV = "HIERRET_NOTEBOOK"
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
    presets: Mapping[str, Preset] | str | None = None,
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
        A notebook's name (``"05_dr004_hierarchy"``) takes its presets from
        :data:`~hierret.study.sizes.PRESETS`, and the result can then show the
        notebook's run times (:meth:`RunParameters.times`).
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
        ``namespace`` is not an IPython namespace, ``choices`` names a
        variable the notebook does not have, or ``presets`` names a notebook
        :data:`~hierret.study.sizes.PRESETS` does not hold.

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
    notebook = presets if isinstance(presets, str) else None
    if isinstance(presets, str):
        if presets not in PRESETS:
            raise ValueError(
                f"no presets for a notebook {presets!r}: give the notebook's file name "
                f"without .ipynb, one of {', '.join(PRESETS)}"
            )
        presets = PRESETS[presets]
    history = namespace.get("In")
    if not isinstance(history, list) or not history:
        raise ValueError(
            "check_notebook reads the kernel's input history: call it in a "
            "notebook cell as check_notebook(globals(), ...)"
        )
    before = [str(source) for source in history[:-1]]  # the last input is this cell
    if not before and os.environ.get(NOTEBOOK_ENV):  # a kernel that keeps no history
        before = _parameter_cells(os.environ[NOTEBOOK_ENV])
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
        resize(
            namespace, presets or {}, set(declared_parameters(before[-1])) if declared else set()
        )
    named = {p.split(" ", 1)[0].split("[", 1)[0] for p in problems}  # already refused
    values = {  # what the rules read: theirs, and the values they refer to (a corpus)
        n: namespace[n] for n in {*RULES, *rules, *given} if n in namespace and n not in named
    }
    _raise(problems + rule_problems(values, {**RULES, **rules}))  # what they mean, together
    kept = [n for n in dict.fromkeys(names) if n not in OUTPUT_FOLDERS]
    return RunParameters(kept, namespace, notebook=notebook, presets=presets)


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

    def __init__(
        self,
        names: Iterable[str],
        namespace: Mapping[str, object],
        *,
        notebook: str | None = None,
        presets: Mapping[str, Preset] | None = None,
    ) -> None:
        self._names = tuple(names)
        self._namespace = namespace
        #: The notebook these are the parameters of, when :func:`check_notebook` was
        #: given its name, and what its smaller sizes change.
        self.notebook, self.presets = notebook, presets

    def times(self) -> Styler:
        """The notebook's measured run time at each size, as its head shows them
        (:func:`hierret.publish.timing.run_times`, :func:`hierret.publish.tables.styled`).

        Raises
        ------
        ValueError
            :func:`check_notebook` was not given the notebook's name (``presets=``).

        Examples
        --------
        >>> RunParameters([], {}).times()
        Traceback (most recent call last):
        ...
        ValueError: these parameters do not name their notebook: call \
check_notebook(globals(), presets="<notebook file name>", ...)
        """
        from hierret.publish.tables import styled
        from hierret.publish.timing import run_times

        return styled(run_times(self._named(), self.presets), "Run sizes and their measured times")

    def exercises(self) -> Styler:
        """The notebook's exercises, what each changes and its measured time, as the
        cell under them shows it (:func:`hierret.publish.timing.exercise_table`).

        Raises
        ------
        ValueError
            :func:`check_notebook` was not given the notebook's name (``presets=``).

        Examples
        --------
        >>> RunParameters([], {}).exercises()
        Traceback (most recent call last):
        ...
        ValueError: these parameters do not name their notebook: call \
check_notebook(globals(), presets="<notebook file name>", ...)
        """
        from hierret.publish.tables import styled
        from hierret.publish.timing import exercise_table

        caption = "Exercises and their measured times"
        return styled(exercise_table(self._named()), caption)

    def _named(self) -> str:
        if self.notebook is None:
            raise ValueError(
                "these parameters do not name their notebook: call "
                'check_notebook(globals(), presets="<notebook file name>", ...)'
            )
        return self.notebook

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


def _parameter_cells(path: str) -> list[str]:
    """The sources of a notebook file's parameters cell and, when papermill injected one
    after it, of the injected cell: what the input history holds before the checking cell.

    Examples
    --------
    >>> import json, tempfile
    >>> cells = [{"cell_type": "code", "metadata": {"tags": tags}, "source": src}
    ...          for tags, src in ((["parameters"], "k = 10"),
    ...                            (["injected-parameters"], "# Parameters\\nk = 5"))]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as f:
    ...     json.dump({"cells": cells}, f)
    >>> _parameter_cells(f.name)
    ['k = 10', '# Parameters\\nk = 5']
    """
    cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    code = [c for c in cells if c.get("cell_type") == "code"]
    for i, cell in enumerate(code):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            found = code[i : i + 2]
            if len(found) == 2 and "injected-parameters" not in found[1]["metadata"].get(
                "tags", []
            ):
                found = found[:1]
            return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                    for c in found]  # fmt: skip
    return []


def _cell_names(sources: list[str]) -> list[str]:
    """The names a cell of assignments declares; none for a cell that is anything else."""
    try:
        tree = ast.parse(sources[0]) if sources else None
    except SyntaxError:
        return []
    if tree is None or not all(isinstance(n, ast.Assign | ast.AnnAssign) for n in tree.body):
        return []
    return list(declared_parameters(sources[0]))
