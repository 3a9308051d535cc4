"""A plan of what a run would embed, made without embedding: the warm-up's first half.

With ``$HIERRET_PLAN`` naming a folder, a :class:`~hierret.encoders.cache.CachedEncoder`
that misses texts does not embed them. It writes them to a plan file in that
folder, one JSON line per call (the encoder's registered name and options, its
identity, the role, whether the model's raw vectors were asked for, the
texts), and hands back stand-in unit vectors (:func:`stand_ins`: a fixed
function of each text's cache key), which are never stored. A run made this
way (a notebook, a whole ``reproduce``) takes minutes instead of hours, its
numbers mean nothing, and the plan lists what it would have embedded;
``hierret embed --plan FOLDER`` then embeds that list, on a Ray cluster if
asked, and ``docs/warm.py`` repeats both until a planning run misses nothing
(a text chosen by a ranking, such as a reranker's candidate, is only seen once
the vectors it depends on are real).

Only vectors of a :class:`~hierret.encoders.cache.CachedEncoder` whose registered name
is known (:func:`~hierret.encoders.cache.cached_encoder`, or a study's encoders) are
planned; any other embedding (token vectors for late chunking and MaxSim, an
encoder made by hand) happens for real while planning, and is cached as usual.

Examples
--------
>>> import tempfile
>>> from hierret.encoders import EncoderIdentity
>>> tmp = tempfile.TemporaryDirectory()
>>> ident = EncoderIdentity("m", "hash", "v1", "fp32", 4, 16)
>>> plan = Plan(tmp.name)
>>> plan.add(("hash", {"dimension": 4}), ident, "passage", False, ["a", "b"])
>>> plan.add(("hash", {"dimension": 4}), ident, "passage", False, ["b", "c"])
>>> [(g.name, g.role, g.texts) for g in read_plan(tmp.name)]
[('hash', 'passage', ['a', 'b', 'c'])]
>>> v = stand_ins([bytes(32), bytes(range(32))], 4)
>>> v.shape, bool(np.allclose(np.linalg.norm(v, axis=1), 1.0))
((2, 4), True)
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hierret.encoders.base import EncoderIdentity, Role

__all__ = ["PLAN_ENV", "Plan", "PlanGroup", "active_plan", "read_plan", "stand_ins"]

#: The variable naming a plan folder: set, cached encoders plan instead of embedding.
PLAN_ENV = "HIERRET_PLAN"

#: Where an encoder comes from: its registered name and the options it was made with.
Source = tuple[str, Mapping[str, Any]]


def active_plan() -> Plan | None:
    """The plan ``$HIERRET_PLAN`` names, or ``None`` when it is unset or empty."""
    folder = os.environ.get(PLAN_ENV, "").strip()
    return Plan(folder) if folder else None


def stand_ins(keys: Sequence[bytes], dimension: int) -> NDArray[np.float32]:
    """Unit vectors that stand in for the ones a plan leaves out: each a fixed function
    of its text's cache key (the same on every run and machine), never stored."""
    rows = np.empty((len(keys), dimension), dtype=np.float32)
    for i, key in enumerate(keys):
        v = np.random.default_rng(int.from_bytes(key[:8], "big")).standard_normal(dimension)
        rows[i] = v / np.linalg.norm(v)
    return rows


@dataclass
class PlanGroup:
    """The texts one encoder would embed in one role (raw vectors apart).

    Parameters
    ----------
    name : str
        The encoder's registered name (:func:`~hierret.encoders.cache.cached_encoder`).
    options : dict
        The options it was made with.
    identity : EncoderIdentity
        The identity the planning run's encoder had; the embedding run checks it.
    role : {"passage", "query"}
    raw : bool
        The model's own vectors (before normalisation) were asked for.
    texts : list of str
        Distinct, in the order first asked for.
    """

    name: str
    options: dict[str, Any]
    identity: EncoderIdentity
    role: Role
    raw: bool
    texts: list[str] = field(default_factory=list)


class Plan:
    """A plan folder: each process appends its misses to a file of its own.

    Parameters
    ----------
    folder : str or path-like
        Created on the first miss.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def add(
        self, source: Source, identity: EncoderIdentity, role: Role, raw: bool, texts: list[str]
    ) -> None:
        """Append one call's missing ``texts`` (one JSON line, flushed at once)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps(
            {
                "name": source[0],
                "options": dict(source[1]),
                "identity": identity.as_dict(),
                "role": role,
                "raw": raw,
                "texts": texts,
            },
            ensure_ascii=False,
        )
        with open(self.folder / f"plan-{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
            f.write(line + "\n")


def read_plan(folder: str | os.PathLike[str]) -> list[PlanGroup]:
    """The groups of a plan folder, each text once, in the order the files list them.

    A line cut short (a planning run killed while writing it) is skipped: its
    texts are asked for again by the next planning run.
    """
    groups: dict[str, PlanGroup] = {}
    seen: dict[str, set[str]] = {}
    root = Path(folder)
    for path in sorted(root.glob("plan-*.jsonl")) if root.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            ident = EncoderIdentity.from_dict(entry["identity"])
            key = json.dumps(
                [entry["name"], entry["options"], entry["identity"], entry["role"], entry["raw"]],
                sort_keys=True,
            )
            if key not in groups:
                groups[key] = PlanGroup(
                    entry["name"], entry["options"], ident, entry["role"], entry["raw"]
                )
                seen[key] = set()
            for text in entry["texts"]:
                if text not in seen[key]:
                    seen[key].add(text)
                    groups[key].texts.append(text)
    return list(groups.values())
