"""Shapes (tuning.shapes): the course's four from lecture 13's script, LLM layer widths from the models'
published configs (Llama 2 / Llama 3 papers and config.json), and the shape parser's refusals."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from base.errors import BadInput
from tuning.shapes import COURSE_SHAPES, LLM_SCORE_SHAPES, MODELS, layer_nk, llm_shapes, parse_shape

SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_b1a68824c288e7cd.txt"


def test_course_shapes_are_lecture_13s():
    expect = [(4096, 4096, 4096), (512, 14336, 4096), (2048, 2048, 512), (16, 4096, 4096)]
    assert [s.mnk for s in COURSE_SHAPES] == expect
    if SEED.exists():                                  # the script itself, where the checkout has it
        text = SEED.read_text(encoding="utf-8")
        m = re.search(r"^SHAPES = (\[.*?\])\n\n", text, re.S | re.M)
        assert [s for s, _ in ast.literal_eval(m.group(1))] == expect


@pytest.mark.parametrize("model,layer,nk", [
    # Llama-3-8B (Llama 3 paper Table 3): hidden 4096, FFN 14336, 32 heads, 8 KV heads of 128
    ("Llama-3-8B", "qkv", ((32 + 2 * 8) * 128, 4096)),
    ("Llama-3-8B", "o", (4096, 4096)),
    ("Llama-3-8B", "gate_up", (2 * 14336, 4096)),
    ("Llama-3-8B", "down", (4096, 14336)),
    # Llama-3-70B: hidden 8192, FFN 28672, 64 heads, 8 KV heads
    ("Llama-3-70B", "qkv", (10240, 8192)),
    ("Llama-3-70B", "down", (8192, 28672)),
    # Llama-2-7B (MHA): hidden 4096, intermediate 11008
    ("Llama-2-7B", "qkv", (12288, 4096)),
    ("Llama-2-7B", "gate_up", (22016, 4096)),
    ("Llama-2-13B", "o", (5120, 5120)),
])
def test_layer_widths(model, layer, nk):
    assert layer_nk(model, layer) == nk


def test_llm_shape_set_covers_decode_and_prefill_once_each():
    shapes = llm_shapes()
    mnk = [s.mnk for s in shapes]
    assert len(mnk) == len(set(mnk))
    ms = {s.M for s in shapes}
    assert min(ms) == 1 and max(m for m in ms if m <= 256) == 256 and min(m for m in ms if m > 256) == 512
    assert max(ms) == 8192
    shared = [s for s in shapes if s.mnk == (1, 4096, 4096)]
    assert len(shared) == 1 and "Llama-2-7B o" in shared[0].name and "Llama-3-8B o" in shared[0].name
    assert {s.M for s in LLM_SCORE_SHAPES} == {1, 16, 256, 512, 8192} and len(LLM_SCORE_SHAPES) == 40
    assert set(MODELS) == {"Llama-2-7B", "Llama-2-13B", "Llama-3-8B", "Llama-3-70B"}


@pytest.mark.parametrize("text,param", [
    ("0,4096,4096", "M"), ("16,-4,4096", "N"), ("16,4096,0.5", "K"), ("16,4096", "shape"), ("a,b,c", "M"),
    ("", "shape"),
])
def test_parse_shape_refuses(text, param):
    with pytest.raises(BadInput) as e:
        parse_shape(text)
    assert e.value.param == param


def test_parse_shape_reads_both_spellings():
    assert parse_shape("4096,4096,4096").mnk == parse_shape("4096x4096x4096").mnk == (4096, 4096, 4096)


def test_unknown_layer_or_model():
    with pytest.raises(BadInput) as e:
        layer_nk("Llama-3-8B", "mlp")
    assert e.value.param == "layer"
    with pytest.raises(BadInput) as e:
        llm_shapes(["GPT-5"])
    assert e.value.param == "model"
