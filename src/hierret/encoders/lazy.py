"""An encoder that loads its model only when a text must be embedded.

A warm search (every passage vector and the query's vector already in the
:class:`~hierret.encoders.cache.VectorCache`) needs the encoder's *identity*, to find
the vectors, but not its model. Building the identity of a
sentence-transformers model means loading it, and loading it means importing
torch, transformers and sentence-transformers: about 5 s of a 7 s warm
``hierret search`` on two cores. :class:`LazyEncoder` keeps the identity the
loaded model gave, in a small JSON file (a *manifest*) named by a
:class:`Recipe`: the digest of everything the identity is computed from (the
encoder's name and options, the SHA-256 of every file it reads, the versions
of the packages that run it, and the source of hierret's encoder modules). The
next process with the same recipe reads the identity from there and loads the
model only if a text is missing from the cache.

Any change to an input changes the recipe, so a stale manifest is never used;
and when the model is loaded after all, its identity is compared with the
manifest's and a difference raises an error (the vectors read so far would
belong to another identity) and replaces the manifest.

Examples
--------
>>> import tempfile
>>> from hierret.encoders.base import HashEncoder
>>> tmp = tempfile.TemporaryDirectory()
>>> recipe = Recipe("hash", {"dimension": 8}, files=(), distributions=("numpy",))
>>> loads = []
>>> def make():
...     loads.append(1)
...     return HashEncoder(dimension=8)
>>> LazyEncoder(make, recipe, tmp.name).identity.dimension  # first time: loads it
8
>>> again = LazyEncoder(make, recipe, tmp.name)
>>> again.identity.dimension, len(loads), again.loaded  # from the manifest
(8, 1, False)
>>> again.encode_queries(["cats"]).shape, len(loads), again.loaded  # a text: loads it
((1, 8), 2, True)
>>> tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import hierret._clock as _clock
from hierret._files import atomic_write
from hierret._validate import check_texts
from hierret.encoders.base import (
    Encoder,
    EncoderIdentity,
    Role,
    file_sha256,
    installed_versions,
    source_digest,
)
from hierret.encoders.onnx import FileTokenizer

__all__ = ["IdentityMismatchError", "LazyEncoder", "Recipe"]

log = logging.getLogger(__name__)

_CODE = Path(__file__).resolve().parent


def _code_digest() -> str:
    """SHA-256 over hierret's encoder modules: code that computes identities."""
    return source_digest(_CODE)


