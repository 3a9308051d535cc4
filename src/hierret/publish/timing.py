"""Where a run's time goes, shown: a timing record's values, its table and its figure.

The stage clock itself is the core's (:mod:`hierret._clock`): the package times
its own steps and counts the texts each encoder embedded; this module turns the
timings of several notebooks into a result record's values
(:func:`record_values`) and renders such a record (:func:`table`,
:func:`figure`). The clock's recorder and reader are re-exported here for the
scripts that run notebooks and time them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hierret._clock import STAGES, TIMING_ENV, Timings, read, recording

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "BUSIER",
    "EXERCISES_RECORD",
    "SIZE_RECORDS",
    "STAGES",
    "TIMING_ENV",
    "Timings",
    "busier_than_measured",
    "exercise_table",
    "exercise_times",
    "exercises_of",
    "figure",
    "read",
    "record_name",
    "record_values",
    "recording",
    "run_times",
    "table",
]


def _stage_order(name: str) -> tuple[int, str]:
    head = name.split(" ", 1)[0]
    return (STAGES.index(head) if head in STAGES else len(STAGES), name)


def _colour(stage: str) -> Any:
    """One colour per stage, the same in every figure: tab20's dark hues, then its
    light ones; ``other`` (the unmeasured rest) light grey."""
    import matplotlib.pyplot as plt

    if stage not in STAGES:
        return "0.85"
    i = STAGES.index(stage)
    return plt.get_cmap("tab20")(2 * i if i < 10 else 2 * (i - 10) + 1)


def record_values(
    runs: Mapping[str, tuple[float, Timings]],
) -> tuple[dict[str, int | float], dict[str, Any]]:
    """A timing record's values and layout, from each notebook's wall time and timings.

    Parameters
    ----------
    runs : mapping of str to (float, Timings)
        Notebook name to its wall seconds and what its kernel recorded.

    Returns
    -------
    values : dict
        By :func:`hierret.publish.record.key`: ``{notebook}_wall_s``, ``{notebook}_{stage}_s``
        for each stage and ``other`` (the wall time no stage claims),
        ``{notebook}_{encoder}_embedded`` and ``_cached``, and the same summed
        over notebooks under ``all`` (whose wall time is also given as
        ``all_wall_min`` and ``all_wall_h``, for prose).
    layout : dict
        ``notebooks``, and for each notebook its ``stages`` and ``encoders``,
        in order: what :func:`table` reads the values by (put it in the
        record's identity).

    Examples
    --------
    >>> t = Timings({"rank": 2.0, "embed m": 1.0}, {"m": 4}, {"m": 6})
    >>> values, layout = record_values({"02_dr001": (5.0, t)})
    >>> values["02_dr001_other_s"], values["all_m_embedded"], layout["stages"]["02_dr001"]
    (2.0, 4, ['embed m', 'rank', 'other'])
    """
    from hierret.publish.record import key

    values: dict[str, int | float] = {}
    layout: dict[str, Any] = {"notebooks": list(runs), "stages": {}, "encoders": {}}
    total = Timings()
    wall = 0.0
    for nb, (seconds, timings) in runs.items():
        stages = sorted(timings.seconds, key=_stage_order)
        other = max(seconds - sum(timings.seconds.values()), 0.0)
        values[key(nb, "wall", "s")] = seconds
        for name in stages:
            values[key(nb, name, "s")] = timings.seconds[name]
            total.seconds[name] = total.seconds.get(name, 0.0) + timings.seconds[name]
        values[key(nb, "other", "s")] = other
        total.seconds["other"] = total.seconds.get("other", 0.0) + other
        encoders = sorted(set(timings.embedded) | set(timings.cached))
        for enc in encoders:
            for what, counts, summed in (
                ("embedded", timings.embedded, total.embedded),
                ("cached", timings.cached, total.cached),
            ):
                values[key(nb, enc, what)] = counts.get(enc, 0)
                summed[enc] = summed.get(enc, 0) + counts.get(enc, 0)
        layout["stages"][nb], layout["encoders"][nb] = [*stages, "other"], encoders
        wall += seconds
    values[key("all", "wall", "s")] = wall
    values[key("all", "wall", "min")], values[key("all", "wall", "h")] = wall / 60, wall / 3600
    for name, seconds in total.seconds.items():
        values[key("all", name, "s")] = seconds
    for enc in total.embedded:
        values[key("all", enc, "embedded")] = total.embedded[enc]
        values[key("all", enc, "cached")] = total.cached[enc]
    return values, layout


def table(record: Mapping[str, Any]) -> pd.DataFrame:
    """A timing record as a table: one row per notebook and stage.

    Parameters
    ----------
    record : mapping
        A record written by ``docs/execute.py`` (``values``, and the layout of
        :func:`record_values` under ``identity``).

    Returns
    -------
    DataFrame
        Indexed by notebook and stage (``embed <model>`` rows carry that
        encoder's ``embedded`` and ``cached`` counts, the ``total`` row the
        notebook's wall time), with columns ``seconds``, ``share`` (of the
        notebook's wall time), ``embedded`` and ``cached``.

    Examples
    --------
    >>> values, layout = record_values({"nb": (4.0, Timings({"embed m": 1.0}, {"m": 2},
    ...                                                      {"m": 8}))})
    >>> t = table({"values": values, "identity": layout})
    >>> t.index.tolist(), t["seconds"].tolist(), t["cached"].tolist()[0]
    ([('nb', 'embed m'), ('nb', 'other'), ('nb', 'total')], [1.0, 3.0, 4.0], 8.0)
    """
    import pandas as pd

    from hierret.publish.record import key

    values, layout = record["values"], record["identity"]
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for nb in layout["notebooks"]:
        wall = values[key(nb, "wall", "s")]
        for name in layout["stages"][nb]:
            seconds = values[key(nb, name, "s")]
            row = {"seconds": seconds, "share": seconds / wall if wall else float("nan")}
            enc = name.split(" ", 1)[1] if name.startswith("embed ") else None
            if enc in layout["encoders"][nb]:
                row |= {
                    "embedded": values[key(nb, enc, "embedded")],
                    "cached": values[key(nb, enc, "cached")],
                }
            rows[(nb, name)] = row
        rows[(nb, "total")] = {"seconds": wall, "share": 1.0}
    frame = pd.DataFrame.from_dict(
        rows, orient="index", columns=["seconds", "share", "embedded", "cached"]
    )
    frame.index = pd.MultiIndex.from_tuples(list(rows), names=["notebook", "stage"])
    return frame


def figure(record: Mapping[str, Any]) -> Figure:
    """Each notebook's wall time as a bar cut into its stages (every encoder's
    embedding one ``embed`` part).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> values, layout = record_values({"nb": (3.0, Timings({"rank": 1.0, "embed m": 1.0}))})
    >>> fig = figure({"values": values, "identity": layout})
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['embed', 'rank', 'other']
    """
    import matplotlib.pyplot as plt

    from hierret.publish.figures import WIDTH

    frame = table(record)
    frame = frame[frame.index.get_level_values("stage") != "total"]
    part = [s.split(" ", 1)[0] for s in frame.index.get_level_values("stage")]
    summed = frame["seconds"].groupby([frame.index.get_level_values("notebook"), part]).sum()
    wide = summed.unstack(fill_value=0)
    parts: list[str] = sorted((str(c) for c in wide.columns), key=_stage_order)
    wide = wide[parts]
    wide = wide.loc[list(dict.fromkeys(frame.index.get_level_values("notebook")))]
    fig, ax = plt.subplots(figsize=(WIDTH, 1.6 + 0.45 * len(wide)), layout="constrained")
    left = [0.0] * len(wide)
    for name in wide.columns:
        ax.barh(list(wide.index), wide[name], left=left, label=name, color=_colour(name))
        left = [a + b for a, b in zip(left, wide[name], strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("wall seconds")
    fig.legend(loc="outside lower center", ncols=min(len(wide.columns), 6), frameon=False)
    return fig


#: The timing records of each run size, by file in ``data/results``: a run of every
#: notebook at that size, written by ``docs/execute.py`` (``nox -s reproduce`` for the
#: reference size, ``nox -s sizes -- --record`` for the class size and its exercises,
#: ``-- --size smoke --record`` for the smoke size). ``*-cold`` started with an empty
#: vector cache (every text embedded); the other is the latest run, which may have found
#: its vectors cached (its ``cache_bytes_before`` says).
SIZE_RECORDS = {
    "smoke": ("timing-smoke-cold.json", "timing-smoke.json"),
    "class": ("timing-class-cold.json", "timing-class.json"),
    "reference": ("timing-cold.json", "timing.json"),
}
#: The exercises at the end of each notebook, each run at class size after a class-size
#: run of its notebook (``docs/exercises.py``): ``<notebook>_exercise_<n>_wall_s``.
EXERCISES_RECORD = "timing-exercises.json"


def record_name(size: str, cold: bool) -> str:
    """The timing record a run of every notebook at ``size`` writes (``timing_class``).

    Examples
    --------
    >>> record_name("reference", cold=True), record_name("class", cold=False)
    ('timing_cold', 'timing_class')
    """
    return "_".join(
        ["timing", *([size] if size != "reference" else []), *(["cold"] if cold else [])]
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _preset_text(preset: Mapping[str, object]) -> str:
    """What a size changes, in words: ``max_queries 10, sizes: the first only``
    (a computed value says what it does as its ``str``)."""
    if not preset:
        return "the reference parameters"
    return ", ".join(
        f"{name}: {value}" if callable(value) else f"{name} {value!r}"
        for name, value in preset.items()
    )


def run_times(
    notebook: str,
    presets: Mapping[str, Mapping[str, object]] | None = None,
    *,
    results: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """A notebook's measured run time at each size, for the head of the notebook.

    Parameters
    ----------
    notebook : str
        The notebook's file name without ``.ipynb`` (``"02_dr001_chunking"``).
    presets : mapping, optional
        What each smaller size changes (the notebook's ``PRESETS``), shown beside
        its times.
    results : path, optional
        The folder of the timing records (:data:`SIZE_RECORDS`); by default
        ``data/results`` of the checkout (:func:`hierret.publish.against.published_files`).

    Returns
    -------
    pandas.DataFrame
        One row per size: what it changes, the wall time of a first run (empty
        vector cache) and of a run that found the vectors cached, and the
        machine they were measured on with its load (the 1-minute load
        average at the run's start → end). Times are the measuring machine's
        facts: another machine takes other times.

    Notes
    -----
    In a notebook it also shows a warning above the table when this machine
    is busier than the one that measured the times (:func:`busier_than_measured`).
    The exercises' times are :func:`exercise_table`'s, under the exercises.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = run_times("02_dr001_chunking", {"smoke": {"max_queries": 30}}, results=tmp)
    >>> table.loc["smoke"].tolist()
    ['max_queries 30', 'not measured', 'not measured', '']
    """
    import pandas as pd

    from hierret.publish.against import published_files

    if results is None:
        found = published_files()
        folder = found[0] if found is not None else None
    else:
        folder = Path(results)
    rows: dict[str, dict[str, str]] = {}
    shown: list[Mapping[str, Any]] = []
    for size, files in SIZE_RECORDS.items():
        times: list[float | None] = []
        runs: list[Mapping[str, Any]] = []
        for file in files:
            record = _read_record(folder / file) if folder is not None else None
            wall = (record or {}).get("values", {}).get(f"{notebook}_wall_s")
            cold = record is not None and record["identity"].get("cache_bytes_before") == 0
            fits = cold if file == files[0] else not cold  # a cold latest run is no rerun
            times.append(wall if record is not None and fits else None)
            if record is not None and wall is not None and fits:
                shown.append(record)
                runs.append(record)
        rows[size] = {
            "what it changes": "" if presets is None else _preset_text(presets.get(size, {})),
            "first run (empty cache)": _duration(times[0]),
            "vectors cached": _duration(times[1]),
            "measured on": _machine_text(*runs) if runs else "",
        }
    _say(busier_than_measured(shown))
    return pd.DataFrame.from_dict(rows, orient="index")


def _say(warning: str | None) -> None:
    """Show a warning above a notebook's table of times: in a notebook a person runs.

    Nothing outside a notebook, nor in a timed run (``$HIERRET_TIMING``: the
    site build, whose pages are read on other machines than the one building).
    """
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display
    except ImportError:  # pragma: no cover - IPython comes with the notebooks extra
        return
    if warning and get_ipython() is not None and not os.environ.get(TIMING_ENV):
        display(Markdown(f"**{warning}**"))  # type: ignore[no-untyped-call]


def exercise_times(notebook: str, record: Mapping[str, Any] | None) -> dict[int, str]:
    """Each exercise's measured time in words, by number, from the exercises record.

    Examples
    --------
    >>> exercise_times("05_dr004", {"values": {"05_dr004_exercise_2_wall_s": 48.3}})
    {2: '48 s'}
    """
    prefix, values = f"{notebook}_exercise_", (record or {}).get("values", {})
    return {
        int(k[len(prefix) : -len("_wall_s")]): _duration(v)
        for k, v in values.items()
        if k.startswith(prefix) and k.endswith("_wall_s")
    }


def _exercise_cell(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A notebook's cell of exercises (the cell whose metadata lists ``exercises``);
    ``None`` for a notebook not found or without one."""
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return None
    return next((dict(c) for c in cells if "exercises" in c.get("metadata", {})), None)


def exercises_of(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The exercises a notebook lists: the parameters each changes, from the metadata
    (``exercises``) of its cell of exercises; none for a notebook not found.

    Examples
    --------
    >>> exercises_of("no-such-notebook.ipynb")
    []
    """
    cell = _exercise_cell(path)
    return [] if cell is None else list(cell["metadata"]["exercises"])


#: A numbered exercise's bold title in the exercises' Markdown: ``1. **Smaller passages.**``.
_TITLE = re.compile(r"^(\d+)\. \*\*(.+?)\.?\*\*", re.MULTILINE)


def exercise_table(
    notebook: str,
    *,
    results: str | os.PathLike[str] | None = None,
    source: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """A notebook's exercises, what each changes and its measured time: the table
    under the exercises.

    A code cell's output, so that the time reads the same on the site, in
    JupyterLab and in papermill's output (Markdown there is not MyST: a glued
    value would show as its role).

    Parameters
    ----------
    notebook : str
        The notebook's file name without ``.ipynb`` (``"05_dr004_hierarchy"``).
    results : path, optional
        The folder of the exercises' timing record (:data:`EXERCISES_RECORD`);
        by default ``data/results`` of the checkout
        (:func:`hierret.publish.against.published_files`).
    source : path, optional
        The notebook file whose exercises are listed (:func:`exercises_of`);
        by default ``notebooks/{notebook}.ipynb`` beside ``results``' checkout.

    Returns
    -------
    pandas.DataFrame
        One row per exercise, indexed by its number and title (``1. Smaller
        passages``), with the parameters it changes, its wall time at class
        size after a class-size run of the notebook (``docs/sizes.py``), or
        ``not measured yet``, and the machine that measured it with its load
        (the same words as :func:`run_times`). Times are the measuring
        machine's facts: another machine takes other times.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> cell = {"cell_type": "markdown", "source": "1. **Fewer.** Predict.\\n",
    ...         "metadata": {"exercises": [{"k": 5}, {"ranker": "bm25"}]}}
    >>> record = {"values": {"nb_exercise_1_wall_s": 27.0}, "identity": {"cpus": 2},
    ...           "machine": {"cpu": "Xeon"}}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "nb.ipynb").write_text(json.dumps({"cells": [cell]}))
    ...     _ = Path(tmp, EXERCISES_RECORD).write_text(json.dumps(record))
    ...     table = exercise_table("nb", results=tmp, source=Path(tmp, "nb.ipynb"))
    >>> table.index.tolist()
    ['1. Fewer', '2']
    >>> table.loc["1. Fewer"].tolist()
    ['k 5', '27 s', '2 × Xeon, load not recorded']
    >>> table.loc["2"].tolist()
    ["ranker 'bm25'", 'not measured yet', '']
    """
    import pandas as pd

    from hierret.publish.against import published_files

    if results is None:
        found = published_files()
        folder = found[0] if found is not None else None
    else:
        folder = Path(results)
    if source is None and folder is not None:
        source = folder.parent.parent / "notebooks" / f"{notebook}.ipynb"
    cell = _exercise_cell(source) if source is not None else None
    listed = [] if cell is None else list(cell["metadata"]["exercises"])
    text = "" if cell is None else _text(cell.get("source", ""))
    titles = {int(n): title for n, title in _TITLE.findall(text)}
    record = _read_record(folder / EXERCISES_RECORD) if folder is not None else None
    times = exercise_times(notebook, record)
    rows: dict[str, dict[str, str]] = {}
    for n, changes in enumerate(listed, 1):
        said = times.get(n)
        name = f"{n}. {titles[n]}" if n in titles else str(n)
        rows[name] = {
            "what it changes": _preset_text(changes),
            "time at class size": said or "not measured yet",
            "measured on": _machine_text(record or {}) if said else "",
        }
    columns = ["what it changes", "time at class size", "measured on"]
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    return frame.rename_axis("exercise")


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def _machine_text(*records: Mapping[str, Any]) -> str:
    """The machine the records measured on and its load: ``2 × Xeon, load 1.2 → 2.2``.

    The load is the 1-minute load average when each run started and when it
    ended (``docs/execute.py`` records both), one pair per record (``;``); a
    record without them says so.

    Examples
    --------
    >>> r = {"identity": {"cpus": 2, "load_average_before": [1.23, 1, 1],
    ...                   "load_average_after": [2.2, 2, 2]}, "machine": {"cpu": "Xeon"}}
    >>> _machine_text(r), _machine_text(r, {"machine": {"cpu": "Xeon"}})
    ('2 × Xeon, load 1.2 → 2.2', '2 × Xeon, load 1.2 → 2.2; not recorded')
    >>> _machine_text({"machine": {"cpu": "Xeon"}}, {"machine": {"cpu": "Xeon"}})
    'Xeon, load not recorded'
    """
    cpus = next((r["identity"]["cpus"] for r in records if r.get("identity", {}).get("cpus")), 0)
    cpu = next((r["machine"]["cpu"] for r in records if r.get("machine", {}).get("cpu")), "")
    text = f"{cpus} × {cpu}".strip(" ×") if cpus else str(cpu)
    said = "; ".join(" → ".join(f"{x:.1f}" for x in _loads(r)) or "not recorded" for r in records)
    if not any(_loads(r) for r in records):
        said = "not recorded"
    return f"{text or 'a machine not recorded'}, load {said}"


def _loads(record: Mapping[str, Any]) -> list[float]:
    """The 1-minute load averages a record states (start, end), as numbers."""
    ident = record.get("identity", {})
    out = []
    for k in ("load_average_before", "load_average_after"):
        v = ident.get(k)
        if isinstance(v, list | tuple) and v and isinstance(v[0], int | float):
            out.append(float(v[0]))
    return out


#: How much busier (load per CPU) this machine may be than the one that measured a
#: notebook's times before its header says the times will not hold here.
BUSIER = 0.5


def _cpus_here() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def busier_than_measured(
    records: list[Mapping[str, Any]],
    *,
    load: float | None = None,
    cpus: int | None = None,
) -> str | None:
    """A warning when this machine is busier than the one that measured ``records``.

    Parameters
    ----------
    records : list of mapping
        The timing records whose times a page prints (their ``identity``
        holds ``cpus`` and the load averages of the run).
    load, cpus : optional
        This machine's 1-minute load average and CPU count (default:
        :func:`os.getloadavg` and the CPUs this process may use).

    Returns
    -------
    str or None
        ``None`` when this machine's load per CPU is at most :data:`BUSIER`
        above the highest the records measured at, or is under one (every
        process has a CPU to itself), or no record states its load;
        else one sentence with both loads.

    Examples
    --------
    >>> measured = [{"identity": {"cpus": 2, "load_average_before": [1.2, 1, 1],
    ...                           "load_average_after": [2.2, 2, 2]}}]
    >>> busier_than_measured(measured, load=1.5, cpus=2) is None
    True
    >>> print(busier_than_measured(measured, load=10.4, cpus=2))
    This machine is busier than the one that measured these times: load 10.4 on 2 CPUs \
now (5.2 per CPU), against at most 2.2 on 2 CPUs (1.1 per CPU) when they were \
measured. Expect every run to take longer than the times printed here, several \
times longer when each CPU is shared by several processes.
    """
    measured = [
        (max(_loads(r)), int(r.get("identity", {}).get("cpus") or 1)) for r in records if _loads(r)
    ]
    if not measured:
        return None
    then, then_cpus = max(measured, key=lambda m: m[0] / m[1])
    if load is None:
        load = os.getloadavg()[0]
    cpus = cpus or _cpus_here()
    now, before = load / cpus, then / then_cpus
    if now <= 1.0 or now <= before + BUSIER:
        return None
    return (
        f"This machine is busier than the one that measured these times: load {load:.1f} "
        f"on {cpus} CPUs now ({now:.1f} per CPU), against at most {then:.1f} on {then_cpus} "
        f"CPUs ({before:.1f} per CPU) when they were measured. Expect every run to take "
        "longer than the times printed here, several times longer when each CPU is shared "
        "by several processes."
    )
