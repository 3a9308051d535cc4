"""What embedding a corpus costs past one machine: the cost model of ``hierret embed``.

The model (:meth:`CostModel.seconds`)::

    time = start-up + model load + texts / (workers x throughput x efficiency) + write

- **start-up**: starting the engine (for Ray: the local cluster and the actor
  pool), paid once;
- **model load**: one worker loading the encoder (workers load at the same
  time, so it is paid once);
- **throughput**: texts per second of *one* worker (one CPU core);
- **efficiency**: the share of that throughput each worker keeps when
  ``workers`` run at once (1 for one worker; measured from 1 to 2 workers,
  :func:`efficiency`, and assumed to hold beyond, which no measurement here
  can check: an optimistic bound for more workers sharing a machine's memory);
- **write**: the driver, the cache's only writer, storing each vector
  (:func:`record_bytes` on disk each), in seconds per text; it does not
  shrink with more workers.

Beside the time, the model holds the **driver's memory**
(:meth:`CostModel.driver_bytes`): bytes per text the driver process holds at
its peak, times the texts of one job (a corpus split by ``--shard i/n`` into
``n`` jobs holds ``1/n`` of it in each driver), plus what it holds whatever
the corpus's size. With a BEIR corpus streamed (:mod:`hierret.encoders.embed.stream`)
the driver holds keys and locators, tens of bytes a passage, and a fixed
part (the documents it chunks at a time); with texts held in the driver (the
in-driver path), the texts themselves at their peak.

Texts are what the package embeds: *passages*, not documents. A corpus counted
in documents (the BEIR suite) becomes passages with :func:`passages`, at a
number of passages per document measured where the corpus is at hand and
assumed elsewhere; a corpus that several datasets share (FEVER and
Climate-FEVER search one Wikipedia dump) is embedded once
(:func:`distinct_corpora`).

The throughputs come from the package's records, measured with every core of
the machine that wrote them (``cores``, 2 here): :func:`worker_throughput`
takes such a rate as ``cores`` workers at the measured efficiency, so that the
model reproduces the record's own rate at ``cores`` workers.

Examples
--------
>>> model = CostModel(startup_s=2.0, load_s=1.0, throughput=10.0, efficiency=0.8,
...                   write_s_per_text=0.001)
>>> model.seconds(1000, workers=1)
104.0
>>> model.seconds(1000, workers=2)
66.5
>>> record_bytes(384)
1584
>>> model.driver_bytes(1000, bytes_per_text=2000.0, shards=4)
500000.0
>>> passages(5183, 2.36)
12232
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hierret.encoders.cache import KEY_INDEX_BYTES

__all__ = [
    "CostModel",
    "distinct_corpora",
    "efficiency",
    "passages",
    "record_bytes",
    "throughput_range",
    "worker_throughput",
]

#: Bytes of a cache record besides its vector: the 32-byte key and the 4-byte crc32.
RECORD_OVERHEAD_BYTES = 32 + 4


@dataclass(frozen=True)
class CostModel:
    """One encoder's cost of embedding ``texts`` on ``workers`` workers.

    Attributes
    ----------
    startup_s : float
        Seconds to start the engine.
    load_s : float
        Seconds for a worker to load the encoder.
    throughput : float
        Texts per second of one worker, alone.
    efficiency : float
        The share of ``throughput`` each of several workers keeps (0 < e <= 1
        is expected; more than 1 is allowed: measured, not assumed).
    write_s_per_text : float
        Seconds for the driver to store one vector.
    """

    startup_s: float
    load_s: float
    throughput: float
    efficiency: float
    write_s_per_text: float

    def __post_init__(self) -> None:
        if self.throughput <= 0 or self.efficiency <= 0:
            raise ValueError(
                f"throughput and efficiency must be positive, got {self.throughput} and "
                f"{self.efficiency}"
            )

    def seconds(self, texts: int, workers: int) -> float:
        """Predicted wall seconds to embed ``texts`` texts with ``workers`` workers.

        Examples
        --------
        >>> CostModel(0.0, 0.0, 5.0, 0.5, 0.0).seconds(100, workers=4)
        10.0
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        share = 1.0 if workers == 1 else self.efficiency
        compute = texts / (workers * self.throughput * share)
        return self.startup_s + self.load_s + compute + texts * self.write_s_per_text

    @staticmethod
    def driver_bytes(
        texts: int, bytes_per_text: float, shards: int = 1, fixed_bytes: float = 0.0
    ) -> float:
        """Peak bytes the driver holds for ``texts`` texts split into ``shards`` jobs.

        Each job's driver holds its own share (the largest, ``ceil(texts / shards)``)
        at ``bytes_per_text``, plus ``fixed_bytes`` whatever the corpus's size
        (both measured: ``tests/benchmarks/driver_memory.py``); the number of
        workers does not change it.

        Examples
        --------
        >>> CostModel.driver_bytes(10, bytes_per_text=100.0, shards=3)
        400.0
        >>> CostModel.driver_bytes(10, bytes_per_text=100.0, fixed_bytes=50.0)
        1050.0
        """
        if shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards}")
        if bytes_per_text < 0 or fixed_bytes < 0:
            raise ValueError(
                f"bytes_per_text and fixed_bytes must not be negative, got {bytes_per_text} "
                f"and {fixed_bytes}"
            )
        return -(-texts // shards) * bytes_per_text + fixed_bytes


def efficiency(one_s: float, two_s: Sequence[float]) -> float:
    """Each worker's share of its throughput when two run at once: the same work
    taking ``one_s`` seconds alone and ``two_s`` (one time per worker) side by side.

    The slower of the two counts (the run ends with it).

    Examples
    --------
    >>> efficiency(10.0, [12.5, 11.0])
    0.8
    """
    if len(two_s) != 2:
        raise ValueError(f"give the two workers' times, got {len(two_s)}")
    return one_s / max(two_s)


def worker_throughput(machine_rate: float, cores: int, eff: float) -> float:
    """One worker's throughput from a rate measured on a machine of ``cores`` cores,
    all busy: ``machine_rate / (cores x eff)``.

    Examples
    --------
    >>> worker_throughput(16.0, cores=2, eff=0.8)
    10.0
    """
    return machine_rate / (cores * (1.0 if cores == 1 else eff))


def throughput_range(values: Mapping[str, float], names: Sequence[str]) -> tuple[float, float]:
    """The lowest and highest of the record ``values`` under ``{name}_pps`` for the
    ``names`` given (those present).

    Examples
    --------
    >>> throughput_range({"cost_a_m_pps": 3.0, "cost_b_m_pps": 5.0, "cost_a_x_pps": 9.0},
    ...                  ["cost_a_m", "cost_b_m"])
    (3.0, 5.0)
    """
    found = [float(values[f"{n}_pps"]) for n in names if f"{n}_pps" in values]
    if not found:
        raise ValueError(f"no throughput among {list(names)} in the values given")
    return min(found), max(found)


def passages(documents: int, per_document: float) -> int:
    """Passages the package embeds for a corpus of ``documents`` documents, at
    ``per_document`` passages a document (rounded to the nearest passage).

    Examples
    --------
    >>> passages(171332, 1.0)
    171332
    """
    if documents < 0 or per_document <= 0:
        raise ValueError(
            f"documents must not be negative and per_document must be positive, got "
            f"{documents} and {per_document}"
        )
    return round(documents * per_document)


def distinct_corpora(corpora: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ``corpora`` that are embedded, each once: an entry with
    ``same_corpus_as`` (the name of another entry, whose corpus it searches) is
    left out.

    Raises
    ------
    ValueError
        A ``same_corpus_as`` names no entry of ``corpora``.

    Examples
    --------
    >>> suite = [{"name": "FEVER", "passages": 5}, {"name": "Climate-FEVER", "passages": 5,
    ...          "same_corpus_as": "FEVER"}]
    >>> [c["name"] for c in distinct_corpora(suite)]
    ['FEVER']
    """
    names = {c["name"] for c in corpora}
    for c in corpora:
        other = c.get("same_corpus_as")
        if other is not None and other not in names:
            raise ValueError(
                f"{c['name']} shares the corpus of {other!r}, which is not among the corpora "
                f"({sorted(names)}): name an entry, or drop same_corpus_as"
            )
    return [c for c in corpora if c.get("same_corpus_as") is None]


def record_bytes(dimension: int) -> int:
    """Bytes on disk of one cached vector of ``dimension`` float32 values: the record
    (key, vector, crc32) and its key-index entry (:mod:`hierret.encoders.cache`)."""
    return RECORD_OVERHEAD_BYTES + 4 * dimension + KEY_INDEX_BYTES
