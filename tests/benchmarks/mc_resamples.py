"""What drawing more sign flips for every published test costs, and what it would move.

For every randomisation test in ``data/results/evidence/`` (the per-question
scores, the published seed), the p-value is drawn again with ``--resamples``
sign flips (:func:`hierret.evaluation.stats.paired_randomization`, the published path),
timed per test; then each family is Holm-adjusted again and the script prints
which tests' adjusted p would cross 0.05, and which tests the re-draw rule
would draw again with the corrected standard error
(:func:`hierret.evaluation.stats.montecarlo.near`, ``p(2-p)``) but did not with the
published one (``p(1-p)``). Nothing is written; no published number moves.

Run (the CPU time is the process's, so a loaded machine inflates the wall time only)::

    python tests/benchmarks/mc_resamples.py --resamples 100000 1000000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from hierret.evaluation.stats import holm, montecarlo, paired_randomization
from hierret.publish.evidence import load

ROOT = Path(__file__).resolve().parents[2]


def _redraw_rule(tests: pd.DataFrame) -> list[str]:
    """Tests the corrected rule would draw again that the published one did not."""
    out = []
    for row in tests.itertuples():
        if row.kind != "mean" or row.n_resamples >= 2 ** int(row.n) or row.n_resamples != 10_000:
            continue  # exact, or already drawn again
        new = montecarlo.near(row.p_adjusted, row.p, row.n_resamples, variance="p(2-p)")
        old = montecarlo.near(row.p_adjusted, row.p, row.n_resamples, variance="p(1-p)")
        if new and not old:
            out.append(f"{row.test} {row.key} (adjusted {row.p_adjusted:.4f})")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "data" / "results")
    parser.add_argument("--resamples", type=int, nargs="+", default=[100_000])
    args = parser.parse_args()
    records = sorted(p.name.split("-")[0] for p in (args.results / "evidence").glob("*-tests.tsv"))
    loaded = {name: load(args.results, name) for name in records}
    for name, found in loaded.items():
        assert found is not None
        for line in _redraw_rule(found[0]):
            print(f"{name}: the p(2-p) rule would draw again {line}")
    for b in args.resamples:
        cpu, n_tests, crossed = 0.0, 0, []
        for name, found in loaded.items():
            assert found is not None
            tests, questions = found
            p = dict(zip(tests["test"], tests["p"].astype(float), strict=True))
            for row in tests.itertuples():
                if row.kind != "mean":
                    continue
                q = questions[questions["test"] == row.test]
                start = time.process_time()
                p[row.test] = paired_randomization(q["a"], q["b"], n_resamples=b, seed=row.seed)
                cpu += time.process_time() - start
                n_tests += 1
            for _, fam in tests.groupby("family", sort=False):
                again = holm({t: p[t] for t in fam["test"]}) if len(fam) > 1 else {
                    t: p[t] for t in fam["test"]}  # fmt: skip
                for row in fam.itertuples():
                    if (row.p_adjusted < 0.05) != (again[row.test] < 0.05):
                        was, now = row.p_adjusted, again[row.test]
                        crossed.append(f"{name} {row.test} {row.key}: {was:.4f} -> {now:.4f}")
        print(
            f"B={b:,}: {n_tests} randomisation tests, {cpu:.1f} CPU s; "
            f"{len(crossed)} adjusted p cross 0.05" + "".join(f"\n  {c}" for c in crossed)
        )


if __name__ == "__main__":
    main()
