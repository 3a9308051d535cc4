"""The ``hierret`` command line: try hierarchical search on the embedded corpus.

::

    python -m hierret search "how does finally work?" --profile sections --k 5

searches a corpus (``--corpus``: a name or path that :func:`hierret.datasets.load`
takes, your own folder of documents with or without ``questions.jsonl``; default: the
Python Language Reference) with a profile a decision record recommends
(``--profile``, :data:`hierret.search.profile.RECOMMENDED`: the default, dense ranking of
passages, or DR-004's ``sections``), each option overriding one of its fields, and
prints each hit's rank, score, unit id, span, section path and a one-line snippet.
Vectors are cached on disk (:class:`~hierret.cache.VectorCache`, ``$HIERRET_CACHE``
or ``--cache-dir``), so only the first call embeds the corpus (with a progress bar
for a real model). The model's identity is kept beside the vectors
(:func:`~hierret.cache.cached_encoder`), so a later call loads the model, and
imports torch, only when a text is missing from the cache: a question asked before
is answered from the cache alone. Everything printed
that comes from data (ids, titles, section paths, snippets, names, error
messages quoting them) goes through :func:`printable`: control characters are
shown as escapes (``\\x1b``), never obeyed by the terminal.

``hierret embed`` fills the cache ahead of searching: the passages of a corpus
(those ``search`` ranks), batch by batch, with a progress bar counted in texts
(:func:`hierret.embed.local.embed_texts`); Ctrl-C keeps every batch stored. Storing is
its point: a cache that cannot be written, or a write that fails part way (a
full disk), ends it with exit status 2 and the fix, never a success that stored
nothing. ``--engine ray`` joins the cluster at ``--address`` (else
``$RAY_ADDRESS``, else a local Ray), with ``--actors N`` or ``MIN-MAX``,
``--cpus-per-actor``, ``--gpus-per-actor`` and ``--batch-size``; a Ray that
cannot be started or joined is exit status 2 with the cause and the fix, no
traceback. ``--shard I/N`` embeds one of N disjoint parts of the distinct
texts (:func:`hierret.embed.local.shard_of`).

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> main(["embed", "--encoder", "hash", "--no-progress", "--cache-dir", tmp.name])
... # doctest: +ELLIPSIS
python-reference: ... passages, 603 distinct texts for hash-64: 0 were in the cache, 603 ...
0
>>> main(["search", "finally clause", "--encoder", "hash", "--k", "1",
...       "--cache-dir", tmp.name])  # doctest: +ELLIPSIS
python-reference: ...
 1  ...
0
>>> tmp.cleanup()
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from hierret.cache import VectorCache, cached_encoder
from hierret.datasets.bundle import load
from hierret.embed.local import (
    ENGINES,
    EngineUnavailableError,
    RayOptions,
    check_engine,
    corpus_passages,
    embed_plan,
    embed_texts,
    parse_shard,
)
from hierret.encoders.registry import check_encoder_name
from hierret.rankers.bm25 import IDFS
from hierret.search.hits import Hit
from hierret.search.profile import DEFAULT, RANKERS, RECOMMENDED, SEARCH_LEVELS, Profile
from hierret.search.searcher import Searcher
from hierret.structure.chunking import DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS
from hierret.structure.hierarchy import build_hierarchy
from hierret.vectors.levels import STRATEGIES

__all__ = ["CLOSED_PIPE", "build_parser", "format_hit", "main", "printable", "profile_from_args"]

#: Exit status when the reader of the output goes away early (``hierret search ... |
#: head -1``): 128 + SIGPIPE (13), what a shell reports for any tool a closed pipe
#: stops, so a script under ``set -o pipefail`` can tell the output was cut. Nothing
#: is printed about it: the reader asked for no more.
CLOSED_PIPE = 141


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
        help="vector cache folder (default: $HIERRET_CACHE or ~/.cache/hierret/vectors)",
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


# What a terminal would act on instead of showing: C0 controls (ESC starts the escape
# sequences that clear the screen, move the cursor or retitle the window; CR and BS
# overwrite what is printed), DEL, C1 controls (U+009B is a one-character CSI), the line
# and paragraph separators, the bidirectional embeddings, overrides and isolates (they
# reorder the text shown after them) and lone surrogates (they cannot be written as
# UTF-8 at all). Newline and tab are kept only where a field may span lines.
_UNSAFE = r"\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_IN_LINE = re.compile(rf"[\t\n{_UNSAFE}]")
_UNSAFE_IN_LINES = re.compile(rf"[{_UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    r"""``text`` safe to print on a terminal: every control character shown, none obeyed.

    Everything the command line prints that comes from data (document and unit
    ids, titles and section paths, snippets, corpus and encoder names, error
    messages quoting them) goes through this function, so a corpus cannot clear
    the screen, move the cursor, rewrite a line already printed, retitle the
    window or reorder the text shown. Each such character is written as its
    Python escape (``\x1b``, ``\x9b``, ``\u202e``); other text, any script and
    emoji included, is unchanged.

    Parameters
    ----------
    text : str
        What to print.
    lines : bool, default False
        Keep newlines and tabs (a message of several lines); otherwise they are
        escaped too, so a field stays on its line.

    Returns
    -------
    str

    Examples
    --------
    >>> print(printable("Cats \x1b[2J\x1b]0;owned\x07"))
    Cats \x1b[2J\x1b]0;owned\x07
    >>> print(printable("done\r\x1b[1A\x1b[2Kfake line"))
    done\x0d\x1b[1A\x1b[2Kfake line
    >>> print(printable("abc\u202edef \x9b31m \x7f"))
    abc\u202edef \x9b31m \x7f
    >>> print(printable("Café — naïve 猫 😀 (tab\there)"))
    Café — naïve 猫 😀 (tab\x09here)
    >>> print(printable("two\nlines", lines=True))
    two
    lines
    >>> printable("one\nline")
    'one\\x0aline'
    """
    pattern = _UNSAFE_IN_LINES if lines else _UNSAFE_IN_LINE
    return pattern.sub(_escape, text)


def format_hit(hit: Hit, snippet_chars: int = 100) -> str:
    r"""Two lines for one hit: rank, score, id, span, section path; then the snippet.

    The id, path and snippet come from the corpus: each is printed through
    :func:`printable`, so control characters in them are shown, not obeyed.

    Examples
    --------
    >>> h = Hit(1, "try#s1", 0.8123, "fused", "try", 'The "try" statement', 0, 1562, "Text.")
    >>> print(format_hit(h))
     1  0.8123  try#s1  [0, 1562)  The "try" statement
        Text.
    >>> h = Hit(1, "c\x1b[2J#s1", 0.5, "sections", "c", "Cats\x1b]0;x\x07", 0, 9, "\x1b[1A")
    >>> print(format_hit(h))
     1  0.5000  c\x1b[2J#s1  [0, 9)  Cats\x1b]0;x\x07
        \x1b[1A
    """
    unit_id, path = printable(hit.unit_id), printable(hit.path)
    line = f"{hit.rank:2d}  {hit.score:.4f}  {unit_id}  [{hit.start}, {hit.end})  {path}"
    if snippet_chars <= 0 or not hit.snippet:
        return line
    text = hit.snippet
    if len(text) > snippet_chars:
        cut = text[: snippet_chars - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return f"{line}\n    {printable(text)}"


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


def _describe(profile: Profile) -> str:
    """The header's account of the search: vectors, level, ranker and fusion settings."""
    how = f"{profile.vectors} vectors; {profile.level}, {profile.ranker}"
    if profile.level == "fused":
        how += f", section weight {profile.section_weight}"
    if profile.level == "fused" or profile.ranker == "hybrid":
        how += f", pool {profile.pool}"
    return how


def _usage_error(message: str, command: str = "search") -> int:
    print(f"hierret {command}: error: {printable(message, lines=True)}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _warnings_to_stderr() -> Iterator[None]:
    """The package's logged warnings (a cap on ``--k``, cut queries, a damaged cache
    shard) printed on standard error, whatever logging the process set up."""
    logger = logging.getLogger("hierret")
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("hierret search: %(levelname)s: %(message)s"))
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _search(args: argparse.Namespace, cache: VectorCache) -> int:
    with _warnings_to_stderr():
        return _search_quietly(args, cache)


def _search_quietly(args: argparse.Namespace, cache: VectorCache) -> int:
    try:
        args.question.encode("utf-8")
    except UnicodeEncodeError:
        return _usage_error(
            "the question is not valid UTF-8 text (the terminal passed bytes "
            "that are not UTF-8): set a UTF-8 locale, e.g. LANG=C.UTF-8"
        )
    if not args.question.strip():
        return _usage_error("the question is empty: give at least one word")
    if args.overlap_chars >= args.max_chars:
        print(
            f"hierret search: error: --overlap-chars ({args.overlap_chars}) must be smaller "
            f"than --max-chars ({args.max_chars})",
            file=sys.stderr,
        )
        return 2
    bundle = load(args.corpus, questions=False)  # questions are to evaluate, not to search
    corpus = bundle.corpus
    hierarchy = build_hierarchy(
        corpus, args.max_chars, args.overlap_chars, heading_styles=bundle.heading_styles
    )
    encoder = cached_encoder(args.encoder, cache)
    profile = profile_from_args(args)
    searcher = Searcher(hierarchy, encoder, bm25_idf=args.bm25_idf)
    n_sections = sum(len(s) for s in hierarchy.sections.values())
    print(
        f"{printable(corpus.name)}: {len(corpus)} documents, {n_sections} sections, "
        f"{len(hierarchy.passages)} passages; {printable(encoder.identity.name)}; "
        f"{_describe(profile)}"
    )
    hits = searcher.search(args.question, profile, args.k)
    for hit in hits:
        print(format_hit(hit, args.snippet_chars))
    if not hits:
        print(
            "no hits: nothing in the corpus matches a word of the question"
            + (" with a BM25 score above 0" if profile.ranker == "bm25" else ""),
            file=sys.stderr,
        )
    return 0


def _embed(args: argparse.Namespace, cache: VectorCache) -> int:
    """``hierret embed``: the corpus's passages into the cache, a bar counted in texts."""
    if args.overlap_chars >= args.max_chars:
        return _usage_error(
            f"--overlap-chars ({args.overlap_chars}) must be smaller than --max-chars "
            f"({args.max_chars})",
            "embed",
        )
    check_engine(args.engine)  # before loading anything
    knobs = {
        "address": args.address,
        "actors": args.actors,
        "cpus_per_actor": args.cpus_per_actor,
        "gpus_per_actor": args.gpus_per_actor,
        "batch_size": args.batch_size,
    }
    given = {k: v for k, v in knobs.items() if v is not None}
    if given and args.engine != "ray":
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        verb = "applies" if len(given) == 1 else "apply"
        return _usage_error(f"{flags} {verb} only to --engine ray", "embed")
    options = RayOptions(**given) if args.engine == "ray" else None
    if args.plan is not None:
        return _embed_plan(args, cache, options)
    name, texts = _passages(args)
    encoder = cached_encoder(args.encoder, cache)
    report = embed_texts(
        texts,
        encoder,
        engine=args.engine,
        model=args.encoder,
        show_progress=False if args.no_progress else None,
        ray=options,
        shard=args.shard,
    )
    part = "" if args.shard is None else f" in shard {args.shard[0]}/{args.shard[1]}"
    print(
        f"{printable(name)}: {report.texts} passages, {report.distinct} "
        f"distinct texts{part} for {printable(encoder.identity.name)}: {report.cached} were in "
        f"the cache, {report.embedded} embedded in {report.seconds:.1f} s ({cache.root})"
    )
    return 0


def _embed_plan(args: argparse.Namespace, cache: VectorCache, options: RayOptions | None) -> int:
    """``hierret embed --plan FOLDER``: every group of the plan, one line each."""
    if not os.path.isdir(args.plan):
        return _usage_error(
            f"--plan {args.plan}: no such folder; make a plan first (HIERRET_PLAN=FOLDER while "
            "a run executes, or python docs/warm.py)",
            "embed",
        )
    reports = embed_plan(
        args.plan,
        cache,
        engine=args.engine,
        ray=options,
        shard=args.shard,
        show_progress=False if args.no_progress else None,
    )
    for group, report in reports:
        kind = " (raw vectors)" if group.raw else ""
        what = "questions" if group.role == "query" else "passages"
        print(
            f"{printable(group.name)} {what}{kind}: {report.distinct} distinct texts, "
            f"{report.cached} were in the cache, {report.embedded} embedded in "
            f"{report.seconds:.1f} s"
        )
    total = sum(r.embedded for _, r in reports)
    print(
        f"plan {printable(args.plan)}: {len(reports)} groups, {total} texts embedded ({cache.root})"
    )
    return 0


def _passages(args: argparse.Namespace) -> tuple[str, list[str]]:
    """The corpus's name and its passage texts: the corpus and its hierarchy are let go
    before embedding (the driver of a long run holds the texts and keys only)."""
    bundle = load(args.corpus, questions=False)  # questions are to evaluate, not to search
    hierarchy = build_hierarchy(
        bundle.corpus, args.max_chars, args.overlap_chars, heading_styles=bundle.heading_styles
    )
    return bundle.corpus.name, corpus_passages(hierarchy)


def _closed_pipe() -> int:
    """Standard output's reader is gone: point stdout at /dev/null so that the
    interpreter's own flush at exit does not fail too, and exit quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a file descriptor (in tests)
        pass
    return CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 on a usage error or an input the package refuses
        (argparse exits with 2 itself on malformed arguments), 130 when
        interrupted (Ctrl-C), :data:`CLOSED_PIPE` (141) without a word when
        standard output is a pipe its reader closed (``| head -1``).
    """
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    cache = VectorCache(args.cache_dir)
    run = _embed if args.command == "embed" else _search
    try:
        status = run(args, cache)
        sys.stdout.flush()  # a closed pipe shows here, not in the flush at exit
        return status
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:
        print(
            f"hierret {args.command}: interrupted; the vector cache keeps the {cache.stats.stored} "
            f"new vector(s) this run stored, batch by batch, and those of earlier runs (in "
            f"{cache.root}), so the next run embeds only the rest",
            file=sys.stderr,
        )
        return 130
    except (ValueError, TypeError, OSError, EngineUnavailableError) as err:
        return _usage_error(str(err), args.command)
