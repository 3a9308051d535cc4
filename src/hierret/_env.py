"""Process-wide facts the core reads: the cache folder and the machine it runs on.

Private to the package: :func:`hierret.encoders.cache.default_cache_dir` is the public
name of the cache folder, and the result records
(:mod:`hierret.publish.report`) carry :func:`machine_facts`. Kept here, at the
bottom of the core, so that every module can read them without importing the
floors above it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "default_cache_dir", "machine_facts"]

#: Environment variable naming the vector cache folder.
CACHE_ENV = "HIERRET_CACHE"

#: CPU flags that decide which arithmetic compiled engines may use.
_CPU_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx_vnni",
    "amx_tile",
)


def default_cache_dir() -> Path:
    """The default vector cache folder.

    ``$HIERRET_CACHE`` when set, else ``$XDG_CACHE_HOME/hierret/search/vectors``, else
    ``~/.cache/hierret/search/vectors``. The folder is not created.

    Examples
    --------
    >>> import os
    >>> old = os.environ.get("HIERRET_CACHE")
    >>> os.environ["HIERRET_CACHE"] = "/srv/vectors"
    >>> str(default_cache_dir())
    '/srv/vectors'
    >>> _ = os.environ.pop("HIERRET_CACHE") if old is None else os.environ.update(HIERRET_CACHE=old)
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "hierret" / "vectors").resolve()


def machine_facts() -> dict[str, Any]:
    """The facts about this machine that can change a computed vector or number.

    CPU model and the instruction-set flags that compiled engines dispatch on,
    the C library (``expf``/``erff`` come from it), Python, and the numeric
    packages' versions. Recorded in every result record.

    Examples
    --------
    >>> facts = machine_facts()
    >>> sorted(facts)
    ['cpu', 'cpu_flags', 'libc', 'machine', 'numpy', 'python', 'torch']
    """
    import platform
    from importlib.metadata import PackageNotFoundError, version

    cpu, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass

    def _version(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "not installed"

    return {
        "cpu": cpu,
        "cpu_flags": [f for f in _CPU_FLAGS if f in flags],
        "libc": " ".join(platform.libc_ver()).strip(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "torch": _version("torch"),
    }
