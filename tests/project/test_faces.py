"""The study and publish faces list names, not modules, and load nothing until asked.

``hierret.publish`` lists no module; ``hierret.study`` lists only the study
modules a notebook still reaches (:data:`hierret.study.MODULES`), a list that may
only shrink as each becomes one study object. Importing either face loads no
other module of the package; a name loads its own module on first use.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

import hierret.publish
import hierret.study

#: The study modules still on the study face: this list may only shrink.
STUDY_MODULES_LEFT = 5


FACES = [
    "hierret.study",
    "hierret.publish",
    "hierret.study.site_build",
    "hierret.publish.site_build",
]


@pytest.mark.parametrize("face", FACES)
def test_a_face_lists_names_each_of_which_loads(face: str) -> None:
    module = importlib.import_module(face)
    names = vars(module).get("_FACE", vars(module).get("SITE"))
    listed = {**names, **dict.fromkeys(getattr(module, "MODULES", ()))}
    assert sorted(module.__all__) == sorted(listed), "__all__ lists what the face loads"
    assert sorted(module.__dir__()) == sorted({*vars(module), *module.__all__})
    loaded = {n: getattr(module, n) for n in module.__all__}
    modules = sorted(n for n, v in loaded.items() if isinstance(v, types.ModuleType))
    assert modules == sorted(getattr(module, "MODULES", ()))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        module.nothing  # noqa: B018


def test_the_publish_face_lists_no_module_and_the_study_face_fewer() -> None:
    assert not hasattr(hierret.publish, "MODULES")
    assert len(hierret.study.MODULES) <= STUDY_MODULES_LEFT
    assert len(hierret.publish.__all__) <= 12, "a notebook's publish names: about 12"
    # 38: Lesson, Chunking, Embedders, Costs, identity_guard, Hierarchies, LateChunking and
    # Reranking added (issue 40's slimmer notebooks); the names no notebook calls any more
    # leave when the face is pruned
    assert len(hierret.study.__all__) <= 38, "a notebook's study names and modules left"
    import hierret.publish.site_build as publish_site
    import hierret.study.site_build as study_site

    assert set(hierret.publish.__all__).isdisjoint(publish_site.__all__)
    assert set(hierret.study.__all__).isdisjoint(study_site.__all__)


#: What every import of the package loads beside the face itself: ``hierret._face``, the
#: one helper every face builds its ``__getattr__``/``__dir__`` with (standard library
#: only, so it costs nothing), rather than each face writing the same dozen lines; and
#: ``hierret._moved``, which ``import hierret`` installs so that the module paths issue 40
#: moved into concept packages still import, with a warning, for one release (standard
#: library only too; a module of its own, so that it goes in one piece).
SHARED = ("hierret", "hierret._face", "hierret._moved")


@pytest.mark.parametrize("face", FACES)
def test_importing_a_face_loads_nothing_else(face: str) -> None:
    """Importing a face loads itself (and its package's face) and :data:`SHARED` only."""
    parent = face.rsplit(".", 1)[0] if face.endswith("site_build") else face
    code = (
        f"import sys, {face}; print(sorted(m for m in sys.modules "
        f"if m.startswith('hierret') and m not in ({SHARED!r} + ({parent!r}, {face!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_renamed_name_is_its_module_s_object() -> None:
    from hierret.publish.site_build import timing_table
    from hierret.publish.timing import table

    assert timing_table is table
