"""``hierret embed`` and :func:`hierret.encoders.embed.local.embed_texts`: a corpus into the
cache."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from hierret.cli import main
from hierret.encoders import HashEncoder, load_encoder
from hierret.encoders.cache import (
    CachedEncoder,
    CacheNotWritableError,
    CacheWriteError,
    VectorCache,
)
from hierret.encoders.embed.local import EngineUnavailableError, embed_texts


class Interrupted(HashEncoder):
    """Embeds 4 texts a batch; Ctrl-C arrives while making batch 2."""

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        for b, lo in enumerate(range(0, len(texts), 4)):
            if b == 2:
                raise KeyboardInterrupt
            idx = list(range(lo, min(lo + 4, len(texts))))
            yield idx, self._embed([texts[i] for i in idx])


def test_embed_keeps_batches_and_counts_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = [f"text {i}" for i in range(20)]
    with pytest.raises(KeyboardInterrupt):
        embed_texts(texts, CachedEncoder(Interrupted(dimension=8), VectorCache(tmp_path)))
    assert VectorCache(tmp_path).count(HashEncoder(dimension=8).identity) == 8
    capsys.readouterr()
    enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp_path))
    report = embed_texts(texts + texts[:3], enc, show_progress=True)
    assert (report.texts, report.distinct, report.cached, report.embedded) == (23, 20, 8, 12)
    assert "20/20" in capsys.readouterr().err  # the bar counts texts, from those cached
    vecs = VectorCache(tmp_path).lookup(enc.identity, texts)
    assert np.array_equal(vecs, HashEncoder(dimension=8).encode_passages(texts))


def test_cli_embed_then_search_embeds_only_the_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--encoder", "hash", "--cache-dir", str(tmp_path)]
    assert main(["embed", "--no-progress", *args]) == 0
    assert "0 were in the cache, 603 embedded" in capsys.readouterr().out
    ident = load_encoder("hash").identity
    assert VectorCache(tmp_path).count(ident) == 603
    assert main(["embed", "--no-progress", *args]) == 0
    assert "603 were in the cache, 0 embedded" in capsys.readouterr().out
    assert main(["search", "finally clause", "--k", "1", *args]) == 0
    assert VectorCache(tmp_path).count(ident) == 604  # the question only


def test_ray_engine_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec  # Ray hidden, whether or not the extra is here

    def without_ray(name: str, *args: Any) -> Any:
        return None if name == "ray" else find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_ray)
    argv = ["embed", "--engine", "ray", "--encoder", "hash", "--cache-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "hierret embed: error:" in err
    assert "--engine local" in err
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing embedded
    with pytest.raises(EngineUnavailableError):
        embed_texts(["x"], CachedEncoder(HashEncoder(), VectorCache(tmp_path)), engine="ray")


def test_import_hierret_does_not_import_ray() -> None:
    code = (
        "import sys, hierret, hierret.encoders.embed.local, hierret.cli; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class Counting(HashEncoder):
    """Embeds 4 texts a batch and counts the texts it embeds."""

    def __init__(self) -> None:
        super().__init__(dimension=8)
        self.embedded = 0

    def _embed_batches(self, texts: list[str]) -> Iterator[tuple[list[int], NDArray[Any]]]:
        for lo in range(0, len(texts), 4):
            idx = list(range(lo, min(lo + 4, len(texts))))
            self.embedded += len(idx)
            yield idx, self._embed([texts[i] for i in idx])


def test_embed_into_an_unwritable_cache_fails_before_embedding(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    model = Counting()
    with pytest.raises(CacheNotWritableError, match="not writable"):
        embed_texts(["a", "b"], CachedEncoder(model, VectorCache(blocker)), show_progress=False)
    assert model.embedded == 0
    assert main(["embed", "--encoder", "hash", "--no-progress", "--cache-dir", str(blocker)]) == 2


def test_embed_stops_with_an_error_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hierret.encoders.cache import _shelf as shelf_mod  # where shards are written

    real, shards = shelf_mod.atomic_write, [0]

    def full(path: Any, content: Any, **kw: Any) -> Any:
        if str(path).endswith(".hvc"):
            shards[0] += 1
            if shards[0] > 1:
                raise OSError(28, "No space left on device", str(path))
        return real(path, content, **kw)

    monkeypatch.setattr(shelf_mod, "atomic_write", full)
    model = Counting()
    texts = [f"text {i}" for i in range(20)]
    with pytest.raises(CacheWriteError, match="after 4 were stored") as err:
        embed_texts(texts, CachedEncoder(model, VectorCache(tmp_path)), show_progress=False)
    assert err.value.stored == 4
    assert model.embedded == 8  # stopped at the first failure
    monkeypatch.setattr(shelf_mod, "atomic_write", real)
    assert VectorCache(tmp_path).count(model.identity) == 4  # the stored batch is kept


def test_a_warm_cache_needs_no_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    enc = CachedEncoder(HashEncoder(dimension=8), VectorCache(tmp_path))
    embed_texts(["a", "b"], enc, show_progress=False)

    def refuse(*args: Any) -> None:
        raise CacheNotWritableError("read-only", tmp_path)

    monkeypatch.setattr(VectorCache, "check_writable", refuse)  # a read-only shared cache
    again = embed_texts(["a", "b"], enc, show_progress=False)
    assert (again.cached, again.embedded) == (2, 0)
    with pytest.raises(CacheNotWritableError):
        embed_texts(["a", "c"], enc, show_progress=False)


def _content(root: Path, identity: Any, texts: list[str]) -> bytes:
    """Every (key, vector) of ``texts`` in the cache at ``root``, sorted by key."""
    from hierret.encoders.cache import text_keys

    keys = sorted(set(text_keys(identity, "passage", texts)))
    vecs, found = VectorCache(root).get(identity, keys)
    assert found.all()
    return b"".join(keys) + vecs.tobytes()


def test_shards_merge_into_the_cache_one_run_makes(tmp_path: Path) -> None:
    """3 shards as 3 jobs with their own caches: disjoint, together every text once,
    and their vector files copied into one folder are the single run's cache."""
    import shutil

    texts = [f"passage {i} " + "word " * (i % 7) for i in range(500)] + ["passage 1 word "]
    model = HashEncoder(dimension=16)
    one = embed_texts(texts, CachedEncoder(model, VectorCache(tmp_path / "one")))
    assert (one.distinct, one.embedded) == (500, 500)
    reports = [
        embed_texts(
            texts,
            CachedEncoder(HashEncoder(dimension=16), VectorCache(tmp_path / f"s{i}")),
            shard=(i, 3),
            show_progress=False,
        )
        for i in range(3)
    ]
    assert sum(r.embedded for r in reports) == 500  # each text exactly once
    assert all(100 < r.embedded < 230 for r in reports)  # about a third each
    assert all(r.texts == 501 for r in reports)
    merged = tmp_path / "merged" / model.identity.key()
    merged.mkdir(parents=True)
    for i in range(3):
        for f in (tmp_path / f"s{i}" / model.identity.key()).iterdir():
            if f.name == "identity.json":  # the same in every job's folder
                assert i == 0 or f.read_bytes() == (merged / f.name).read_bytes()
            else:
                assert not (merged / f.name).exists()  # no two jobs write the same file
            shutil.copy2(f, merged / f.name)
    assert _content(tmp_path / "merged", model.identity, texts) == _content(
        tmp_path / "one", model.identity, texts
    )
    again = embed_texts(texts, CachedEncoder(model, VectorCache(tmp_path / "merged")))
    assert again.embedded == 0


def test_cli_shards_into_one_cache_leave_nothing_for_the_whole_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["embed", "--encoder", "hash", "--no-progress", "--cache-dir", str(tmp_path)]
    for i in range(2):
        assert main([*argv, "--shard", f"{i}/2"]) == 0
        assert f"in shard {i}/2" in capsys.readouterr().out
    assert main(argv) == 0
    assert ", 0 embedded in" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--shard", "2/2"], "0 <= i < n"),
        (["--shard", "x"], "0 <= i < n"),
        (["--actors", "3-1"], "MIN-MAX"),
        (["--gpus-per-actor", "-1"], "a number >= 0"),
        (["--actors", "4"], "--actors applies only to --engine ray"),
    ],
)
def test_cli_embed_refuses_bad_knobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    argv = ["embed", "--encoder", "hash", "--no-progress", "--cache-dir", str(tmp_path)]
    try:
        status = main([*argv, *extra])
    except SystemExit as exit_:  # argparse's own refusal
        status = int(exit_.code or 0)
    assert status == 2
    assert said in capsys.readouterr().err
    assert not any(tmp_path.rglob("*.hvc"))
