"""The study and publish faces list names, not modules, and load nothing until asked.

Neither ``hierret.publish`` nor ``hierret.study`` lists a module (issue 40: the
study face's last five, ``available``, ``cost``, ``experiment``, ``merging`` and
``router``, left when the notebooks stopped reaching them). Importing either face
loads no other module of the package; a name loads its own module on first use.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

import hierret.publish
import hierret.study

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
    assert sorted(module.__all__) == sorted(names), "__all__ lists what the face loads"
    assert sorted(module.__dir__()) == sorted({*vars(module), *module.__all__})
    loaded = {n: getattr(module, n) for n in module.__all__}
    modules = sorted(n for n, v in loaded.items() if isinstance(v, types.ModuleType))
    assert modules == [], f"{face} lists modules: {modules}; list their names instead"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        module.nothing  # noqa: B018


def test_the_faces_list_what_notebooks_call_about_25_and_12_names() -> None:
    assert len(hierret.publish.__all__) <= 12, "a notebook's publish names: about 12"
    # 27: the names the six notebooks call (issue 40: about 25), after the slimmer
    # notebooks' study objects joined and the names no notebook calls left
    assert len(hierret.study.__all__) <= 27, "a notebook's study names"
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
