"""Check (or update) the published numbers in DECISIONS.md against the result records.

    python docs/check_decisions.py [--results data/results] [--update]

A number is published as `0.900<!--@dr001.hit1_chunks-->`; the record
`data/results/*.json` named `dr001` must hold the same value under
`hit1_chunks`, formatted the same way. Every record's "Claims and tests"
table is checked too (`hierret.claims`): each row's test resolves in the
result records and its verdict is what the numbers say, and every comparative
sentence cites a row. Exit 1 lists every difference; `--update` rewrites the
numbers and the verdicts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hierret import claims
from hierret.report import check_markdown, load_results, update_markdown

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", type=Path, default=ROOT / "data" / "results")
    ap.add_argument("--file", type=Path, default=ROOT / "DECISIONS.md")
    ap.add_argument("--update", action="store_true", help="rewrite the numbers from the records")
    args = ap.parse_args(argv)
    results = load_results(args.results)
    text = args.file.read_text(encoding="utf-8")
    if args.update:
        text = claims.update(update_markdown(text, results), results)
        args.file.write_text(text, encoding="utf-8")
        print(f"updated {args.file}")
        return 0
    problems = check_markdown(text, results) + claims.check(text, results)
    for p in problems:
        print(f"{args.file.name}: {p}", file=sys.stderr)
    if problems:
        print(
            "Published numbers or claims differ from what the notebooks produced. If the "
            "new run is right, run `nox -s reproduce -- --update-decisions` and review the "
            "diff; a comparative sentence without a claim needs a row in its record's "
            "'Claims and tests' table (see hierret.claims).",
            file=sys.stderr,
        )
        return 1
    print(f"{args.file.name}: every published number matches {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
