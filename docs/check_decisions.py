"""Check (or update) the published numbers in DECISIONS.md and README.md against the records.

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
#: The pages whose marked numbers are checked: the records, and the README's run times.
PAGES = (ROOT / "DECISIONS.md", ROOT / "README.md")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", type=Path, default=ROOT / "data" / "results")
    ap.add_argument(
        "--file",
        type=Path,
        action="append",
        help="a page to check (repeatable; default: DECISIONS.md, with its claims, and README.md)",
    )
    ap.add_argument("--update", action="store_true", help="rewrite the numbers from the records")
    args = ap.parse_args(argv)
    results = load_results(args.results)
    problems = []
    for page in args.file or PAGES:
        text = page.read_text(encoding="utf-8")
        with_claims = page.name == "DECISIONS.md"  # the records' claims tables live there
        if args.update:
            text = update_markdown(text, results)
            page.write_text(claims.update(text, results) if with_claims else text, "utf-8")
            print(f"updated {page}")
            continue
        found = check_markdown(text, results) + (claims.check(text, results) if with_claims else [])
        problems += [f"{page.name}: {p}" for p in found]
    if args.update:
        return 0
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(
            "Published numbers or claims differ from what the notebooks produced. If the "
            "new run is right, run `nox -s reproduce -- --update-decisions` and review the "
            "diff; a comparative sentence without a claim needs a row in its record's "
            "'Claims and tests' table (see hierret.claims).",
            file=sys.stderr,
        )
        return 1
    names = ", ".join(p.name for p in args.file or PAGES)
    print(f"{names}: every published number matches {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
