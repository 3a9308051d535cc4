"""Prose that follows the run (hierret.publish.runprose): a notebook run on changed
parameters states none of the reference run's facts as its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hierret
from hierret.publish.runprose import check_run, problems, reference_facts

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "tests" / "data" / "course_notes"
PUBLISHED = json.loads((ROOT / "data" / "results" / "dr001.json").read_text(encoding="utf-8"))


def _nb(*cells: str) -> dict[str, object]:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": c} for c in cells]}


def test_a_changed_encoder_makes_its_name_and_window_the_reference_runs() -> None:
    reference = PUBLISHED["identity"]["parameters"]
    facts = reference_facts(reference, reference | {"encoder": "wordllama"})
    assert {"all-MiniLM-L6-v2", "MiniLM", "256-token", "256 tokens"} <= set(facts)
    assert not {"SciFact", "Python reference", "900 characters"} & set(facts)
    assert reference_facts(reference, reference) == {}  # the reference run: nothing to flag


def test_a_folder_without_beir_makes_the_study_corpora_and_counts_the_reference_runs() -> None:
    reference = PUBLISHED["identity"]["parameters"]
    run = reference | {"corpus": str(COURSE), "beir": None, "sizes": [600, 900]}
    facts = reference_facts(reference, run, PUBLISHED["values"], {"n_questions": 5})
    assert facts["SciFact"] == "beir: scifact → None"
    assert facts["Python reference"] == "corpus: python-reference → course_notes"
    assert facts["1,200 characters"].startswith("sizes: ")
    assert f"{PUBLISHED['values']['n_questions']:,} questions" in facts


def test_unmarked_prose_fails_and_marked_glued_or_introduced_prose_passes() -> None:
    reference = PUBLISHED["identity"]["parameters"]
    facts = reference_facts(reference, reference | {"encoder": "wordllama"})
    bad = _nb("A whole unit is cut at its 256-token window, as the prototype did.")
    assert len(problems(bad, facts)) == 1
    assert (
        "'256-token' is the reference run's (encoder: all-MiniLM-L6-v2 → wordllama)"
        in (problems(bad, facts)[0])
    )
    good = _nb(
        "# 6 · MiniLM's window\n\nThe reference encoder's window is 256 tokens.",
        "Passages of `max_chars` characters. It reads a window of `window` tokens.",
        "What the reference run found:\n\n* MiniLM reads 256 tokens.\n* So does all-MiniLM-L6-v2.",
        "```\nall-MiniLM-L6-v2 in a code block\n```",
    )
    assert problems(good, facts) == []


def test_an_exercise_describes_its_own_run_and_is_not_read() -> None:
    reference = PUBLISHED["identity"]["parameters"]
    run = reference | {"corpus": str(COURSE), "beir": None}
    facts = reference_facts(reference, run)
    said = "How wide are the intervals on SciFact alone?\n\n`papermill … -p beir scifact`"
    assert problems(_nb("## Exercises\n\n1. " + said), facts) == []
    assert len(problems(_nb("## What the run shows\n\n" + said), facts)) == 1


@pytest.mark.slow
def test_dr001_on_a_folder_with_another_encoder_says_nothing_of_the_reference_run_as_its_own(
    tmp_path: Path,
) -> None:
    """One smoke run of DR-001 on the course folder with wordllama (both changes at once):
    its prose passes, and the old sentence about the 256-token window put back fails."""
    out, results = tmp_path / "nb", tmp_path / "res"
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(Path(hierret.__file__).parents[1]),
                                       os.environ.get("PYTHONPATH", "")]),
        "HIERRET_SMOKE": "1",
    }  # fmt: skip
    given = ["corpus", str(COURSE), "beir", "None", "encoder", "wordllama"]
    command = [sys.executable, str(ROOT / "docs" / "execute.py"), "--out", str(out),
               "--results", str(results), "--smoke", "--only", "02_dr001_chunking"]  # fmt: skip
    command += [x for name, value in zip(given[::2], given[1::2], strict=True)
                for x in ("-p", name, value)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    executed = out / "02_dr001_chunking.ipynb"
    assert check_run(executed, results) == []
    nb = json.loads(executed.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if 'vectors="first-window"' in "".join(c["source"]))
    cell["source"] = "A whole unit is cut at its 256-token window: that is the point being tested."
    nb["cells"].append({"cell_type": "markdown", "metadata": {},
                        "source": "This notebook measures it on SciFact."})  # fmt: skip
    broken = tmp_path / "again" / executed.name
    broken.parent.mkdir()
    broken.write_text(json.dumps(nb), encoding="utf-8")
    found = check_run(broken, results)
    assert len(found) == 2, found
    assert "'256-token' is the reference run's (encoder: all-MiniLM-L6-v2 → wordllama)" in found[0]
    assert "'SciFact' is the reference run's (beir: scifact → None)" in found[1]


def test_a_notebook_without_its_runs_record_says_how_to_make_one(tmp_path: Path) -> None:
    executed = tmp_path / "02_dr001_chunking.ipynb"
    executed.write_text(json.dumps(_nb("text")), encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="--results DIR"):
        check_run(executed, tmp_path)
    with pytest.raises(ValueError, match="names no record"):
        check_run(tmp_path / "notes.ipynb", tmp_path)


#: Each notebook that publishes a record, by the record's name (01's is ``structure``).
NOTEBOOKS = {p.stem.split("_")[1]: p for p in (ROOT / "notebooks").glob("0[1-6]_*.ipynb")}


def _elsewhere(reference: dict[str, object]) -> dict[str, object]:
    """A run on a reader's folder with another encoder and passage size: every corpus
    parameter the notebook has names the folder, as a user's run would."""
    folder = str(COURSE)
    changed: dict[str, object] = {
        "corpus": folder, "corpora": [folder], "beir": None, "weight_sweep_corpus": folder,
        "encoder": "wordllama", "max_chars": 600, "chunk_chars": [600], "sizes": [300],
        "document": None,
    }  # fmt: skip
    return reference | {k: v for k, v in changed.items() if k in reference}


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_no_notebook_states_the_reference_runs_facts_as_a_folder_runs(name: str) -> None:
    """Every notebook's Markdown, read against a run on a folder with another
    encoder and size: each sentence naming the reference run's corpora, encoder, window
    or sizes is marked as the study's (the Markdown is the same before and after a run:
    no notebook glues values into its prose)."""
    record = json.loads((ROOT / "data" / "results" / f"{name}.json").read_text("utf-8"))
    reference = record["identity"]["parameters"]
    facts = reference_facts(reference, _elsewhere(reference))
    assert facts, name  # the run differs in something the prose could state
    nb = json.loads(NOTEBOOKS[name].read_text(encoding="utf-8"))
    assert problems(nb, facts) == []
