"""``hierret embed --engine ray``: Ray Data actors, the driver as the cache's only writer.

Skipped unless Ray is installed (the extra ``hierret[ray]``); one local cluster
(127.0.0.1, 2 CPUs, usage statistics off) serves the whole module.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from hierret.encoders import HashEncoder
from hierret.encoders.cache import CachedEncoder, VectorCache, text_keys
from hierret.encoders.embed.local import embed_texts
from hierret.encoders.embed.ray import RayOptions, ray_batches

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")  # Ray's own

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [f"passage {i} " + "word " * (i % 17) + f"on topic {i % 13}" for i in range(2000)]
#: What ray.init raises when the node's helper processes did not report in time (a loaded
#: machine; tests/core/test_embed_ray_cluster.py skips on the same words).
STARTUP_TIMEOUT = "timed out during startup"


def vectors(root: Path, enc: HashEncoder) -> bytes:
    """Every stored (key, vector), sorted by key: the cache's content, bit for bit."""
    keys = sorted(text_keys(enc.identity, "passage", TEXTS))
    vecs, found = VectorCache(root).get(enc.identity, keys)
    assert found.all()
    return b"".join(keys) + vecs.tobytes()


def test_nothing_to_embed_starts_no_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    embed_texts(TEXTS[:10], enc, show_progress=False)

    def no(*args: object, **kw: object) -> None:
        raise AssertionError("Ray was started with nothing to embed")

    monkeypatch.setattr(ray, "init", no)
    report = embed_texts(TEXTS[:10], enc, engine="ray", model="hash", model_kw={"dimension": 16})
    assert report.embedded == 0


def _end_processes_naming(temp: str) -> None:
    """End every process whose command line names ``temp`` (a Ray that failed to start
    leaves its GCS, dashboard and monitors running: ``ray.shutdown`` does not know them)."""
    try:
        import psutil
    except ImportError:  # Ray's own processes then outlive the test; nothing else is wrong
        return
    for proc in psutil.process_iter(["cmdline"]):
        if any(temp in part for part in proc.info["cmdline"] or []):
            with contextlib.suppress(psutil.Error):
                proc.kill()


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # a worker process must register within this many seconds (Ray's default: 60, which a
    # busy machine can pass while the worker imports Ray): a guard against a hang only
    os.environ["RAY_worker_register_timeout_seconds"] = "600"  # noqa: SIM112 (Ray's spelling)
    for attempt in (1, 2):
        # the cluster's own temporary folder (short: Ray's socket paths), so that what it
        # starts can be found and ended, and no other Ray of the machine is ever joined
        temp = tempfile.mkdtemp(prefix="hrlocal", dir="/tmp")
        try:
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                _temp_dir=temp,
                log_to_driver=False,
                configure_logging=False,
            )
            break
        except Exception as err:
            ray.shutdown()
            _end_processes_naming(temp)
            shutil.rmtree(temp, ignore_errors=True)
            # Ray's raylet waits a fixed time for its helper processes' port files; on a
            # loaded machine (load average 8 on two cores) they came late and ray.init
            # raised this: the cluster could not be made, which is not what this module
            # tests. Once more, then a skip that says so.
            if STARTUP_TIMEOUT not in str(err):
                raise
            if attempt == 2:
                pytest.skip(f"a local Ray did not start on this machine (load), twice: {err}")
    try:
        yield
    finally:
        ray.shutdown()
        _end_processes_naming(temp)
        shutil.rmtree(temp, ignore_errors=True)


def test_an_actor_with_another_encoder_is_refused(tmp_path: Path, cluster: None) -> None:
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    with pytest.raises(Exception, match=r"node \S+ \(.*\) loaded hash-16") as err:
        embed_texts(
            TEXTS[:50],
            enc,
            engine="ray",
            model="hash",
            model_kw={"dimension": 16, "query_prefix": "q: "},
            show_progress=False,
        )
    assert "nothing was written" in str(err.value)
    assert VectorCache(tmp_path).count(enc.identity) == 0


