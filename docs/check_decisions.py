"""Check (or update) the published numbers in DECISIONS.md and README.md against the records.

    python docs/check_decisions.py [--results RUN] [--reference data/results]
        [--update] [--site-copy PATH]

A number is published as `0.900<!--@dr001.hit1_chunks-->`; the record named
`dr001` must hold the same value under `hit1_chunks`, formatted the same way.

Two kinds of value are checked two ways (hierret.publish.report). *Findings* must
reproduce on any machine: they are compared with the run's records
(--results, default: the reference records). *Machine facts* (times, costs,
throughputs, run-to-run variation: the keys a record lists under "facts")
are compared with the committed reference records (--reference,
data/results), never with a new run, and the prose must say they are the
reference machine's: a run on another machine, or a loaded one, measures
other times, and that is no reason to fail.

Every record's "Claims and tests" table is checked too (hierret.publish.claims):
each row's test resolves in the run's records and its verdict is what the
numbers say, and every comparative sentence cites a row; so is the results table
atop DECISIONS.md (hierret.publish.summary): each record's row quotes its declared
key claim's difference, interval and verdict as the records give them. Exit 1 lists every
difference. `--update` adopts the run as the new reference: it copies the
run's records into --reference and rewrites the numbers and the verdicts
(`--keep-reference-facts`: the findings only, the reference machine's facts
and timing records stay).
`--site-copy PATH` writes DECISIONS.md for the site, with this run's value
beside each machine fact the text quotes from the reference machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hierret.publish.site_build import (
    adopt,
    annotate_run,
    check_page,
    compare_records,
    load_results,
    update_page,
)

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "data" / "results"
#: The pages whose marked numbers are checked: the records, the README's run times and
#: the teacher's page's (the class-size timing records).
PAGES = (ROOT / "DECISIONS.md", ROOT / "README.md", ROOT / "docs" / "teaching.md")


def _summarise(comparison: dict[str, dict[str, list[str]]]) -> None:
    """Print how the run's records compare with the reference, key by key."""
    for name, diff in comparison.items():
        parts = [
            f"{len(v)} {k} differ" if k in ("findings", "facts") else f"{len(v)} {k}"
            for k, v in diff.items()
            if v
        ]
        print(f"{name}: " + ("identical" if not parts else "; ".join(parts)))
        for key in diff["findings"][:10]:
            print(f"  finding {key} differs from the reference (published or not)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--results", type=Path, help="the run's records (default: the reference records)"
    )
    ap.add_argument(
        "--reference",
        type=Path,
        default=REFERENCE,
        help="the committed reference records (default: data/results)",
    )
    ap.add_argument(
        "--file",
        type=Path,
        action="append",
        help="a page to check (repeatable; default: DECISIONS.md, with its claims, and README.md)",
    )
    ap.add_argument(
        "--update", action="store_true", help="adopt the run as the reference, rewrite the numbers"
    )
    ap.add_argument(
        "--keep-reference-facts",
        action="store_true",
        help="with --update: adopt the run's findings only, keep the reference machine's facts",
    )
    ap.add_argument(
        "--site-copy",
        type=Path,
        help="write DECISIONS.md here with this run's value beside each machine fact",
    )
    args = ap.parse_args(argv)
    run_dir = args.results or args.reference
    if args.update:  # the adopted records are the new reference, and the text follows them
        adopt(run_dir, args.reference, args.keep_reference_facts)
        run_dir = args.reference
    results, reference = load_results(run_dir), load_results(args.reference)
    absent = sorted(set(reference) - set(results))
    if args.results and absent:  # a run of some notebooks (--only) is checked on what it ran
        print(f"not in this run, checked as the reference has them: {', '.join(absent)}")
        results = {**{n: reference[n] for n in absent}, **results}
    if args.site_copy:
        text = (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
        args.site_copy.parent.mkdir(parents=True, exist_ok=True)
        args.site_copy.write_text(annotate_run(text, results, reference), "utf-8")
        print(f"wrote {args.site_copy} (this run's machine facts beside the reference's)")
        return 0
    if args.results and not args.update:
        _summarise(compare_records(results, reference))
    problems = []
    for page in args.file or PAGES:
        text = page.read_text(encoding="utf-8")
        with_claims = page.name == "DECISIONS.md"  # the records' claims tables live there
        if args.update:
            page.write_text(update_page(text, results, decisions=with_claims), "utf-8")
            print(f"updated {page}")
            continue
        # other pages' sentences may say no more than the claims they cite
        decisions = None if with_claims else (ROOT / "DECISIONS.md").read_text(encoding="utf-8")
        found = check_page(text, results, reference, decisions=decisions)
        problems += [f"{page.name}: {p}" for p in found]
    if args.update:
        return 0
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(
            "Published findings or claims differ from what the notebooks produced. If the "
            "new run is right, run `nox -s reproduce -- --update-decisions` (it adopts the "
            "run's records as the reference) and review the diff; a comparative sentence "
            "without a claim needs a row in its record's 'Claims and tests' table (see "
            "hierret.publish.claims).",
            file=sys.stderr,
        )
        return 1
    names = ", ".join(p.name for p in args.file or PAGES)
    print(
        f"{names}: every published finding matches {run_dir}, every machine fact "
        f"the reference records ({args.reference})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
