"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis's defaults judge on the clock: an example slower than 200 ms fails
# (DeadlineExceeded), and so does slow data generation (HealthCheck.too_slow). On a machine
# that other work keeps busy both happen with no defect in the code, so neither applies
# here; a test's own @settings may still set its own.
settings.register_profile("hierret", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hierret")


@dataclass
class Server:
    """A local HTTP server that serves ``files`` and records request paths."""

    base: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("no_proxy", "*")
    monkeypatch.setenv("NO_PROXY", "*")
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits.append(self.path)
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# -- the real data sets: one rule for every test, the noxfile's (`_env()`) -----------------

ROOT = Path(__file__).resolve().parent.parent


def data_home() -> Path | None:
    """Where the real data sets are: ``$HIERRET_DATA`` when it is set, else the
    ``shared/datasets`` folder beside the checkout when it exists (as on the project's
    machines), else none. The same rule as ``noxfile.py``'s ``_env()``."""
    if "HIERRET_DATA" in os.environ:
        return Path(os.environ["HIERRET_DATA"]) if os.environ["HIERRET_DATA"] else None
    shared = ROOT.parent / "shared" / "datasets"
    return shared if shared.is_dir() else None


def _real(monkeypatch: pytest.MonkeyPatch, name: str, relative: str) -> Path:
    """``relative`` under :func:`data_home`, with ``$HIERRET_DATA`` set to that home for the
    test (so ``load_beir("scifact")`` and the like find it too); skipped when it is missing."""
    home = data_home()
    if home is None or not (home / relative).is_file():
        where = f"{home}" if home is not None else "none (HIERRET_DATA unset, no ../shared)"
        pytest.skip(
            f"real {name} not available (data folder: {where}): set HIERRET_DATA to a folder "
            f"holding {relative} (on the project's machines ../shared/datasets beside the "
            "checkout is used when it exists) to run this test"
        )
    monkeypatch.setenv("HIERRET_DATA", str(home))
    return home / relative


@pytest.fixture
def real_scifact(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real SciFact folder (BEIR layout) under :func:`data_home`; skipped without it."""
    return _real(monkeypatch, "SciFact", "scifact/corpus.jsonl").parent


@pytest.fixture
def real_qasper_sample(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The 10-paper Qasper v0.3 sample under :func:`data_home`; skipped without it."""
    return _real(monkeypatch, "Qasper sample", "qasper/qasper-train-sample10-v0.3.json")


# -- the test command on every core: `pytest -n auto --dist loadgroup` (pytest-xdist) -------

#: The most workers ``-n auto`` starts: each holds its own models and data (up to 1.8 GB
#: resident a worker, measured), and past this the Ray and notebook tests, one file
#: each, make the run's length anyway.
MAX_WORKERS = 8

#: Files that share one unit of work (one worker runs them one after the other): each
#: starts a Ray cluster, and two clusters side by side on two cores are what makes Ray's
#: helper processes miss its start-up deadlines.
GROUPS = {
    "tests/core/test_embed_ray.py": "ray",
    "tests/core/test_embed_ray_cluster.py": "ray",
}


def _group(nodeid: str) -> str:
    """The unit of work of the test ``nodeid``: its file, or the file's :data:`GROUPS`
    name (an ``@group`` suffix, as pytest-xdist writes an ``xdist_group`` mark where it
    can, comes first)."""
    if nodeid.rfind("@") > nodeid.rfind("]"):
        return nodeid.rsplit("@", 1)[1]
    path = nodeid.split("::", 1)[0]
    return GROUPS.get(path, path)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: the CPUs this process may run on, at most :data:`MAX_WORKERS`
    (``$PYTEST_XDIST_AUTO_NUM_WORKERS`` when set). pytest-xdist's own count is psutil's
    physical cores, which is 1 on a machine whose two virtual CPUs are one core's two
    threads."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").isdigit():
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, cpus or 1))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: one unit of work per :func:`_group`, so a file's tests run in
    one worker, in their order, and a module-scoped fixture (a Ray cluster, a model, a
    small study) is made once, not once per worker.

    pytest-xdist 3.8's own loadgroup scheduler groups by an ``@group`` suffix it writes
    into each marked test's node id, which pytest 9.2's structured node ids no longer
    take: it silently hands out every test alone (pytest-xdist issue 1386). This one
    reads the same suffix when it is there, and the file otherwise."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` the long units (a cluster, a real model: a file with a
    ``slow`` test) come first; with the test command's ``--no-loadscope-reorder`` xdist
    hands units out in this order, so the run does not end on one worker busy with a
    model while the other has nothing left (on two cores a unit of a minute at the end
    is a minute more for the whole command). The rest keep their file order."""
    # a worker's options say `dist = "no"`; pytest-xdist notes the controller's loadgroup
    if config.getoption("dist", "no") != "loadgroup" and not getattr(
        config.option, "loadgroup", False
    ):
        return
    heavy = set(GROUPS.values()) | {
        _group(item.nodeid) for item in items if item.get_closest_marker("slow")
    }
    items.sort(key=lambda item: _group(item.nodeid) not in heavy)  # stable


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    """Close every pyplot figure a test opened, so none outlives it (pyplot keeps them)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