def test_an_interrupted_driver_keeps_its_partitions(tmp_path: Path, cluster: None) -> None:
    model = HashEncoder(dimension=16)
    enc = CachedEncoder(model, VectorCache(tmp_path))
    arrived: list[int] = []

    def stop_after_one(n: int) -> None:
        arrived.append(n)
        if len(arrived) == 1:  # Ctrl-C right after the first partition was stored
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        enc.fill(
            TEXTS, "passage", stop_after_one, ray_batches("hash", {"dimension": 16}, model.identity)
        )
    kept = VectorCache(tmp_path).count(model.identity)
    assert kept == arrived[0] == 256  # one whole partition
    again = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    assert again.fill(TEXTS) == (2000, 256, 2000 - 256)  # the rerun embeds exactly the rest


class DyingHashEncoder(HashEncoder):
    """A hash encoder whose process exits in the middle of its first partition, the
    first time any actor makes one (the ``marker`` file says it happened)."""

    def __init__(self, marker: str, dimension: int = 16) -> None:
        super().__init__(dimension=dimension)
        self.marker = marker

    def _embed(self, texts: list[str]) -> NDArray[Any]:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:  # someone died already
            return super()._embed(texts)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os._exit(1)  # mid-batch, as a crash or the OOM killer would


def test_ray_gives_the_local_cache_even_when_an_actor_dies_mid_batch(
    tmp_path: Path, cluster: None
) -> None:
    """Byte for byte the local run's cache, from 2 actors one of which dies in its first
    partition (replaced, the partition retried: Ray Data's defaults, embed_ray's notes)."""
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # actors cannot import
    model = HashEncoder(dimension=16)  # this test module: the class goes by value
    local = CachedEncoder(model, VectorCache(tmp_path / "local"))
    embed_texts(TEXTS, local, show_progress=False)
    marker = tmp_path / "died"
    remote = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "ray"))
    embed_texts(TEXTS[:300], remote, show_progress=False)  # some already there
    report = embed_texts(
        TEXTS,
        remote,
        engine="ray",
        model=DyingHashEncoder,
        model_kw={"marker": str(marker)},
        actors=2,
        show_progress=False,
    )
    assert marker.is_file()  # an actor died,
    assert int(marker.read_text()) != os.getpid()  # not this process
    assert (report.cached, report.embedded) == (300, 1700)
    assert vectors(tmp_path / "ray", model) == vectors(tmp_path / "local", model)
    shards = list((tmp_path / "ray" / model.identity.key()).glob("*.hvc"))
    assert len(shards) >= 2  # stored partition by partition as they arrived


def test_a_killed_driver_keeps_its_partitions(tmp_path: Path, cluster: None) -> None:
    """kill -9 of a driver (another process, on this module's cluster) after it
    stored k partitions: the rerun embeds exactly the rest."""
    marker, k = tmp_path / "stored", 2
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("_ray_driver_child.py")),
            ray.get_runtime_context().gcs_address,
            str(tmp_path / "cache"),
            str(k),
            str(marker),
        ],
        env=env,
    )
    deadline = time.monotonic() + 600  # a guard against a hung child (a busy machine never
    # reaches it), not a timing
    while not marker.exists():
        assert child.poll() is None, "the driver exited before storing its partitions"
        assert time.monotonic() < deadline, "the driver never stored its partitions"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "cache"))
    assert enc.fill(TEXTS) == (2000, k * 256, 2000 - k * 256)
    want = HashEncoder(dimension=16).encode_passages(TEXTS)
    assert np.array_equal(enc.encode_passages(TEXTS).view(np.uint32), want.view(np.uint32))


