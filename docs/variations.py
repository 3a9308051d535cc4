"""The variation matrix: every notebook run with one parameter changed, on smoke sizes.

    python docs/variations.py --out build/variations [--kernel hierret] [--only 05_dr004_hierarchy]

For each notebook and each parameter it declares that the house vocabulary
gives a meaning (:data:`VARIATIONS`), the notebook is run through
``docs/execute.py`` on smoke parameters with that one parameter changed to an
accepted value, and once with it changed to a value that must be refused.
Each trial ends one of three ways:

* **ran**: the parameter check accepted the value and every cell ran;
* **refused up front**: ``execute.py`` refused it before any kernel started,
  with a message naming the parameter (what a refused value must do);
* **failed**: the check accepted the value and a cell then raised, which is
  a bug: the check must refuse what the notebook cannot run.

The matrix is written to ``--out`` as ``variations.json`` and
``variations.md`` (notebook × parameter: the value, the outcome, seconds or the
message). The exit status is 1 when an accepted value failed or a value meant
to be refused was not. The test suite holds the refusals (``tests/study/test_params.py``);
the executed runs take about half an hour on two cores, so they are a nox
session of their own: ``nox -s variations``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "data/examples/handbook"

#: One change per parameter that every notebook declaring it must run with, and one it
#: must refuse up front (before any kernel starts) naming the parameter.
VARIATIONS: dict[str, tuple[object, object]] = {
    "max_chars": (600, 0),
    "overlap_chars": (60, 5000),
    "max_queries": (5, 0),
    "max_docs": (30, -1),
    "seed": (7, -1),
    "confidence": (0.9, 1.0),
    "n_resamples": (999, 0),
    "rrf_k": (10, -1),
    "pool": (20, 0),
    "candidates": (10, 0),
    "k": (20, 0),
    "folds": (3, 1),
    "min_keep": (1, -1),
    "top_k": (5, 0),
    "latency_queries": (3, 0),
    "throughput_texts": (8, 0),
    "variation_texts": (4, 0),
    "cost_passages": (8, 0),
    "merge_candidates": (10, 0),
    "overlap_tokens": (32, -1),
    "section_weight": (0.3, 1.5),
    "sweep_weights": ([0.0, 0.5, 1.0], [0.5, 2.0]),
    "thresholds": ([0.5], [-0.1]),
    "sizes": ([600, 1200], []),
    "chunk_chars": ([600], [0]),
    "k_values": ([10], []),
    "corpora": (["python-reference"], []),
    "encoders": (["all-MiniLM-L6-v2"], []),
    "encoder": ("wordllama", "no-such-encoder"),
    "corpus": ("scifact-sections", "no-such-corpus"),
    "beir": (None, "no-such-beir"),
    "baseline": ("minilm-int8", "no-such-encoder"),
    "document": (None, "no-such-document"),
    "query_prefix": (False, "yes"),
    "sampled": ({"e5-small": 500}, {"e5-small": 0}),
    "first_stages": (["dense:all-MiniLM-L6-v2"], ["dense:no-such-encoder"]),
    "rerankers": (["none", "maxsim"], ["reorder"]),
    "maxsim_encoder": ("sentence-transformers/all-MiniLM-L6-v2", "wordllama"),
    "maxsim_reduce": ("sum", "max"),
    "rescore_encoder": ("minilm-int8", "no-such-encoder"),
    "min_score": ({"maxsim": 0.6, "e5-rescore": 0.8, "cross-encoder": 0.5}, {"maxsim": "high"}),
    "qasper_file": ("qasper-train-sample10-v0.3.json", 10),
    "size": ("class", "large"),
}

#: A notebook's own accepted value where the common one is refused by its rules: DR-005's
#: late chunking reads token vectors, which only a sentence-transformers model gives.
GOOD_FOR: dict[str, dict[str, object]] = {
    "06_dr005_beyond": {"encoder": "sentence-transformers/all-MiniLM-L6-v2"},
}

#: A parameter tied to another: changing the key changes these too where a notebook
#: declares them (01_structure's ``document`` is a document of its ``corpus`` as
#: sampled: another sample may leave the default one out, and the check says so).
COMPANIONS: dict[str, dict[str, object]] = {
    "corpus": {"document": None},
    "max_docs": {"document": None},
}

#: Changes beyond one value per name: a user's own folder of documents, and the
#: changes the first users tried (one encoder that is not the baseline: refused).
EXTRA: dict[str, list[tuple[dict[str, object], bool]]] = {
    "01_structure": [({"corpus": EXAMPLE, "document": None}, True)],
    "02_dr001_chunking": [({"corpus": EXAMPLE}, True), ({"corpus": "scifact"}, False)],
    "03_dr002_embedders": [({"encoders": ["wordllama"]}, False)],
    "05_dr004_hierarchy": [({"corpora": [EXAMPLE], "weight_sweep_corpus": EXAMPLE}, True)],
    "06_dr005_beyond": [({"corpora": [EXAMPLE]}, True), ({"encoder": "wordllama"}, False)],
}


def _execute_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("execute", ROOT / "docs" / "execute.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trials(path: Path, declared: dict[str, object]) -> list[tuple[dict[str, object], bool]]:
    """``(changes, must_run)`` for one notebook: a good and a bad value per name."""
    out = []
    for name, (good, bad) in VARIATIONS.items():
        if name not in declared:
            continue
        if isinstance(declared[name], dict) and not isinstance(good, dict):  # per corpus
            good, bad = (dict.fromkeys(declared[name], v) for v in (good, bad))  # type: ignore[arg-type]
        good = GOOD_FOR.get(path.stem, {}).get(name, good)
        tied = {k: v for k, v in COMPANIONS.get(name, {}).items() if k in declared}
        out += [({name: good, **tied}, True), ({name: bad}, False)]
    return out + EXTRA.get(path.stem, [])


def run_one(
    execute: ModuleType, stem: str, changes: dict[str, object], out: Path, kernel: str
) -> dict[str, Any]:
    """Run one notebook with ``changes`` through execute.py; what happened."""
    argv = ["--out", str(out), "--kernel", kernel, "--smoke", "--only", stem]
    for name, value in changes.items():
        argv += ["-p", name, repr(value)]
    err = io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            execute.main(argv)
    except SystemExit:  # argparse's error: refused before any kernel started
        message = " ".join(err.getvalue().split("error: ", 1)[-1].split())
        return {"outcome": "refused up front", "message": message}
    except Exception as exc:  # a cell raised after the check accepted the value
        text = f"{type(exc).__name__}: {exc}".strip().splitlines()
        return {"outcome": "failed", "message": " ".join(text)[-400:]}
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"outcome": "ran", "seconds": round(time.perf_counter() - start, 1)}


def _markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| notebook | changed | expected | outcome | seconds or message |"]
    lines.append("|---|---|---|---|---|")
    for r in rows:
        said = str(r.get("seconds", r.get("message", ""))).replace("|", "\\|")
        changed = ", ".join(f"`{k} = {v!r}`" for k, v in r["changes"].items())
        lines.append(
            f"| {r['notebook']} | {changed.replace('|', chr(92) + '|')} | "
            f"{'runs' if r['must_run'] else 'refused'} | {r['outcome']} | {said} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="folder for the matrix")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--only", action="append", default=[], help="notebook stem(s)")
    args = ap.parse_args(argv)
    os.chdir(ROOT)  # a folder given by a relative path is the repository's
    execute = _execute_module()
    notebooks = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    notebooks = [nb for nb in notebooks if not args.only or nb.stem in args.only]
    rows, bad = [], 0
    args.out.mkdir(parents=True, exist_ok=True)
    for nb in notebooks:
        for changes, must_run in trials(nb, execute.notebook_parameters(nb)):
            got = run_one(execute, nb.stem, changes, args.out / "run", args.kernel)
            row = {"notebook": nb.stem, "changes": changes, "must_run": must_run}
            rows.append(row | got)
            wrong = got["outcome"] != ("ran" if must_run else "refused up front")
            bad += wrong
            print(f"[variations] {nb.stem} {changes}: {got}", flush=True)
            (args.out / "variations.json").write_text(json.dumps(rows, indent=1, default=str))
    (args.out / "variations.md").write_text(_markdown(rows), encoding="utf-8")
    ran = sum(r["outcome"] == "ran" for r in rows)
    refused = sum(r["outcome"] == "refused up front" for r in rows)
    print(f"[variations] {len(rows)} trials: {ran} ran, {refused} refused up front, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
