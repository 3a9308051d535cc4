"""Tests for hierret.datasets.download: data home, checksummed fetch, safe extraction."""

from __future__ import annotations

import hashlib
import io
import math
import socket
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hierret.datasets.download import (
    DEFAULT_DEADLINE,
    ChecksumError,
    CorruptArchiveError,
    DownloadDeadlineError,
    DownloadError,
    UnsafeArchiveError,
    data_home,
    extract_tar,
    extract_zip,
    fetch,
    file_digest,
)

PAYLOAD = b"some dataset bytes\n" * 100
SHA = hashlib.sha256(PAYLOAD).hexdigest()


def _source(tmp_path: Path, data: bytes = PAYLOAD) -> Path:
    src = tmp_path / "remote" / "file.bin"
    src.parent.mkdir(exist_ok=True)
    src.write_bytes(data)
    return src


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- data_home ---------------------------------------------------------------


def test_data_home_prefers_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIERRET_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data_home() == tmp_path / "d"


def test_data_home_falls_back_to_xdg_then_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HIERRET_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data_home() == tmp_path / "xdg" / "hierret"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_home() == tmp_path / "home" / ".cache" / "hierret"


# -- fetch -------------------------------------------------------------------


def test_fetch_downloads_then_uses_cache(tmp_path: Path) -> None:
    src = _source(tmp_path)
    dest = tmp_path / "cache" / "sub" / "file.bin"
    assert fetch(src.as_uri(), SHA, dest, progress=True) == dest
    assert dest.read_bytes() == PAYLOAD
    src.unlink()  # a second fetch must not need the source
    assert fetch(src.as_uri(), SHA.upper(), dest, progress=False).read_bytes() == PAYLOAD
    assert _leftovers(dest.parent) == []


def test_fetch_md5(tmp_path: Path) -> None:
    src = _source(tmp_path)
    md5 = hashlib.md5(PAYLOAD).hexdigest()
    dest = fetch(src.as_uri(), md5, tmp_path / "f", algorithm="md5", progress=False)
    assert file_digest(dest, "md5") == md5


def test_fetch_replaces_corrupt_cached_file(tmp_path: Path) -> None:
    src = _source(tmp_path)
    dest = tmp_path / "cache" / "file.bin"
    dest.parent.mkdir()
    dest.write_bytes(b"truncated")
    fetch(src.as_uri(), SHA, dest, progress=False)
    assert dest.read_bytes() == PAYLOAD