def test_streamed_input_gives_the_local_cache_and_sends_ray_no_text(
    tmp_path: Path, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A BEIR corpus on Ray's streamed path (hierret.encoders.embed.stream): what Ray receives is
    locators (integers, no text), the actors read the texts; shard 0/2 on Ray and
    shard 1/2 streamed here fill the cache the in-driver local engine makes, bit for bit."""
    import json

    import ray.data

    from hierret.datasets import load
    from hierret.encoders.embed import CorpusSource, corpus_passages, embed_corpus
    from hierret.structure.hierarchy import build_hierarchy

    folder = tmp_path / "beir"
    folder.mkdir()
    docs = [
        {"_id": f"d{i}", "title": f"T{i % 7}", "text": TEXTS[i] * (1 + i % 9)} for i in range(300)
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (folder / "queries.jsonl").write_text('{"_id": "q", "text": "topic"}\n')  # for load()
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td1\t1\n")
    bundle = load(str(folder), questions=False)
    texts = corpus_passages(build_hierarchy(bundle.corpus, 300, 30))
    model = HashEncoder(dimension=16)
    embed_texts(texts, CachedEncoder(model, VectorCache(tmp_path / "local")), show_progress=False)
    handed: list[dict[str, Any]] = []
    from_items = ray.data.from_items

    def recorded(rows: list[dict[str, Any]], **kw: Any) -> Any:
        handed.extend(rows)
        return from_items(rows, **kw)

    monkeypatch.setattr(ray.data, "from_items", recorded)
    source = CorpusSource.of(str(folder), 300, 30)
    remote = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "ray"))
    report = embed_corpus(
        source, remote, model="hash", model_kw={"dimension": 16}, shard=(0, 2),
        ray=RayOptions(actors=2, batch_size=64), show_progress=False,
    )  # fmt: skip
    assert report.texts == len(texts)
    assert 0 < report.embedded == sum(len(r["pos"]) for r in handed) < len(set(texts))
    assert len(handed) > 2  # partitions of 64 for 2 actors
    for row in handed:  # no text reaches Ray: only integer arrays
        assert set(row) == {"pos", "offset", "line", "passage"}
        assert all(np.asarray(v).dtype.kind == "i" for v in row.values())
    rest = embed_corpus(source, remote, engine="local", shard=(1, 2), show_progress=False)
    assert report.embedded + rest.embedded == len(set(texts))
    keys = sorted(set(text_keys(model.identity, "passage", texts)))
    mine, found = VectorCache(tmp_path / "ray").get(model.identity, keys)
    assert found.all()
    assert mine.tobytes() == VectorCache(tmp_path / "local").get(model.identity, keys)[0].tobytes()


@pytest.mark.parametrize(
    "failure",
    [
        ConnectionError("Could not find any running Ray instance"),
        RuntimeError("Failed to start GCS: timed out waiting for its port file"),
        TimeoutError("raylet did not report its ports in time"),
    ],
)
def test_a_ray_start_failure_is_a_clear_error_naming_engine_local(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failure: Exception,
) -> None:
    """Ray's helper processes too slow on a loaded machine: no traceback, exit 2, the fix."""
    import hierret.encoders.embed.ray as embed_ray
    from hierret.cli import main
    from hierret.encoders.embed.local import EngineUnavailableError

    def fail(*args: object, **kw: object) -> None:
        raise failure

    monkeypatch.setattr(ray, "init", fail)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    with pytest.raises(EngineUnavailableError, match="--engine local") as err:
        embed_texts(TEXTS[:10], enc, engine="ray", model="hash", model_kw={"dimension": 16})
    assert type(failure).__name__ in str(err.value)
    assert VectorCache(tmp_path).count(enc.identity) == 0
    assert embed_ray.PARTITION_TEXTS  # the module stays importable
    argv = ["embed", "--encoder", "hash", "--engine", "ray", "--no-progress"]
    assert main([*argv, "--cache-dir", str(tmp_path / "c")]) == 2
    said = capsys.readouterr().err
    assert "--engine local" in said
    assert "Traceback" not in said


def test_an_address_is_joined_asking_no_resources(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """RAY_ADDRESS (as `ray job submit` sets it) or --address: ray.init(address=...) with
    no num_cpus (Ray refuses resources when connecting); unreachable: exit 2, the fix."""
    from hierret.cli import main
    from hierret.encoders.embed.local import EngineUnavailableError

    calls: list[dict[str, object]] = []

    def unreachable(*args: object, **kw: object) -> None:
        calls.append(kw)
        raise ConnectionError("Could not find any running Ray instance")

    monkeypatch.setattr(ray, "init", unreachable)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6390")
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    with pytest.raises(
        EngineUnavailableError, match=re.escape("ray status --address 127.0.0.1:6390")
    ):
        embed_texts(TEXTS[:10], enc, engine="ray", model="hash", model_kw={"dimension": 16})
    assert calls[-1]["address"] == "127.0.0.1:6390"
    assert not {"num_cpus", "num_gpus", "_node_ip_address"} & set(calls[-1])
    argv = ["embed", "--encoder", "hash", "--engine", "ray", "--no-progress"]
    argv += ["--cache-dir", str(tmp_path / "c"), "--address", "10.9.8.7:6379"]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert "'10.9.8.7:6379'" in said
    assert "ConnectionError" in said
    assert "Traceback" not in said
    assert calls[-1]["address"] == "10.9.8.7:6379"  # --address over RAY_ADDRESS
    assert VectorCache(tmp_path).count(enc.identity) == 0


def test_a_ray_client_address_without_its_extra_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from hierret.encoders.embed.local import EngineUnavailableError

    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "grpc" else find(name, *a)
    )
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    enc = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path))
    options = RayOptions(address="ray://10.9.8.7:10001")
    with pytest.raises(EngineUnavailableError, match=r"pip install 'ray\[client\]==2\.60\.0'"):
        embed_texts(TEXTS[:10], enc, engine="ray", model="hash", ray=options)
    monkeypatch.undo()  # the client extra installed (hierret[ray] pins it):
    calls: list[dict[str, object]] = []  # Ray Client gets the address alone (it passes

    def refused(**kw: object) -> None:  # every other argument to a driver on the cluster)
        calls.append(kw)
        raise ConnectionError("Failed to connect to the Ray Client server")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refused)
    with pytest.raises(EngineUnavailableError, match="could not join"):
        embed_texts(TEXTS[:10], enc, engine="ray", model="hash", ray=options)
    assert calls == [{"address": "ray://10.9.8.7:10001"}]


