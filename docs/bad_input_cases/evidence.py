"""Bad input to a record's evidence files (run by ``docs/bad_input.py``).

The per-question evidence a record publishes is plain tab-separated text that
readers open with pandas; a question id the writer wrote must come back as the
same text from the package's reader and from the reading line the docs
recommend (:data:`hierret.publish.evidence.READ_OPTIONS`), however much it
looks like a missing value or a number.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import pandas as pd

from bad_input_cases import Case, Facts, kept
from hierret.evaluation.stats.evidence import Ledger, PairedTest, Tested
from hierret.publish import evidence


def _round_trip(ids: Sequence[str]) -> Facts:
    ledger = Ledger()
    n = len(ids)
    test = PairedTest(
        "mean", "NA", "null", tuple(ids), tuple(0.5 + i / 10 for i in range(n)),
        tuple(0.5 - i / 10 for i in range(n)), 0.1, -0.2, 0.4, 0.5, 0.95, 99, 0,
    )  # fmt: skip
    ledger.adjust([ledger.keep(test)])
    folder = tempfile.mkdtemp()
    diff = Tested(0.1, ledger.tests[0])  # the difference carries its test, as a table hands it on
    evidence.write(folder, "x", {"x_diff": diff, "x_diff_low": -0.2, "x_diff_high": 0.4}, ledger)
    loaded = evidence.load(folder, "x")
    assert loaded is not None
    tests, questions = loaded
    path = evidence.paths(folder, "x")[1]
    plain = pd.read_csv(path, **evidence.READ_OPTIONS)
    back = [str(v) for v in questions["query"]]
    return Facts(
        f"read back by evidence.load: {back}; by the recommended read_csv: "
        f"{[str(v) for v in plain['query']]}; arms {list(tests[['arm_a', 'arm_b']].iloc[0])}",
        same=list(questions["query"]) == list(ids) == list(plain["query"]),
        arms=list(tests[["arm_a", "arm_b"]].iloc[0]) == ["NA", "null"],
    )


_AS_WRITTEN = (
    kept("every question id reads back as written", lambda f: f.same),
    kept("arm names NA and null read back as written", lambda f: f.arms),
)

CASES: list[Case] = [
    (
        "evidence files whose question ids are NA, None, null and N/A",
        lambda: _round_trip(["NA", "None", "null", "N/A"]),
        _AS_WRITTEN,
    ),
    (
        "evidence files whose question ids are nan, #N/A, NULL, 007 and 1e3",
        lambda: _round_trip(["nan", "#N/A", "NULL", "007", "1e3"]),
        _AS_WRITTEN,
    ),
]
