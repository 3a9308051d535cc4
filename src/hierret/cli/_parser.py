"""The ``hierret`` command line's arguments: the parser, its value types, and the
:class:`~hierret.search.profile.Profile` the options of ``hierret search`` make.

Private to :mod:`hierret.cli`, whose face lists the public names.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace

from hierret.encoders.embed.local import (
    ENGINES,
    parse_shard,
)
from hierret.encoders.registry import check_encoder_name
from hierret.search.profile import DEFAULT, RANKERS, RECOMMENDED, SEARCH_LEVELS, Profile
from hierret.search.rankers.bm25 import IDFS
from hierret.search.vectors.levels import STRATEGIES
from hierret.structure.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS

__all__ = ["build_parser", "profile_from_args"]


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer no smaller than ``minimum``."""
    wanted = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    return parse


_positive, _not_negative = _at_least(1), _at_least(0)


def _weight(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {value}")
    return value


def _encoder(text: str) -> str:
    """An argparse type: an encoder name that is not empty (an unset shell variable)."""
    try:
        return check_encoder_name(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hierret`` (subcommands ``search`` and ``embed``)."""
    parser = argparse.ArgumentParser(
        prog="hierret",
        description="Retrieval over long structured documents (hierret).",
    )
    sub = parser.add_subparsers(dest="command", metavar="command")
    s = sub.add_parser(
        "search",
        help="search a corpus (default: the embedded Python Language Reference)",
        description="Search a corpus (default: the Python Language Reference) at one level "
        "or fused "
        "(passages lifted to sections, blended with the section search). Without options "
        "it uses the package's default profile: dense ranking of passages.",
    )
    s.add_argument("question", help="the question to search for")
    s.add_argument(
        "--corpus",
        default="python-reference",
        help="corpus name (e.g. scifact, qasper, scifact-sections) or path of a "
        "BEIR folder, a Qasper JSON file, or a folder of Markdown/RST/text documents "
        "(questions.jsonl beside them is not needed to search) (default: python-reference)",
    )
    s.add_argument(
        "--profile",
        choices=list(RECOMMENDED),
        default="default",
        help="a profile a decision record recommends, whose fields the options below "
        "change: default (DR-001: dense passages) or sections (DR-004: fused passage and "
        "section search as measured) (default: default)",
    )
    s.add_argument(
        "--level",
        choices=SEARCH_LEVELS,
        default=None,
        help=f"units to rank; fused ranks sections (default: {DEFAULT.level})",
    )
    s.add_argument(
        "--ranker",
        choices=RANKERS,
        default=None,
        help=f"first-stage ranker (default: {DEFAULT.ranker})",
    )
    s.add_argument(
        "--vectors",
        choices=STRATEGIES,
        default=None,
        help="section and document vectors: embedding of the raw span "
        "(window-pooled when long), centroid of passages, or the first window "
        f"of the text (default: {DEFAULT.vectors})",
    )
    s.add_argument(
        "--section-weight",
        type=_weight,
        default=None,
        help=f"fused: weight of the section leg in [0, 1] (default: {DEFAULT.section_weight})",
    )
    s.add_argument(
        "--pool",
        type=_positive,
        default=None,
        help="candidates each leg retrieves before fusion (hybrid, fused) "
        f"(default: {DEFAULT.pool})",
    )
    s.add_argument(
        "--bm25-idf",
        choices=IDFS,
        default="okapi",
        help="BM25's idf: okapi (rank_bm25's, as every published figure) or lucene (always "
        "positive). With okapi, a question whose every word has an idf <= 0 (a folder of "
        "a few documents) is ranked with lucene's, and a warning says so (default: okapi)",
    )
    s.add_argument("--k", type=_positive, default=5, help="hits to print (default: 5)")
    s.add_argument(
        "--max-chars",
        type=_positive,
        default=DEFAULT_MAX_CHARS,
        help=f"passage size in characters (default: {DEFAULT_MAX_CHARS})",
    )
    s.add_argument(
        "--overlap-chars",
        type=_not_negative,
        default=DEFAULT_OVERLAP_CHARS,
        help=f"passage overlap in characters (default: {DEFAULT_OVERLAP_CHARS})",
    )
    s.add_argument(
        "--encoder",
        type=_encoder,
        default="all-MiniLM-L6-v2",
        help="encoder name for load_encoder (default: all-MiniLM-L6-v2, offline; "
        "'hash' needs no model)",
    )
    s.add_argument(
        "--cache-dir",
        default=None,
        help="vector cache folder (default: $HIERRET_CACHE or ~/.cache/hierret/search/vectors)",
    )
    s.add_argument(
        "--snippet-chars",
        type=_not_negative,
        default=100,
        help="snippet length per hit, 0 for none (default: 100)",
    )
    e = sub.add_parser(
        "embed",
        help="embed a corpus's passages into the vector cache ahead of searching",
        description="Embed the passages of a corpus (those 'hierret search' ranks) into the "
        "vector cache, batch by batch: an interrupted run keeps what it embedded, the next "
        "embeds only the rest. A progress bar counts texts.",
    )
    e.add_argument("--corpus", default="python-reference", help="as for 'hierret search'")
    e.add_argument(
        "--encoder", type=_encoder, default="all-MiniLM-L6-v2", help="as for 'hierret search'"
    )
    e.add_argument("--cache-dir", default=None, help="as for 'hierret search'")
    e.add_argument("--max-chars", type=_positive, default=DEFAULT_MAX_CHARS)
    e.add_argument("--overlap-chars", type=_not_negative, default=DEFAULT_OVERLAP_CHARS)
    e.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="where to embed: local (this process) or ray (a Ray Data actor pool; needs the "
        "extra: pip install 'hierret[ray]') (default: local)",
    )
    ray = e.add_argument_group(
        "--engine ray",
        "Joins the Ray cluster at --address, else at $RAY_ADDRESS (which 'ray job submit' "
        "sets), else starts a local Ray for the run. Exit status 2, with the cause and the "
        "fix and nothing stored, when Ray cannot be started or joined.",
    )
    ray.add_argument(
        "--address",
        default=None,
        help="a running cluster: its GCS address (host:6379), 'auto', or a Ray Client "
        "address (ray://host:10001) (default: $RAY_ADDRESS, else a local Ray)",
    )
    ray.add_argument(
        "--actors",
        type=_actors,
        default=None,
        help="actors in the pool: N, or MIN-MAX for a pool that grows as the cluster has "
        "room (default: 2)",
    )
    ray.add_argument("--cpus-per-actor", type=_amount, default=None, help="(default: 1)")
    ray.add_argument(
        "--gpus-per-actor",
        type=_amount,
        default=None,
        help="GPUs each actor reserves; its encoder then runs on cuda, in float32 (default: 0)",
    )
    ray.add_argument(
        "--batch-size",
        type=_positive,
        default=None,
        help="texts per partition, each embedded by one actor in one call: a multiple of 64 "
        "(default: 256)",
    )
    e.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="embed only shard I (from 0) of N of the distinct texts, for N independent "
        "jobs whose caches merge (copy the vector files into one cache folder)",
    )
    e.add_argument(
        "--plan",
        default=None,
        metavar="FOLDER",
        help="instead of a corpus's passages, every text a planning run listed "
        "($HIERRET_PLAN; docs/warm.py makes one for a whole reproduce): --corpus, --encoder, "
        "--max-chars and --overlap-chars are then the plan's",
    )
    e.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _actors(text: str) -> int | tuple[int, int]:
    """An argparse type: ``N`` or ``MIN-MAX`` actors."""
    low, sep, high = text.partition("-")
    try:
        pool = (int(low), int(high)) if sep else (int(low), int(low))
    except ValueError:
        pool = (0, 0)
    if not 1 <= pool[0] <= pool[1]:
        raise argparse.ArgumentTypeError(
            f"expected a positive count N or a range MIN-MAX with 1 <= MIN <= MAX, got {text!r}"
        )
    return pool if sep else pool[0]


def _amount(text: str) -> float:
    """An argparse type: a finite number >= 0 (a resource amount)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def profile_from_args(args: argparse.Namespace) -> Profile:
    """The ``--profile`` (:data:`~hierret.search.profile.RECOMMENDED`) with the fields the
    options set.

    Examples
    --------
    >>> args = build_parser().parse_args(["search", "q", "--level", "fused", "--pool", "20"])
    >>> p = profile_from_args(args)
    >>> (p.level, p.ranker, p.pool, p.section_weight)
    ('fused', 'dense', 20, 0.65)
    >>> p = profile_from_args(build_parser().parse_args(["search", "q", "--profile", "sections"]))
    >>> (p.level, p.ranker, p.pool, p.section_weight)
    ('fused', 'dense', 50, 0.65)
    """
    options = {
        "level": args.level,
        "ranker": args.ranker,
        "vectors": args.vectors,
        "section_weight": args.section_weight,
        "pool": args.pool,
    }
    base = RECOMMENDED[getattr(args, "profile", "default")]
    changed = {k: v for k, v in options.items() if v is not None}
    return replace(base, name=base.name if not changed else f"{base.name} (changed)", **changed)
