"""The lazy face, written once: a package's names, each loading its module on first use.

A *face* is a package's ``__init__`` (or a module such as
``hierret.publish.site_build``) that lists its public names and the module that
defines each, and imports none of those modules until a name is used (PEP 562),
so importing the face costs nothing. Every face of hierret builds its
``__getattr__`` and ``__dir__`` with :func:`lazy` from its table: a name maps to
the module defining it (the object of the same name there, or that module itself
when the module is ``{face}.{name}``), or to ``(module, attribute)`` when the face
renames it. Standard library only, so a face loads nothing but this module.

A face keeps ``if TYPE_CHECKING:`` imports of the same names and defines the two
functions under ``if not TYPE_CHECKING:``, so mypy types each name from its module
and a misspelt name stays an error.

Examples
--------
>>> import sys, types
>>> face = types.ModuleType("demo_face")
>>> sys.modules["demo_face"] = face
>>> face.__getattr__, face.__dir__ = lazy(
...     "demo_face", {"dedent": "textwrap", "dumps_json": ("json", "dumps")}
... )
>>> import demo_face
>>> demo_face.dedent("  a")
'a'
>>> demo_face.dumps_json([1])
'[1]'
>>> [n for n in dir(demo_face) if not n.startswith("__")]
['dedent', 'dumps_json']
>>> demo_face.nothing
Traceback (most recent call last):
...
AttributeError: module 'demo_face' has no attribute 'nothing'
>>> del sys.modules["demo_face"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

#: A face's entry: the module defining the name, or (that module, the name there).
Entry = str | tuple[str, str]


def lazy(
    face: str, table: Mapping[str, Entry]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the module ``face``, loading ``table``'s names lazily.

    Parameters
    ----------
    face
        The face's module name (its ``__name__``); it must be in :data:`sys.modules`
        when a name is first used, as a module is while it runs.
    table
        Each public name and its :data:`Entry`.

    Returns
    -------
    tuple
        ``__getattr__`` (loads a name's module, keeps the value in the face's
        namespace so the next use costs nothing, and raises :class:`AttributeError`
        for a name the table lacks) and ``__dir__`` (the face's names and the table's).

    Examples
    --------
    >>> getattr_, dir_ = lazy("hierret", {"Corpus": "hierret.structure.units"})
    >>> getattr_("Corpus").__name__
    'Corpus'
    """

    def __getattr__(name: str) -> Any:
        entry = table.get(name)
        if entry is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        module_name, attribute = (entry, name) if isinstance(entry, str) else entry
        module = importlib.import_module(module_name)
        value = module if module_name == f"{face}.{name}" else getattr(module, attribute)
        vars(sys.modules[face])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[face]), *table})

    return __getattr__, __dir__
