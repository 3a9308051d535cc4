"""Running the ``hierret`` command line: :func:`main`, its two commands, their exit statuses.

Private to :mod:`hierret.cli`, whose face lists the public names.

Its example, both commands run on the Python reference, is the face's
(:mod:`hierret.cli`): one run of it, not two.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence

from hierret.cli._parser import build_parser, profile_from_args
from hierret.cli._text import format_hit, printable
from hierret.datasets.bundle import load
from hierret.encoders.cache import VectorCache, cached_encoder
from hierret.encoders.embed.local import (
    EngineUnavailableError,
    RayOptions,
    check_engine,
    corpus_passages,
    embed_plan,
    embed_texts,
)
from hierret.encoders.embed.stream import CorpusSource, embed_corpus, streamable
from hierret.search.profile import Profile
from hierret.search.searcher import Searcher
from hierret.structure.hierarchy import build_hierarchy

__all__ = ["CLOSED_PIPE", "main"]

#: Exit status when the reader of the output goes away early (``hierret search ... |
#: head -1``): 128 + SIGPIPE (13), what a shell reports for any tool a closed pipe
#: stops, so a script under ``set -o pipefail`` can tell the output was cut. Nothing
#: is printed about it: the reader asked for no more.
CLOSED_PIPE = 141


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
    show = False if args.no_progress else None
    if args.engine == "ray" and streamable(args.corpus) is not None:
        # a BEIR corpus: this process keeps keys and locators, the actors read the texts
        source = CorpusSource.of(args.corpus, args.max_chars, args.overlap_chars)
        encoder = cached_encoder(args.encoder, cache)
        name = source.name
        report = embed_corpus(
            source, encoder, model=args.encoder, show_progress=show, ray=options, shard=args.shard
        )
    else:
        name, texts = _passages(args)
        encoder = cached_encoder(args.encoder, cache)
        report = embed_texts(
            texts,
            encoder,
            engine=args.engine,
            model=args.encoder,
            show_progress=show,
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
