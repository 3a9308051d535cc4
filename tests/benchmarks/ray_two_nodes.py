"""Wall time of ``hierret embed --engine ray`` on a two-node cluster against the local engine.

Usage: ``python tests/benchmarks/ray_two_nodes.py [PASSAGES] [ENCODER]`` (default 256
SciFact passages, ``minilm``; ``$HIERRET_DATA`` as for the tests). Writes the first
SciFact documents that make at least ``PASSAGES`` passages to a BEIR folder, then
embeds them into fresh caches: with the local engine (this process, the encoder's
own threads), and streamed on a cluster of two nodes started as a user starts
them (``ray start --head`` and ``ray start --address``, on 127.0.0.1, one CPU each,
an actor of one CPU on each), the cluster already up. Prints both wall times, the
load average, and whether the caches are equal bit for bit. A machine fact, not a
finding: the two nodes share this machine's cores.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hierret.datasets import data_home
from hierret.encoders.cache import VectorCache, cached_encoder, text_keys
from hierret.encoders.embed import CorpusSource, RayOptions, embed_corpus, embed_texts
from hierret.structure.units import Document


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _corpus(folder: Path, passages: int) -> list[str]:
    """The first SciFact documents making at least ``passages`` passages, as a BEIR
    folder; their passage texts."""
    source_file = data_home() / "scifact" / "corpus.jsonl"
    folder.mkdir(parents=True)
    texts: list[str] = []
    with source_file.open("rb") as src, (folder / "corpus.jsonl").open("wb") as out:
        for line in src:
            out.write(line)
            out.flush()
            doc = json.loads(line)
            body = "\n\n".join(p for p in (doc["title"], doc["text"]) if p)
            texts += CorpusSource(str(folder / "corpus.jsonl"), "x").passages(
                Document(doc["_id"], doc["title"], body)
            )
            if len(texts) >= passages:
                return texts
    return texts


def main(passages: int = 256, encoder: str = "minilm") -> None:
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="h2n") as tmp:
        root = Path(tmp)
        texts = _corpus(root / "beir", passages)
        local = cached_encoder(encoder, VectorCache(root / "local"))
        local_s = embed_texts(texts, local, show_progress=False).seconds
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "disabled",  # a stray ~/.ray/auth_token is not this cluster's
        }
        os.environ.update({k: env[k] for k in ("RAY_USAGE_STATS_ENABLED", "RAY_AUTH_MODE")})
        port, temp = _free_port(), tempfile.mkdtemp(prefix="h2r", dir="/tmp")
        exe = str(Path(sys.executable).with_name("ray"))
        common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0", "--block"]
        logs = root / "nodes.log"
        with logs.open("w") as log:
            nodes = [
                subprocess.Popen(
                    [exe, "start", "--head", f"--port={port}", f"--temp-dir={temp}", *common],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            ]
        try:
            while not (Path(temp) / "ray_current_cluster").exists():
                if nodes[0].poll() is not None:
                    raise SystemExit(f"ray start --head exited: {logs.read_text()[-2000:]}")
                time.sleep(0.2)
            import ray

            ray.init(address=f"127.0.0.1:{port}", log_to_driver=False, configure_logging=False)
            for _ in range(3):  # a loaded machine: a worker node may time out starting
                with logs.open("a") as log:
                    nodes.append(
                        subprocess.Popen(
                            [exe, "start", f"--address=127.0.0.1:{port}", *common],
                            env=env,
                            stdout=log,
                            stderr=subprocess.STDOUT,
                            start_new_session=True,
                        )
                    )
                while sum(n["Alive"] for n in ray.nodes()) < 2 and nodes[-1].poll() is None:
                    time.sleep(0.5)
                if sum(n["Alive"] for n in ray.nodes()) >= 2:
                    break
            else:
                raise SystemExit(f"the worker node did not start: {logs.read_text()[-1500:]}")
            source = CorpusSource.of(str(root / "beir"))
            remote = cached_encoder(encoder, VectorCache(root / "ray"))
            report = embed_corpus(
                source, remote, model=encoder, ray=RayOptions(actors=2), show_progress=False
            )
            ray.shutdown()
        finally:
            for p in nodes:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        p.wait()
            shutil.rmtree(temp, ignore_errors=True)
        keys = sorted(set(text_keys(local.identity, "passage", texts)))
        same = (
            VectorCache(root / "ray").get(local.identity, keys)[0].tobytes()
            == VectorCache(root / "local").get(local.identity, keys)[0].tobytes()
        )
        print(
            f"{len(texts)} SciFact passages ({len(keys)} distinct), {encoder}: local engine "
            f"{local_s:.1f} s; two nodes (2 actors of 1 CPU, streamed) {report.seconds:.1f} s "
            f"({report.embedded} embedded); vectors equal bit for bit: {same}; load average "
            f"{load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
        )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 256, *args[1:2])
