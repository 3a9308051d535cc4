"""Warm the vector cache for a run of the notebooks: plan what it embeds, embed that, repeat.

    python docs/warm.py [--size reference | class | smoke] [--only NB ...] [-p NAME VALUE ...]
        [--kernel hierret] [--rounds 4] [-- EMBED-OPTIONS]

Each round executes the notebooks (docs/execute.py, into a temporary folder: nothing
published is touched) with ``HIERRET_PLAN`` set, so that every cached encoder lists
the texts it misses instead of embedding them (hierret.encoders.cache._plan: stand-in vectors,
never stored), then embeds that list with ``hierret embed --plan``, passing it
EMBED-OPTIONS (``--engine ray --address HOST:6379 --actors 4-32`` to embed on a Ray
cluster; default: here). It stops when a planning round misses nothing: then a run of
the same notebooks at the same size and parameters embeds nothing (its timing record
counts 0 texts embedded per encoder). A second round is usual, since some texts are
chosen by rankings (a reranker's candidates), and those need the real vectors of the
first round. Token vectors (late chunking, MaxSim) are not planned: the planning run
makes them, here, and caches them.

The cache is ``$HIERRET_CACHE`` (or the default folder), the one the following
``nox -s reproduce`` reads: set it the same way for both.

Exit status 0 when warm, 1 when the last round still missed texts, 2 on a usage
error (as docs/execute.py and hierret embed give it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hierret.encoders.cache import PLAN_ENV, read_plan

ROOT = Path(__file__).resolve().parent.parent


def _execute_args(args: argparse.Namespace) -> list[str]:
    out = ["--size", args.size, "--kernel", args.kernel]
    for name in args.only:
        out += ["--only", name]
    for name, value in args.param:
        out += ["-p", name, value]
    return out


def plan_round(args: argparse.Namespace, folder: Path) -> int:
    """Execute the notebooks with ``HIERRET_PLAN=folder/plan``; the planned texts' count."""
    env = {**os.environ, PLAN_ENV: str(folder / "plan")}
    cmd = [sys.executable, str(ROOT / "docs" / "execute.py"), "--out", str(folder / "nb")]
    cmd += ["--results", str(folder / "results"), *_execute_args(args)]
    status = subprocess.run(cmd, env=env, check=False).returncode
    if status:
        raise SystemExit(status)
    return sum(len(g.texts) for g in read_plan(folder / "plan"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    own, embed_options = argv[:cut], argv[cut + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="reference", help="smoke, class or reference")
    ap.add_argument("--smoke", action="store_true", help="the same as --size smoke")
    ap.add_argument("--only", action="append", default=[], help="notebook stem(s)")
    ap.add_argument(
        "-p",
        dest="param",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="a parameter, as for docs/execute.py",
    )
    ap.add_argument("--kernel", default="hierret")
    ap.add_argument("--rounds", type=int, default=4, help="at most this many (default: 4)")
    args = ap.parse_args(own)
    if args.smoke:
        args.size = "smoke"
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    for r in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory(prefix="hierret-warm-") as tmp:
            folder = Path(tmp)
            missing = plan_round(args, folder)
            if not missing:
                print(f"[warm] round {r}: the run misses no vector: the cache is warm")
                return 0
            print(f"[warm] round {r}: the run would embed {missing} texts; embedding them")
            cmd = [sys.executable, "-m", "hierret", "embed", "--plan", str(folder / "plan")]
            status = subprocess.run([*cmd, *embed_options], check=False).returncode
            if status:
                return status
    print(f"[warm] still missing texts after {args.rounds} rounds", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