def test_a_cuda_build_of_torch_is_the_same_encoder_and_half_precision_is_not() -> None:
    """The actors' identity rule: torch's build label (+cpu, +cu128) names the hardware
    its kernels target, not the model or its arithmetic (embed_ray.same_vectors)."""
    from dataclasses import replace

    from hierret.encoders.embed.ray import same_vectors

    cpu = HashEncoder(dimension=16).identity
    cpu = replace(cpu, engine="sentence-transformers 5.1.0, torch 2.13.0+cpu, modules ab")
    for engine in ("torch 2.13.0+cu128", "torch 2.13.0", "torch 2.13.0+rocm6.4"):
        gpu = replace(cpu, engine=cpu.engine.replace("torch 2.13.0+cpu", engine))
        assert same_vectors(cpu, gpu)
        assert same_vectors(gpu, cpu)
    for other in (
        replace(cpu, engine=cpu.engine.replace("2.13.0+cpu", "2.12.0+cu128")),
        replace(cpu, engine=cpu.engine.replace("modules ab", "modules cd")),
        replace(cpu, precision="fp16"),
        replace(cpu, weights="sha256:0"),
    ):
        assert not same_vectors(cpu, other)


def test_a_gpu_for_an_encoder_without_a_device_is_refused_before_ray_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hierret.cli import main

    def no(*args: object, **kw: object) -> None:
        raise AssertionError("Ray was started for an encoder that cannot use a GPU")

    monkeypatch.setattr(ray, "init", no)
    argv = ["embed", "--encoder", "hash", "--engine", "ray", "--gpus-per-actor", "1"]
    assert main([*argv, "--no-progress", "--cache-dir", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert "hash runs on the CPU only" in said
    assert "--gpus-per-actor" in said


def test_the_knobs_reach_ray_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """--actors MIN-MAX, --cpus-per-actor, --gpus-per-actor, --batch-size: what Ray Data
    is asked for (a local start sized for the largest pool), without a cluster."""
    import ray.data

    inits: list[dict[str, object]] = []
    asked: dict[str, Any] = {}

    class Recorded:
        def map_batches(self, fn: object, **kw: object) -> Recorded:
            asked.update(kw)
            return self

        def iter_batches(self, **kw: object) -> Iterator[dict[str, Any]]:
            return iter(())

    def from_items(rows: list[dict[str, Any]], override_num_blocks: int) -> Recorded:
        asked["rows"] = [len(r["pos"]) for r in rows]
        return Recorded()

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kw: inits.append(kw))
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(ray.data, "from_items", from_items)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    options = RayOptions(actors=(2, 5), cpus_per_actor=0.5, gpus_per_actor=0.25, batch_size=128)
    identity = HashEncoder(dimension=16).identity
    assert list(ray_batches("minilm", {}, identity, options)(TEXTS[:1000], "passage")) == []
    assert inits[0]["num_cpus"] == 3  # ceil(5 actors x 0.5 CPU)
    assert "address" not in inits[0]
    assert (asked["compute"].min_size, asked["compute"].max_size) == (2, 5)
    assert (asked["num_cpus"], asked["num_gpus"], asked["batch_size"]) == (0.5, 0.25, 1)
    assert asked["fn_constructor_kwargs"]["gpu"] is True
    assert asked["rows"] == [128] * 7 + [1000 - 7 * 128]