@dataclass(frozen=True)
class Recipe:
    """What an encoder's identity is computed from, without loading its model.

    Parameters
    ----------
    name : str
        The registered encoder name.
    options : mapping
        The keyword arguments the encoder is built with (JSON-able).
    files : sequence of Path
        Every file the encoder reads its model from (weights, configuration,
        tokenizer): each one's SHA-256 enters the recipe.
    distributions : sequence of str
        The installed packages that run the model; their versions enter it.

    Examples
    --------
    >>> a = Recipe("m", {"max_length": 128}, (), ("numpy",))
    >>> b = Recipe("m", {"max_length": 256}, (), ("numpy",))
    >>> len(a.key()), a.key() == b.key()
    (16, False)
    """

    name: str
    options: Mapping[str, Any]
    files: Sequence[Path] = field(default=())
    distributions: Sequence[str] = field(default=())

    def key(self) -> str:
        """16 hex digits of SHA-256 over all inputs (file contents included)."""
        blob = {
            "name": self.name,
            "options": dict(self.options),
            "files": [(Path(p).name, os.path.getsize(p), file_sha256(p)) for p in self.files],
            "versions": installed_versions(*self.distributions),
            "code": _code_digest(),
        }
        text = json.dumps(blob, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


class IdentityMismatchError(RuntimeError):
    """The loaded model's identity differs from the one its manifest recorded."""


class LazyEncoder(Encoder):
    """An encoder whose model is built on first use; its identity is known before.

    Parameters
    ----------
    factory : callable
        Builds the real encoder (called at most once).
    recipe : Recipe
        Names the manifest; see the module notes.
    folder : str or Path
        Where manifests are kept (``identities/`` of the vector cache, for
        :func:`hierret.encoders.load_encoder_lazily`). A folder that cannot be
        written only costs the next process a model load.
    tokenizer : FileTokenizer, optional
        The model's own tokenizer file, read by the ``tokenizers`` library:
        token counts (which every search takes, to warn about truncated
        questions), token offsets and the special-token count (which token
        windows take) then need no model before it is loaded. Without one,
        they load the model.

    Attributes
    ----------
    loaded : bool
        Whether the model has been built.
    """

    def __init__(
        self,
        factory: Callable[[], Encoder],
        recipe: Recipe,
        folder: str | os.PathLike[str],
        tokenizer: FileTokenizer | None = None,
    ) -> None:
        self._factory = factory
        self._tokens = tokenizer
        self._recipe = recipe
        self._folder = Path(folder)
        self._encoder: Encoder | None = None
        self._identity_value: EncoderIdentity | None = None
        self._manifest_path: Path | None = None

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    @property
    def manifest(self) -> Path:
        """The manifest file of this recipe."""
        if self._manifest_path is None:
            self._manifest_path = self._folder / f"{self._recipe.name}-{self._recipe.key()}.json"
        return self._manifest_path

    @property
    def identity(self) -> EncoderIdentity:
        if self._identity_value is None:
            self._identity_value = self._read_manifest()
        if self._identity_value is None:
            self._identity_value = self.encoder.identity
        return self._identity_value

    @property
    def encoder(self) -> Encoder:
        """The real encoder, built now if it was not yet (its identity checked)."""
        if self._encoder is None:
            with _clock.stage("models"):
                self._encoder = self._factory()
            real = self._encoder.identity
            recorded, self._identity_value = self._identity_value, real
            if recorded is None or recorded != real:
                self._write_manifest(real)
            if recorded is not None and recorded != real:
                raise IdentityMismatchError(
                    f"{self.manifest} recorded the identity {recorded.describe()}, but the "
                    f"model loaded now has {real.describe()}: its recipe missed an input "
                    "that changes vectors. The manifest now holds the new identity; run "
                    "again (and report this as a hierret bug)."
                )
        return self._encoder

    def _read_manifest(self) -> EncoderIdentity | None:
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
            return EncoderIdentity.from_dict(data["identity"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as err:  # damaged: rebuilt on load
            log.warning("ignoring the damaged encoder manifest %s (%s)", self.manifest, err)
            return None

    def _write_manifest(self, identity: EncoderIdentity) -> None:
        data = {"recipe": self._recipe.name, "identity": identity.as_dict()}
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.manifest, json.dumps(data, indent=1, sort_keys=True))
        except OSError as err:  # read-only cache: the next process loads the model again
            log.debug("could not write the encoder manifest %s (%s)", self.manifest, err)

    @property
    def file_tokenizer(self) -> FileTokenizer | None:
        """The tokenizer file that answers for the model while it is not loaded, or None."""
        return self._tokenizer_file()

    def _tokenizer_file(self) -> FileTokenizer | None:
        # the file answers only while the model is not loaded; afterwards the model does
        return self._tokens if self._encoder is None else None

    @property
    def n_special_tokens(self) -> int:
        tokens = self._tokenizer_file()
        return self.encoder.n_special_tokens if tokens is None else tokens.n_special_tokens

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return self.encoder._embed(texts)

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        return self.encoder._embed_batches(texts)

    def encode_batches(
        self, texts: Sequence[str], role: Role = "passage", *, normalized: bool = True
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.float32]]]:
        # the real encoder's own: its identity checked before any vector is made
        return self.encoder.encode_batches(texts, role, normalized=normalized)

    def encode(self, texts: Sequence[str], role: Role = "passage") -> NDArray[np.float32]:
        # the real encoder's own encode: its identity checked before any vector is made
        return self.encoder.encode(texts, role)

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        tokens = self._tokenizer_file()
        return self.encoder._token_offsets(text) if tokens is None else tokens.offsets(text)

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        tokens = self._tokenizer_file()
        if tokens is None:
            return self.encoder.count_tokens(texts, role)
        prefix = self.identity.prefix(role)
        return tokens.count([prefix + t for t in check_texts(texts)])

    def __getattr__(self, name: str) -> Any:
        # tokenizer, batch_size, ...: whatever the real encoder has
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.encoder, name)

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded"
        return f"LazyEncoder({self._recipe.name!r}, {state})"