def test_fetch_checksum_mismatch_leaves_nothing(tmp_path: Path) -> None:
    src = _source(tmp_path, b"tampered")
    dest = tmp_path / "cache" / "file.bin"
    with pytest.raises(ChecksumError) as info:
        fetch(src.as_uri(), SHA, dest, progress=False)
    msg = str(info.value)
    assert src.as_uri() in msg
    assert SHA in msg
    assert hashlib.sha256(b"tampered").hexdigest() in msg
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_fetch_network_error_explains_offline_use(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/file.bin"
    dest = tmp_path / "file.bin"
    with pytest.raises(DownloadError) as info:
        fetch(url, SHA, dest, progress=False, timeout=5)
    assert url in str(info.value)
    assert "HIERRET_DATA" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_missing_source(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="could not download"):
        fetch((tmp_path / "absent").as_uri(), SHA, tmp_path / "f", progress=False)


@pytest.fixture
def drip(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A server on 127.0.0.1 that announces 10,000 bytes and sends one every 0.2 s.

    Each response stops by itself after 50 bytes (10 s), so nothing outlives the test.
    The URL path ``/headers`` drips the status line instead of the body.
    """
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/headers":
                data = b"HTTP/1.0 200 OK\r\n" * 10
            else:
                self.send_response(200)
                self.send_header("Content-Length", "10000")
                self.end_headers()
                data = b"x" * 50
            for i in range(50):
                if stop.wait(0.2):
                    return
                try:
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                except OSError:
                    return

        def log_message(self, fmt: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("path", ["/file.bin", "/headers"])
def test_fetch_total_deadline_on_a_dripping_server(drip: str, tmp_path: Path, path: str) -> None:
    dest = tmp_path / "cache" / "file.bin"
    started = time.monotonic()
    with pytest.raises(DownloadDeadlineError, match=r"total deadline of 1 s") as info:
        fetch(drip + path, SHA, dest, progress=False, timeout=5, deadline=1)
    # the deadline ended it, well before the drip's 10 s (the 5 s read timeout never would);
    # not sooner than that: on a busy machine the 1 s deadline is met late
    assert time.monotonic() - started < 8
    assert isinstance(info.value, DownloadError)
    assert drip + path in str(info.value)
    assert "Nothing was kept" in str(info.value)
    assert list(dest.parent.iterdir()) == []


@pytest.mark.parametrize("deadline", [0, -1, math.nan, True])
def test_fetch_rejects_bad_deadlines(tmp_path: Path, deadline: float) -> None:
    with pytest.raises(ValueError, match="deadline must be a positive number"):
        fetch("file:///nowhere", SHA, tmp_path / "f", deadline=deadline)


def test_fetch_without_deadline(tmp_path: Path) -> None:
    src = _source(tmp_path)
    assert DEFAULT_DEADLINE == 1800
    dest = fetch(src.as_uri(), SHA, tmp_path / "f", progress=False, deadline=math.inf)
    assert dest.read_bytes() == PAYLOAD


@pytest.mark.parametrize(
    ("digest", "algorithm"), [("abc", "sha256"), ("z" * 64, "sha256"), (SHA, "sha1")]
)
def test_fetch_rejects_bad_pins(tmp_path: Path, digest: str, algorithm: str) -> None:
    with pytest.raises(ValueError, match="digest"):
        fetch("file:///nowhere", digest, tmp_path / "f", algorithm=algorithm)  # type: ignore[arg-type]


# -- extraction --------------------------------------------------------------


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def test_extract_zip_subdir(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.zip", {"top/x.txt": "x", "top/sub/y.txt": "y", "other.txt": "o"})
    out = extract_zip(archive, tmp_path / "out", subdir="top")
    assert (out / "x.txt").read_text() == "x"
    assert (out / "sub" / "y.txt").read_text() == "y"
    assert not (out / "other.txt").exists()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("bad", ["../evil.txt", "/abs.txt", "a/../../evil.txt", "..\\evil.txt"])
def test_extract_zip_rejects_unsafe_members(tmp_path: Path, bad: str) -> None:
    archive = _zip(tmp_path / "a.zip", {"ok.txt": "fine", bad: "evil"})
    with pytest.raises(UnsafeArchiveError, match="unsafe member"):
        extract_zip(archive, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip"]


def test_extract_existing_dest(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.zip", {"new.txt": "n"})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("o")
    with pytest.raises(FileExistsError):
        extract_zip(archive, tmp_path / "out")
    extract_zip(archive, tmp_path / "out", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["new.txt"]
    assert _leftovers(tmp_path) == []


def test_extract_missing_subdir_leaves_nothing(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "a.zip", {"top/x.txt": "x"})
    with pytest.raises(FileNotFoundError, match="nope"):
        extract_zip(archive, tmp_path / "out", subdir="nope")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip"]


def _tar(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info in members:
            data = b"data" if info.isfile() else None
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def test_extract_tar(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "a.tgz", [tarfile.TarInfo("top/x.txt")])
    out = extract_tar(archive, tmp_path / "out", subdir="top")
    assert (out / "x.txt").read_bytes() == b"data"


def _symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "bad",
    [
        tarfile.TarInfo("../evil.txt"),
        tarfile.TarInfo("/abs.txt"),
        _symlink("top/link", "/etc/passwd"),
    ],
)
def test_extract_tar_rejects_unsafe_members(tmp_path: Path, bad: tarfile.TarInfo) -> None:
    archive = _tar(tmp_path / "a.tgz", [tarfile.TarInfo("top/ok.txt"), bad])
    with pytest.raises(UnsafeArchiveError):
        extract_tar(archive, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tgz"]


def _tgz(n_members: int = 3) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(n_members):
            data = hashlib.sha256(str(i).encode()).digest() * 600  # 19 kB, compresses little
            info = tarfile.TarInfo(f"top/x{i}.bin")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _flipped(data: bytes) -> bytes:
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    return bytes(damaged)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="cut in half"),
        pytest.param(lambda b: b[:-10], id="gzip trailer cut"),
        pytest.param(lambda b: b[:30], id="header only"),
        pytest.param(_flipped, id="one byte flipped"),
    ],
)
def test_extract_tar_of_a_damaged_archive_is_a_clear_error(tmp_path: Path, damage: object) -> None:
    archive = tmp_path / "data.tgz"
    archive.write_bytes(damage(_tgz()))  # type: ignore[operator]
    with pytest.raises(CorruptArchiveError) as info:
        extract_tar(archive, tmp_path / "out")
    msg = str(info.value)
    assert str(archive) in msg
    assert "delete it" in msg
    assert "download it again" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.tgz"]  # nothing extracted


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="cut in half"),
        pytest.param(lambda b: b[:-5], id="end cut"),
        pytest.param(lambda b: b[:50] + bytes([b[50] ^ 0xFF]) + b[51:], id="data byte flipped"),
    ],
)
def test_extract_zip_of_a_damaged_archive_is_a_clear_error(tmp_path: Path, damage: object) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("top/a.bin", hashlib.sha256(b"a").digest() * 600)
    archive = tmp_path / "data.zip"
    archive.write_bytes(damage(buf.getvalue()))  # type: ignore[operator]
    with pytest.raises(CorruptArchiveError, match="delete it") as info:
        extract_zip(archive, tmp_path / "out")
    assert str(archive) in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.zip"]


def test_a_full_disk_is_not_called_a_damaged_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "data.tgz"
    archive.write_bytes(_tgz(1))

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tarfile.TarFile, "extractall", full)
    with pytest.raises(OSError, match="No space left") as info:
        extract_tar(archive, tmp_path / "out")
    assert not isinstance(info.value, CorruptArchiveError)
