"""The house vocabulary: what a parameter name means in every notebook (:data:`RULES`),
and the names the package knows today (:data:`CORPUS`, :data:`BEIR`, :data:`ENCODER`,
read from the loaders and the encoder registry when a check runs).

Built from the kinds of rule of :mod:`hierret.study.rules`; checked by
:mod:`hierret.study.params`, whose face lists every public name here. The run
sizes are :mod:`hierret.study.sizes`'.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hierret.study.rules import Choices, Rule, among, at_least, below, between, each, is_count
from hierret.study.sizes import SIZES

if TYPE_CHECKING:
    from hierret.datasets import Bundle

__all__ = [
    "BEIR",
    "CORPUS",
    "ENCODER",
    "RERANKER_NAMES",
    "RULES",
    "TOKEN_VECTORS",
    "judged_at",
]


def _corpus_names() -> list[str]:
    from hierret.datasets import source_names

    return source_names()


def _beir_names() -> list[str]:
    from hierret.datasets.beir import BEIR_DOWNLOADS

    return sorted(BEIR_DOWNLOADS)


def _encoder_names() -> list[str]:
    from hierret.encoders.registry import registered_encoders

    return registered_encoders()


def _is_folder(value: str) -> bool:
    return Path(value).expanduser().is_dir()


def _is_path(value: str) -> bool:
    return Path(value).expanduser().exists()


def _is_folder_or_hub_id(value: str) -> bool:
    return "/" in value.strip() or _is_folder(value)


#: Corpora :func:`~hierret.datasets.load` loads: a name of
#: :func:`~hierret.datasets.source_names`, or a BEIR folder, a Qasper file or a
#: folder of documents with questions.jsonl.
CORPUS = Choices(
    _corpus_names,
    other=_is_path,
    other_text="a BEIR folder, a Qasper JSON file, or a folder of Markdown/RST/text documents "
    "with questions.jsonl",
)
#: BEIR dataset names :func:`~hierret.datasets.load_beir` downloads, or a BEIR folder.
BEIR = Choices(_beir_names, other=_is_folder, other_text="a BEIR folder")
#: Encoder names :func:`~hierret.encoders.load_encoder` knows (case-blind), or a
#: sentence-transformers folder or hub id.
ENCODER = Choices(
    _encoder_names,
    other=_is_folder_or_hub_id,
    fold_case=True,
    other_text="a sentence-transformers folder or hub id 'org/model'",
)


def _nonempty(v: object, _: Mapping[str, object]) -> bool:
    return isinstance(v, list | tuple) and len(v) > 0


#: What a parameter name means in every notebook (the house vocabulary): the
#: values it accepts, checked with the parameters wherever a notebook declares
#: the name, before any work.
RULES: dict[str, Rule] = {
    "max_chars": at_least(1),
    "overlap_chars": below("max_chars"),
    "max_queries": at_least(1, none=True),
    "seed": at_least(0),
    "confidence": between(0, 1, open_ends=True),
    "n_resamples": at_least(1),
    "rrf_k": at_least(0),
    "pool": at_least(1),
    "candidates": at_least(1),
    "k": at_least(1),
    "folds": at_least(2),
    "min_keep": at_least(0),
    "top_k": at_least(1, none=True),
    "latency_queries": at_least(1),
    "throughput_texts": at_least(1),
    "variation_texts": at_least(1),
    "cost_passages": at_least(1),
    "merge_candidates": at_least(1),
    "overlap_tokens": at_least(0),
    "scifact_docs": at_least(1, none=True),
    "section_weight": between(0, 1),
    "sweep_weights": each(between(0, 1)),
    "thresholds": each(between(0, 1)),
    "sizes": each(at_least(1)),
    "chunk_chars": each(at_least(1)),
    "k_values": each(at_least(1)),
    "sampled": each(at_least(1), nonempty=False),
    "corpora": Rule(_nonempty, lambda _: "a non-empty list"),
    "encoders": Rule(_nonempty, lambda _: "a non-empty list"),
    "weight_sweep_corpus": among("corpora"),
    "baseline": among("encoders"),
}


def _max_docs(v: object, _: Mapping[str, object]) -> bool:
    if isinstance(v, dict):
        return all(x is None or (is_count(x) and int(x) >= 1) for x in v.values())
    return v is None or (is_count(v) and int(v) >= 1)  # type: ignore[call-overload]


RULES["max_docs"] = Rule(
    _max_docs, lambda _: "a whole number >= 1, None (all), or a dict of corpus to either"
)


def _sample_key(values: Mapping[str, object]) -> str:
    keys = ("corpus", "max_queries", "max_docs", "seed")
    return json.dumps({k: values.get(k) for k in keys}, sort_keys=True, default=str)


@functools.lru_cache(maxsize=4)
def _bundle(sample: str) -> Bundle | None:
    """A corpus as the notebook samples it, or ``None`` when it does not load here
    (the loader explains why when the notebook runs)."""
    from hierret.datasets import load

    given = json.loads(sample)
    corpus = given.pop("corpus")
    try:
        return load(corpus, **{k: v for k, v in given.items() if v is not None})
    except Exception:  # a corpus that does not load is the loader's to explain
        return None


def _document_ids(sample: str) -> tuple[str, ...] | None:
    bundle = _bundle(sample)
    return None if bundle is None else tuple(d.id for d in bundle.corpus)


def _a_document(v: object, values: Mapping[str, object]) -> bool:
    if v is None or "corpus" not in values:  # None: the longest; a refused corpus: said
        return True
    ids = _document_ids(_sample_key(values))
    return ids is None or v in ids


def _documents_text(values: Mapping[str, object]) -> str:
    ids = _document_ids(_sample_key(values)) or ()
    some = ", ".join(map(repr, ids[:4]))
    return (
        f"None (the corpus's longest document) or a document of corpus "
        f"{values.get('corpus')!r} as sampled ({len(ids)}: {some}, ...)"
    )


RULES["document"] = Rule(_a_document, _documents_text, takes_none=True)


def _token_vectors(v: object, _: Mapping[str, object]) -> bool:
    from hierret.encoders import registered_encoders
    from hierret.encoders.sentence_transformers import MINILM_ALIASES

    if not ENCODER.accepts(v):  # a name nothing loads
        return False
    name = str(v).strip().lower()
    return name in MINILM_ALIASES or name not in {n.lower() for n in registered_encoders()}


#: An encoder whose token vectors can be read (late chunking, MaxSim): a
#: sentence-transformers model, not an engine that embeds whole texts only.
TOKEN_VECTORS = Rule(
    _token_vectors,
    lambda _: (
        "a sentence-transformers model, whose token vectors late chunking and MaxSim read "
        "(all-MiniLM-L6-v2, or a hub id or folder); minilm-int8, minilm-w8a8, e5-small and "
        "wordllama embed whole texts only"
    ),
)
RULES["maxsim_encoder"] = TOKEN_VECTORS


def _first_stage(v: object, _: Mapping[str, object]) -> bool:
    from hierret.search.profile import RANKERS

    ranker, colon, encoder = str(v).partition(":")
    return bool(colon) and ranker in RANKERS and ENCODER.accepts(encoder)


RULES["first_stages"] = each(
    Rule(_first_stage, lambda _: "'ranker:encoder', a ranker of hierret.RANKERS and an encoder")
)
#: The rerankers DR-003 builds by name (cross-encoders come by ``cross_encoders``).
RERANKER_NAMES = ("none", "maxsim", "e5-rescore")
RULES["rerankers"] = each(
    Rule(
        lambda v, _: v in RERANKER_NAMES,
        lambda _: f"one of {', '.join(RERANKER_NAMES)} (cross-encoders: cross_encoders)",
    )
)
RULES["maxsim_reduce"] = Rule(lambda v, _: v in ("mean", "sum"), lambda _: "'mean' or 'sum'")

RULES["size"] = Rule(lambda v, _: v in SIZES, lambda _: "'smoke', 'class' or 'reference'")


def judged_at(level: str) -> Rule:
    """A ``corpus`` whose questions judge ``level``: DR-001 compares passages and sections,
    which a corpus judged at documents only (BEIR) cannot inform.

    Examples
    --------
    >>> judged_at("passages").problem("corpus", "python-reference",
    ...                               {"corpus": "python-reference", "max_queries": 3})
    """

    def holds(v: object, values: Mapping[str, object]) -> bool:
        bundle = _bundle(_sample_key({**values, "corpus": v}))
        return bundle is None or level in bundle.targets

    def describe(values: Mapping[str, object]) -> str:
        bundle = _bundle(_sample_key(values))
        now = (
            ""
            if bundle is None
            else f" ({values.get('corpus')!r} is judged at {', '.join(bundle.targets)} only)"
        )
        return (
            f"a corpus whose questions judge {level}: quoted evidence (python-reference, "
            "qasper, scifact-sections, or a folder whose questions quote their evidence)" + now
        )

    return Rule(holds, describe)
