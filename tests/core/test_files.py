"""Atomic writes (hierret._files): all or nothing, modes as open() gives them."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from hierret._files import TEMP_PREFIX, atomic_write


@pytest.fixture
def umask_002() -> Iterator[None]:
    old = os.umask(0o002)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_bytes_text_and_writer_output(tmp_path: Path) -> None:
    assert atomic_write(tmp_path / "b", b"\x00\xff").read_bytes() == b"\x00\xff"
    assert (atomic_write(tmp_path / "t", "é\n")).read_bytes() == "é\n".encode()
    assert atomic_write(tmp_path / "w", lambda f: f.writelines([b"a", b"b"])).read_bytes() == b"ab"


@pytest.mark.usefixtures("umask_002")
def test_modes_follow_the_umask_like_open(tmp_path: Path) -> None:
    with open(tmp_path / "plain", "wb"):
        pass
    assert _mode(atomic_write(tmp_path / "f", b"x")) == _mode(tmp_path / "plain") == 0o664
    assert _mode(atomic_write(tmp_path / "x", b"x", executable=True)) == 0o775
    os.umask(0o022)
    assert _mode(atomic_write(tmp_path / "f", b"y")) == 0o644  # a replaced file gets the new mode


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt, OSError])
def test_a_failing_writer_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = atomic_write(tmp_path / "f", b"old")

    def half(f: BinaryIO) -> None:
        f.write(b"new, half")
        raise error("stop")

    with pytest.raises(error):
        atomic_write(target, half)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_a_failed_replace_removes_the_temporary(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()  # os.replace cannot put a file over a folder
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path / "d", b"x")
    assert not list(tmp_path.glob(TEMP_PREFIX + "*"))


def test_a_missing_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        atomic_write(tmp_path / "nope" / "f", b"x")
