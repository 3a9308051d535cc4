"""``hierret embed --engine ray`` joining a running two-node Ray cluster.

The cluster is what a user starts: ``ray start --head`` and ``ray start
--address`` (a worker node), both on 127.0.0.1 with one CPU each, so that two
actors of one CPU must land on different nodes. The test joins it through
``RAY_ADDRESS`` (the command line, as ``ray job submit`` runs it) and through
``RayOptions.address`` (the Python route), and compares the vectors with the
local engine's, bit for bit. Skipped unless Ray is installed (``hierret[ray]``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hierret.cli import main
from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache, text_keys
from hierret.encoders.embed.local import RayOptions, corpus_passages, embed_texts

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")

TEXTS = [f"passage {i} " + "word " * (i % 17) + f"on topic {i % 13}" for i in range(1000)]
#: What Ray says when a node's helper processes did not report in time (a loaded
#: machine): the cluster could not be made, which is not what this module tests.
STARTUP_TIMEOUT = "timed out during startup"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """``ray start ... --block`` in its own session (so its processes can be ended
    together, and only they: never ``ray stop``, which ends every Ray of the machine)."""
    exe = str(Path(sys.executable).with_name("ray"))
    return subprocess.Popen(
        [exe, "start", *args, "--block", "--disable-usage-stats"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _end(procs: list[subprocess.Popen[str]], temp: str) -> None:
    """End the nodes' processes: their sessions, then any process naming ``temp``."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()  # reaped, so that no Popen is collected while its process runs
        if p.stdout:
            p.stdout.close()
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if any(temp in part for part in proc.info["cmdline"] or []):
            proc.kill()
    shutil.rmtree(temp, ignore_errors=True)


def _raylet_gave_up(temp: str) -> str | None:
    """The line of a raylet (under ``temp``) that gave up waiting for its helper
    processes' ports (Ray then needs about a minute more to say so), or ``None``."""
    for log in Path(temp).glob("session_*/logs/raylet*.out"):
        for line in log.read_text(errors="replace").splitlines():
            if "Timed out waiting for file" in line:
                return line[line.index("Timed out") :][:200]
    return None


def _alive_nodes(address: str, env: dict[str, str]) -> int:
    """Alive nodes of the cluster at ``address``, asked in a fresh process."""
    code = (
        f"import ray; ray.init(address={address!r}, log_to_driver=False, configure_logging=False);"
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    return int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else 0


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A head and a worker node on 127.0.0.1, one CPU each: (address, environment)."""
    temp = tempfile.mkdtemp(prefix="hrray", dir="/tmp")  # short: Ray's socket paths
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),  # the nodes' workers import hierret
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_worker_register_timeout_seconds": "600",  # a guard against a hang only
    }
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0"]
    head = _ray("--head", f"--port={port}", f"--temp-dir={temp}", *common, env=env)
    procs = [head]
    try:
        deadline = time.monotonic() + 300  # a guard against a hang, not a timing
        while not (Path(temp) / "ray_current_cluster").exists():
            if gave_up := _raylet_gave_up(temp):
                pytest.skip(f"Ray's head node did not start on this machine (load): {gave_up}")
            if head.poll() is not None:
                said = head.stdout.read() if head.stdout else ""
                if STARTUP_TIMEOUT in said:
                    pytest.skip(f"Ray's head node did not start on this machine: {said[-300:]}")
                pytest.fail(f"ray start --head exited {head.returncode}: {said[-2000:]}")
            assert time.monotonic() < deadline, "the head node never came up"
            time.sleep(0.2)
        worker = _ray(f"--address={address}", *common, env=env)
        procs.append(worker)
        while _alive_nodes(address, env) < 2:
            if gave_up := _raylet_gave_up(temp):
                pytest.skip(f"Ray's worker node did not start on this machine (load): {gave_up}")
            if worker.poll() is not None:
                said = worker.stdout.read() if worker.stdout else ""
                if STARTUP_TIMEOUT in said:
                    pytest.skip(f"Ray's worker node did not start on this machine: {said[-300:]}")
                pytest.fail(f"ray start (worker) exited {worker.returncode}: {said[-2000:]}")
            assert time.monotonic() < deadline, "the worker node never joined"
            time.sleep(0.5)
        yield address, env
    finally:
        _end(procs, temp)


class NodeHashEncoder(HashEncoder):
    """A hash encoder that notes, when it is made, the Ray node it was made on."""

    def __init__(self, notes: str, dimension: int = 16, actors: int = 2) -> None:
        super().__init__(dimension=dimension)
        node = ray.get_runtime_context().get_node_id()
        Path(notes, f"{node}-{os.getpid()}").touch()
        # Ray Data starts work as soon as one actor is up: on a busy machine the first
        # could embed every text before the second exists. Wait for the pool (a guard,
        # not a timing: if the second never comes, the test says on how many nodes).
        deadline = time.monotonic() + 300
        while len(list(Path(notes).iterdir())) < actors and time.monotonic() < deadline:
            time.sleep(0.1)


def _vectors(root: Path, texts: list[str]) -> bytes:
    identity = HashEncoder(dimension=16).identity
    keys = sorted(set(text_keys(identity, "passage", texts)))
    vecs, found = VectorCache(root).get(identity, keys)
    assert found.all()
    return b"".join(keys) + vecs.tobytes()


def test_the_python_route_puts_actors_on_both_nodes(
    tmp_path: Path, cluster: tuple[str, dict[str, str]]
) -> None:
    import ray.cloudpickle

    address, _ = cluster
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    embed_texts(TEXTS, CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "l")))
    notes = tmp_path / "notes"
    notes.mkdir()
    report = embed_texts(
        TEXTS,
        CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "r")),
        engine="ray",
        model=NodeHashEncoder,
        model_kw={"notes": str(notes)},
        ray=RayOptions(address=address, actors=2),
        show_progress=False,
    )
    assert report.embedded == len(TEXTS)
    assert not ray.is_initialized()  # joined for the run, and left
    nodes = {f.name.split("-")[0] for f in notes.iterdir()}
    assert len(nodes) == 2, f"actors on {len(nodes)} node(s): {sorted(nodes)}"
    assert _vectors(tmp_path / "r", TEXTS) == _vectors(tmp_path / "l", TEXTS)


def test_the_command_line_joins_through_ray_address(
    tmp_path: Path, cluster: tuple[str, dict[str, str]]
) -> None:
    """`RAY_ADDRESS=... hierret embed --engine ray` (what `ray job submit` runs): the
    cache it fills is the local engine's, bit for bit."""
    from hierret.datasets import load
    from hierret.structure.hierarchy import build_hierarchy

    address, env = cluster
    argv = ["embed", "--encoder", "hash", "--no-progress"]
    assert main([*argv, "--cache-dir", str(tmp_path / "l")]) == 0
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hierret",
            *argv,
            "--engine",
            "ray",
            "--actors",
            "2",
            "--cache-dir",
            str(tmp_path / "r"),
        ],
        env={**env, "RAY_ADDRESS": address},
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hang, not a timing
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert ": 0 were in the cache" in done.stdout, done.stdout
    bundle = load("python-reference", questions=False)
    texts = corpus_passages(build_hierarchy(bundle.corpus, heading_styles=bundle.heading_styles))
    hash64 = HashEncoder().identity
    keys = sorted(set(text_keys(hash64, "passage", texts)))
    mine, found = VectorCache(tmp_path / "r").get(hash64, keys)
    assert found.all()
    assert mine.tobytes() == VectorCache(tmp_path / "l").get(hash64, keys)[0].tobytes()
