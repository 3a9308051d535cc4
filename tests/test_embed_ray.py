"""``hierret embed --engine ray``: Ray Data actors, the driver as the cache's only writer.

Skipped unless Ray is installed (the extra ``hierret[ray]``); one local cluster
(127.0.0.1, 2 CPUs, usage statistics off) serves the whole module.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hierret.cache import CachedEncoder, VectorCache, text_keys
from hierret.embed import embed_texts
from hierret.embed_ray import ray_batches
from hierret.encoders import HashEncoder

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray")  # Ray's own

TEXTS = [f"passage {i} " + "word " * (i % 17) + f"on topic {i % 13}" for i in range(2000)]


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


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
    )
    yield
    ray.shutdown()


def test_ray_and_local_give_the_same_vectors(tmp_path: Path, cluster: None) -> None:
    model = HashEncoder(dimension=16)
    local = CachedEncoder(model, VectorCache(tmp_path / "local"))
    embed_texts(TEXTS, local, show_progress=False)
    remote = CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / "ray"))
    embed_texts(TEXTS[:300], remote, show_progress=False)  # some already there
    report = embed_texts(
        TEXTS, remote, engine="ray", model="hash", model_kw={"dimension": 16}, actors=2
    )
    assert (report.cached, report.embedded) == (300, 1700)
    assert vectors(tmp_path / "ray", model) == vectors(tmp_path / "local", model)
    shards = list((tmp_path / "ray" / model.identity.key()).glob("*.hvc"))
    assert len(shards) >= 2  # stored partition by partition as they arrived


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
