"""Cached, checksummed downloads and safe archive extraction.

Data lives under :func:`data_home`. Every download is verified against a pinned
digest before it is moved into place, and a cached file is verified again each
time it is used, so a corrupt or tampered file is never read. Archives are
extracted into a temporary folder and renamed into place, so a folder either
holds a complete extraction or does not exist. An archive that cannot be read
to its end (cut short, damaged) raises :class:`CorruptArchiveError` naming the
file and the fix; the loaders then delete it from the download cache, so the
next load downloads it again.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import logging
import lzma
import os
import shutil
import socket
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO, Any, BinaryIO, Literal, Protocol

from hierret._files import atomic_write
from hierret._quiet import quiet_import

__all__ = [
    "DATA_ENV",
    "DEFAULT_DEADLINE",
    "ChecksumError",
    "CorruptArchiveError",
    "DataFormatError",
    "DataNotFoundError",
    "DigestAlgorithm",
    "DownloadDeadlineError",
    "DownloadError",
    "UnsafeArchiveError",
    "data_home",
    "drop_damaged_archive",
    "extract_tar",
    "extract_zip",
    "fetch",
    "file_digest",
]

log = logging.getLogger(__name__)

#: Environment variable naming the folder that holds (or receives) the data.
DATA_ENV = "HIERRET_DATA"

#: Digest algorithms a pinned checksum may use. ``md5`` exists only because some
#: upstreams (BEIR) publish nothing stronger; prefer ``sha256``.
DigestAlgorithm = Literal["sha256", "md5"]

#: Seconds a whole download may take (connecting, headers and body together) before
#: :func:`fetch` gives up: 30 minutes, enough for the pinned archives (3 MB to 11 MB)
#: at 10 kB/s. The per-read ``timeout`` alone does not bound a server that sends one
#: byte just before each read times out.
DEFAULT_DEADLINE = 30 * 60.0

_DIGEST_HEX_LEN = {"sha256": 64, "md5": 32}
_CHUNK = 1 << 20
_OFFLINE_HINT = (
    f"To work offline, set {DATA_ENV} to a folder that already holds the data "
    f"(e.g. {DATA_ENV}=../shared/datasets on the project's machines)."
)


class DownloadError(OSError):
    """A download failed: network error, HTTP error or bad checksum."""


class ChecksumError(DownloadError):
    """Downloaded bytes do not match the pinned digest."""


class CorruptArchiveError(DownloadError):
    """An archive cannot be read to its end: cut short or damaged. Nothing was extracted."""


class DownloadDeadlineError(DownloadError):
    """A download took longer than its total deadline; nothing was kept."""


class DataNotFoundError(FileNotFoundError):
    """A dataset is not on disk and could not (or may not) be downloaded."""


class UnsafeArchiveError(ValueError):
    """An archive member would land outside the extraction folder."""


class DataFormatError(ValueError):
    """A data file is not in the layout its loader expects.

    The message names the file, where in it the problem is (line, or path inside
    the JSON), what was found, the rule, and how to fix it. Each loader raises its
    own subclass (:class:`~hierret.datasets.qasper.QasperFormatError`,
    :class:`~hierret.datasets.beir.BeirFormatError`).
    """


def data_home() -> Path:
    """The folder where datasets are looked for and downloaded to.

    ``$HIERRET_DATA`` when set, else ``$XDG_CACHE_HOME/hierret``, else
    ``~/.cache/hierret``. A relative path is made absolute against the current
    folder. The folder is not created.

    Returns
    -------
    Path
        An absolute path.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"HIERRET_DATA": "/srv/data"}):
    ...     str(data_home())
    '/srv/data'
    """
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(os.path.abspath(Path(env).expanduser()))
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache else Path.home() / ".cache"
    return Path(os.path.abspath(base / "hierret"))


def _check_digest(digest: str, algorithm: str) -> str:
    if algorithm not in _DIGEST_HEX_LEN:
        raise ValueError(f"unsupported digest algorithm {algorithm!r}; use 'sha256' or 'md5'")
    digest = digest.strip().lower()
    if len(digest) != _DIGEST_HEX_LEN[algorithm] or any(
        c not in "0123456789abcdef" for c in digest
    ):
        raise ValueError(f"{digest!r} is not a hex {algorithm} digest")
    return digest


def _hasher(algorithm: str) -> hashlib._Hash:
    return hashlib.new(algorithm, usedforsecurity=False)


def file_digest(path: Path, algorithm: DigestAlgorithm = "sha256") -> str:
    """Hex digest of a file's bytes.

    Parameters
    ----------
    path : Path
        The file to hash.
    algorithm : {"sha256", "md5"}
        The digest algorithm.

    Returns
    -------
    str
        Lower-case hex digest.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = Path(tmp, "x")
    ...     _ = p.write_bytes(b"abc")
    ...     file_digest(p)[:16]
    'ba7816bf8f01cfea'
    """
    if algorithm not in _DIGEST_HEX_LEN:
        raise ValueError(f"unsupported digest algorithm {algorithm!r}; use 'sha256' or 'md5'")
    with open(path, "rb") as f:
        return hashlib.file_digest(f, lambda: _hasher(algorithm)).hexdigest()


class _Bar(Protocol):
    """What :func:`fetch` needs from a progress bar (a subset of tqdm)."""

    def update(self, n: int) -> object: ...

    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int | None, desc: str, enabled: bool) -> _Bar:
    if enabled:
        try:
            with quiet_import():
                from tqdm.auto import tqdm  # type: ignore[import-untyped,unused-ignore]
        except ImportError:  # pragma: no cover - tqdm is a dependency
            pass
        else:
            bar: _Bar = tqdm(
                total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, leave=False
            )
            return bar
    return _NoBar()


class _DeadlinePassed(Exception):
    """Raised inside :func:`_download_to` when the total deadline has passed."""


class _Watchdog:
    """Enforce a total deadline on one download.

    HTTP connections are made through :meth:`connection` so that, once the
    deadline passes, their sockets are shut down: a read blocked on a slow server
    (in the body *or* the headers) then returns at once instead of waiting for
    more bytes. The watcher thread stops when :meth:`stop` is called.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._connections: list[http.client.HTTPConnection] = []
        self._thread: threading.Thread | None = None
        if seconds != float("inf"):
            self._thread = threading.Thread(target=self._watch, name="hierret-deadline")
            self._thread.daemon = True
            self._thread.start()

    def passed(self) -> bool:
        return self.expired.is_set() or time.monotonic() >= self.end

    def connection(self, cls: type[http.client.HTTPConnection]) -> Callable[..., Any]:
        """A factory for ``cls`` connections whose sockets this watchdog may shut down."""

        def make(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
            conn = cls(*args, **kwargs)
            with self._lock:
                self._connections.append(conn)
            return conn

        return make

    def _watch(self) -> None:
        if self._stopped.wait(self.seconds):
            return
        self.expired.set()
        # Until the download gives up: shut down every socket (one that connects
        # after the deadline is caught on the next round).
        while True:
            with self._lock:
                socks = [c.sock for c in self._connections if c.sock is not None]
            for sock in socks:
                with contextlib.suppress(OSError):  # the plain socket's, also for SSL
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
            if self._stopped.wait(0.05):
                return

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self._watchdog = watchdog

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._watchdog.connection(http.client.HTTPConnection), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self._watchdog = watchdog

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._watchdog.connection(http.client.HTTPSConnection), req)


