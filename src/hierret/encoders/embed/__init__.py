"""Embedding a corpus ahead of search: ``hierret embed``.

:func:`embed_texts` embeds the texts an encoder's cache lacks, batch by batch,
storing each batch as it is made (:class:`EmbedReport` counts them);
:func:`corpus_passages` gives the passage texts a search of a corpus embeds,
and :func:`shard_of` with :func:`parse_shard` splits the work over independent
jobs. The engine (:data:`ENGINES`, :func:`check_engine`) is ``"local"`` (this
process) or ``"ray"``: a pool of Ray Data actors (:class:`RayOptions`,
:func:`ray_batches`; the extra ``hierret[ray]``), this process staying the
cache's only writer; without Ray it raises :class:`EngineUnavailableError`.
Where its parts live: ``local`` (the embedding loop, shards, the engines' check),
``ray`` (the Ray engine: partitions, actors, the check that a GPU's vectors
equal the CPU's) and ``stream`` (a BEIR corpus embedded without its texts in
this process: :func:`embed_corpus` keeps keys and :class:`Locators`, the
workers read and chunk the texts from the :class:`CorpusSource`); the Ray
library itself is imported only when the Ray engine runs, so neither ``import
hierret`` nor this face imports it. Each name loads its module on first use
(PEP 562).

Examples
--------
>>> import tempfile
>>> from hierret.encoders.cache import CachedEncoder, VectorCache
>>> from hierret.encoders.embed import embed_texts
>>> from hierret.encoders import HashEncoder
>>> with tempfile.TemporaryDirectory() as folder:
...     enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(folder))
...     print(embed_texts(["a cat", "a dog", "a cat"], enc, show_progress=False))
3 texts (2 distinct): 0 in the cache, 2 embedded
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hierret._face as _face

if TYPE_CHECKING:
    from hierret.encoders.embed.local import (
        ENGINES,
        EmbedReport,
        check_engine,
        corpus_passages,
        embed_plan,
        embed_texts,
        parse_shard,
        shard_of,
    )
    from hierret.encoders.embed.ray import (
        BATCH_MULTIPLE,
        PARTITION_TEXTS,
        RAY_PIN,
        EngineUnavailableError,
        RayOptions,
        check_gpu_model,
        partitions,
        ray_batches,
        ray_stream,
        same_vectors,
    )
    from hierret.encoders.embed.stream import (
        CorpusSource,
        Locators,
        embed_corpus,
        missing_rows,
        stream_partitions,
        stream_rows,
        streamable,
    )

#: Each public name and the module that defines it; a name's module loads on first use.
_FACE = {
    "BATCH_MULTIPLE": "hierret.encoders.embed.ray",
    "PARTITION_TEXTS": "hierret.encoders.embed.ray",
    "RAY_PIN": "hierret.encoders.embed.ray",
    "EngineUnavailableError": "hierret.encoders.embed.ray",
    "RayOptions": "hierret.encoders.embed.ray",
    "check_gpu_model": "hierret.encoders.embed.ray",
    "partitions": "hierret.encoders.embed.ray",
    "ray_batches": "hierret.encoders.embed.ray",
    "ray_stream": "hierret.encoders.embed.ray",
    "same_vectors": "hierret.encoders.embed.ray",
    "CorpusSource": "hierret.encoders.embed.stream",
    "Locators": "hierret.encoders.embed.stream",
    "embed_corpus": "hierret.encoders.embed.stream",
    "missing_rows": "hierret.encoders.embed.stream",
    "stream_partitions": "hierret.encoders.embed.stream",
    "stream_rows": "hierret.encoders.embed.stream",
    "streamable": "hierret.encoders.embed.stream",
    "ENGINES": "hierret.encoders.embed.local",
    "EmbedReport": "hierret.encoders.embed.local",
    "check_engine": "hierret.encoders.embed.local",
    "corpus_passages": "hierret.encoders.embed.local",
    "embed_plan": "hierret.encoders.embed.local",
    "embed_texts": "hierret.encoders.embed.local",
    "parse_shard": "hierret.encoders.embed.local",
    "shard_of": "hierret.encoders.embed.local",
}

__all__ = [
    "BATCH_MULTIPLE",
    "ENGINES",
    "PARTITION_TEXTS",
    "RAY_PIN",
    "CorpusSource",
    "EmbedReport",
    "EngineUnavailableError",
    "Locators",
    "RayOptions",
    "check_engine",
    "check_gpu_model",
    "corpus_passages",
    "embed_corpus",
    "embed_plan",
    "embed_texts",
    "missing_rows",
    "parse_shard",
    "partitions",
    "ray_batches",
    "ray_stream",
    "same_vectors",
    "shard_of",
    "stream_partitions",
    "stream_rows",
    "streamable",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so a misspelt name stays an error
    __getattr__, __dir__ = _face.lazy(__name__, _FACE)