def _download_to(
    url: str,
    out: IO[bytes],
    algorithm: str,
    timeout: float,
    progress: bool,
    desc: str,
    watchdog: _Watchdog,
) -> str:
    """Stream ``url`` into ``out``; return the hex digest of what was written."""
    h = _hasher(algorithm)
    request = urllib.request.Request(url, headers={"User-Agent": "hierret"})
    opener = urllib.request.build_opener(_HTTPHandler(watchdog), _HTTPSHandler(watchdog))
    with opener.open(request, timeout=timeout) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        bar = _progress_bar(total, desc, progress)
        # read1: at most one read from the socket, so the deadline is checked between
        # reads however slowly the bytes come (read(n) would wait for all n bytes)
        read = getattr(response, "read1", response.read)
        try:
            while not watchdog.passed() and (chunk := read(_CHUNK)):
                out.write(chunk)
                h.update(chunk)
                bar.update(len(chunk))
        finally:
            bar.close()
        if watchdog.passed():
            raise _DeadlinePassed
        if total is not None and out.tell() != total:
            raise http.client.IncompleteRead(b"", total - out.tell())
    return h.hexdigest()


def fetch(
    url: str,
    digest: str,
    dest: Path,
    *,
    algorithm: DigestAlgorithm = "sha256",
    progress: bool = True,
    timeout: float = 60.0,
    deadline: float = DEFAULT_DEADLINE,
) -> Path:
    """Download ``url`` to ``dest`` unless a verified copy is already there.

    The bytes go to a temporary file in ``dest``'s folder, are checked against
    ``digest`` and only then renamed onto ``dest`` (atomically). An existing
    ``dest`` whose digest does not match is treated as corrupt and replaced.

    Parameters
    ----------
    url : str
        Where to download from (``https://``, ``http://`` or ``file://``).
    digest : str
        The pinned hex digest of the file.
    dest : Path
        Where the file should end up; parent folders are created.
    algorithm : {"sha256", "md5"}
        The algorithm ``digest`` was computed with.
    progress : bool
        Show a tqdm progress bar while downloading.
    timeout : float
        Seconds to wait for each network operation (connect, one read) before
        giving up.
    deadline : float
        Seconds the whole download may take (default :data:`DEFAULT_DEADLINE`,
        30 minutes); ``math.inf`` for no limit. Checked between reads and
        enforced by shutting the connection down, so a server that sends bytes
        too slowly to ever finish fails at the deadline instead of running
        forever.

    Returns
    -------
    Path
        ``dest``, holding bytes that match ``digest``.

    Raises
    ------
    ChecksumError
        The downloaded bytes do not match ``digest``; nothing is left behind.
    DownloadDeadlineError
        The download took longer than ``deadline``; nothing is left behind.
    DownloadError
        The download failed (network, HTTP status, truncated transfer).
    ValueError
        ``digest`` is not a hex digest of ``algorithm``, or ``deadline`` is not
        a positive number.

    Examples
    --------
    >>> import hashlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> src = Path(tmp.name, "src.txt")
    >>> _ = src.write_bytes(b"hello")
    >>> sha = hashlib.sha256(b"hello").hexdigest()
    >>> fetch(src.as_uri(), sha, Path(tmp.name, "out", "hello.txt"), progress=False).read_bytes()
    b'hello'
    >>> tmp.cleanup()
    """
    expected = _check_digest(digest, algorithm)
    if isinstance(deadline, bool) or not isinstance(deadline, int | float) or not deadline > 0:
        raise ValueError(
            f"deadline must be a positive number of seconds (math.inf for none), got {deadline!r}"
        )
    dest = Path(dest)
    if dest.is_file():
        actual = file_digest(dest, algorithm)
        if actual == expected:
            log.debug("using cached %s", dest)
            return dest
        log.warning(
            "cached file %s is corrupt (%s %s, expected %s); downloading it again",
            dest,
            algorithm,
            actual,
            expected,
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s to %s", url, dest)
    watchdog = _Watchdog(float(deadline))

    def receive(out: BinaryIO) -> None:
        try:
            actual = _download_to(url, out, algorithm, timeout, progress, dest.name, watchdog)
        except (
            _DeadlinePassed,
            urllib.error.URLError,
            OSError,
            http.client.HTTPException,
            ValueError,
        ) as err:
            if isinstance(err, urllib.error.HTTPError):
                err.close()  # it holds the open connection
            if isinstance(err, _DeadlinePassed) or watchdog.passed():
                raise DownloadDeadlineError(
                    f"could not download {url}: not finished after the total deadline of "
                    f"{deadline:g} s ({out.tell()} bytes received; the server sends too slowly "
                    f"or stalls). Nothing was kept. Try again later, or pass a larger deadline= "
                    f"to fetch.\n{_OFFLINE_HINT}"
                ) from None
            raise DownloadError(
                f"could not download {url}: {_describe(err)}.\n{_OFFLINE_HINT}"
            ) from err
        finally:
            watchdog.stop()
        if actual != expected:
            raise ChecksumError(
                f"checksum mismatch for {url}:\n"
                f"  expected {algorithm} {expected}\n"
                f"  got      {algorithm} {actual}\n"
                "The download was corrupted, or the file on the server changed. Nothing was "
                "kept. Try again; if it persists, the pinned checksum must be reviewed before "
                f"the data is trusted. {_OFFLINE_HINT}"
            )

    atomic_write(dest, receive)
    return dest


def _describe(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return str(err.reason)
    if isinstance(err, http.client.IncompleteRead):
        return f"connection closed early ({err.expected} bytes missing)"
    return f"{type(err).__name__}: {err}"


def _check_member(name: str, archive: Path) -> None:
    """Reject member names that are absolute or climb out with ``..``."""
    for pure in (PurePosixPath(name), PureWindowsPath(name)):
        if pure.is_absolute() or pure.anchor or ".." in pure.parts:
            raise UnsafeArchiveError(f"{archive}: refusing unsafe member path {name!r}")


#: What reading a cut-short or damaged archive raises: a compressed stream that ends
#: early (EOFError), bad compressed data or checksum (zlib, gzip, lzma), an archive
#: whose structure is broken (tarfile, zipfile). OSError in general is not among them:
#: a full disk or a denied write is not the archive's fault.
_DAMAGED = (
    EOFError,
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    gzip.BadGzipFile,
    lzma.LZMAError,
)


def _extract_atomic(
    archive: Path, dest: Path, subdir: str | None, overwrite: bool, unpack: Callable[[Path], None]
) -> Path:
    dest = Path(dest)
    if dest.exists() and not overwrite:
        raise FileExistsError(f"{dest} already exists; pass overwrite=True to replace it")
    if subdir is not None:
        _check_member(subdir, archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".extract"))
    try:
        try:
            unpack(staging)
        except _DAMAGED as err:
            raise CorruptArchiveError(
                f"{archive} is damaged or incomplete and cannot be extracted "
                f"({type(err).__name__}: {err}); nothing was extracted. It is most likely a "
                f"download cut short: delete it (rm {archive}) and download it again"
            ) from err
        source = staging / subdir if subdir else staging
        if not source.is_dir():
            raise FileNotFoundError(f"{archive} has no folder {subdir!r}")
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(dest, old)
            os.replace(source, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(source, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def extract_zip(
    archive: Path, dest: Path, *, subdir: str | None = None, overwrite: bool = False
) -> Path:
    """Safely and atomically extract a zip archive.

    Parameters
    ----------
    archive : Path
        The zip file.
    dest : Path
        The folder to create with the archive's contents.
    subdir : str, optional
        Take only this folder of the archive as ``dest`` (e.g. ``"scifact"``
        for an archive that unpacks to ``scifact/...``).
    overwrite : bool
        Replace ``dest`` if it exists (default: raise ``FileExistsError``).

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    UnsafeArchiveError
        A member has an absolute path or a ``..`` component; nothing is extracted.
    CorruptArchiveError
        The archive cannot be read to its end (cut short, damaged, or not an
        archive of its kind); nothing is extracted, the archive is left as it is.

    Examples
    --------
    >>> import tempfile, zipfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with zipfile.ZipFile(Path(tmp.name, "a.zip"), "w") as z:
    ...     z.writestr("top/x.txt", "hi")
    >>> out = extract_zip(Path(tmp.name, "a.zip"), Path(tmp.name, "out"), subdir="top")
    >>> sorted(p.name for p in out.iterdir())
    ['x.txt']
    >>> tmp.cleanup()
    """

    def unzip(into: Path) -> None:
        with zipfile.ZipFile(archive) as zf:
            _check_all((i.filename for i in zf.infolist()), archive)
            zf.extractall(into)

    return _extract_atomic(Path(archive), dest, subdir, overwrite, unzip)


def extract_tar(
    archive: Path, dest: Path, *, subdir: str | None = None, overwrite: bool = False
) -> Path:
    """Safely and atomically extract a (possibly compressed) tar archive.

    Links, devices and members with absolute paths or ``..`` are refused.
    Parameters, result and errors are those of :func:`extract_zip`, with
    ``archive`` a ``.tar``, ``.tar.gz``, ``.tar.bz2`` or ``.tar.xz`` file.

    Examples
    --------
    >>> import io, tarfile, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with tarfile.open(Path(tmp.name, "a.tar.gz"), "w:gz") as t:
    ...     info = tarfile.TarInfo("top/x.txt"); info.size = 2
    ...     t.addfile(info, io.BytesIO(b"hi"))
    >>> out = extract_tar(Path(tmp.name, "a.tar.gz"), Path(tmp.name, "out"))
    >>> Path(out, "top", "x.txt").read_text()
    'hi'
    >>> tmp.cleanup()
    """

    def untar(into: Path) -> None:
        with tarfile.open(archive) as tf:
            members = tf.getmembers()
            _check_all((m.name for m in members), archive)
            for m in members:
                if not (m.isfile() or m.isdir()):
                    raise UnsafeArchiveError(
                        f"{archive}: refusing member {m.name!r} (links and devices are not "
                        "extracted)"
                    )
            tf.extractall(into, members=members, filter="data")
            # read the compressed stream to its end: gzip, bz2 and xz check their
            # checksum and length there, and a damaged block may have decoded silently
            while tf.fileobj is not None and tf.fileobj.read(_CHUNK):
                pass

    return _extract_atomic(Path(archive), dest, subdir, overwrite, untar)


def drop_damaged_archive(archive: Path, url: str, err: CorruptArchiveError) -> str:
    """Delete a downloaded archive that cannot be extracted; what to tell the user.

    A loader calls this when :func:`extract_zip` or :func:`extract_tar` raised
    :class:`CorruptArchiveError` for an archive in its download cache: the
    cache must not keep it, or every later load would fail the same way.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> bad = Path(tmp.name, "data.zip")
    >>> _ = bad.write_bytes(b"PK-not-really")
    >>> try:
    ...     extract_zip(bad, Path(tmp.name, "data"))
    ... except CorruptArchiveError as err:
    ...     print(drop_damaged_archive(bad, "https://example.org/data.zip", err))
    ... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
    /.../data.zip matched its pinned checksum but cannot be extracted (BadZipFile: File
    is not a zip file). It was deleted from the download cache, so the next load
    downloads it again; if that fails the same way, the file at
    https://example.org/data.zip is damaged
    >>> bad.exists()
    False
    >>> tmp.cleanup()
    """
    archive.unlink(missing_ok=True)
    cause = err.__cause__
    why = f"{type(cause).__name__}: {cause}" if cause is not None else str(err)
    return (
        f"{archive} matched its pinned checksum but cannot be extracted ({why}). It was "
        "deleted from the download cache, so the next load downloads it again; if that "
        f"fails the same way, the file at {url} is damaged"
    )


def _check_all(names: Iterable[str], archive: Path) -> None:
    for name in names:
        _check_member(name, archive)
