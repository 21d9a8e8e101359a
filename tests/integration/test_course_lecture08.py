"""Lecture 8 (``04_async_pipelines.py``) runs unchanged on the adapters, and its tables agree with
the figures its own observations state (and with hand-derived values written here)."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def out(course_script):
    stdout, seconds = course_script("lecture08")
    print(f"lecture08 ran in {seconds:.2f} s")          # the course promises < 1 s; reported, not asserted
    return stdout


def rows(text, first_cell):
    """Table rows (github format) whose first cell starts with ``first_cell``, as lists of cells."""
    found = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells and cells[0].startswith(first_cell):
            found.append(cells)
    return found


def pct(cell):
    return float(cell.rstrip("%"))


def test_demo1_littles_law(out):
    assert "2.35 MB" in out and "17.8 KB" in out                     # docs/conventions.md §5
    four_byte = rows(out, "每个线程读 4 字节")[0]
    assert round(float(four_byte[2])) == 139                         # "相当于 139 个 warp"
    assert float(four_byte[2]) > 64                                  # beyond the 64-warp limit
    tma = rows(out, "TMA")[0]
    assert tma[1] == "1"


def test_demo2_pipeline(out):
    l2_fixed, l2_jitter = rows(out, "数据在 L2 里")
    hbm_fixed, hbm_jitter = rows(out, "每块都要从显存读")
    sync, double, s3, s4, s6, s8 = (pct(c) for c in l2_fixed[2:])
    # "数据在 L2 里时只忙 22%": hand value t_c / (L + t_x + t_c) = 280 / 1260
    assert sync == 22
    assert double == pytest.approx(2 * 280 / 1260 * 100, abs=1)     # two loads per round trip
    # "要 4–5 级才能完全藏住 700 ns 的延迟": 4 stages not yet, 6 stages (>= 5) essentially all
    assert s4 < 95 <= s6
    need = float(re.search(r"≈ ([\d.]+) 级", out).group(1))
    assert 4 < need <= 5
    # jitter needs more stages: each column lower than the fixed latency's, and still rising at 8
    jit = [pct(c) for c in l2_jitter[2:]]
    assert all(j < f for j, f in zip(jit, (sync, double, s3, s4, s6, s8)))
    assert jit == sorted(jit) and jit[-1] < 95
    # "流水线再深也只能到约 21%": bandwidth cap t_c / t_hbm = 0.2167, whatever the stages
    for cell in hbm_fixed[3:] + hbm_jitter[4:]:
        assert 20 <= pct(cell) <= 22
    # "传输本身比计算慢约 4.6 倍"
    m = re.search(r"算一块 ([\d.]+) ns.*只从显存传（平分带宽）([\d.]+) µs", out)
    assert round(float(m.group(2)) * 1000 / float(m.group(1)), 1) == 4.6


def test_demo3_pingpong(out):
    bf16, fp8 = rows(out, "BF16")[0], rows(out, "FP8")[0]
    gain = lambda r: float(r[-1].rstrip("×"))
    assert round(gain(bf16), 1) == 1.4                               # "重叠能快约 1.4 倍"
    assert round(gain(fp8), 1) == 1.9                                # "约 1.9 倍"
    assert 40 <= pct(bf16[3]) < 50                                   # "exp 占矩阵运算的四成多"
    assert pct(fp8[3]) == pytest.approx(2 * pct(bf16[3]), abs=1)     # FP8 halves the matmul time
    assert "4.5 T" in out                                            # the NVIDIA-table exp figure


# --------------------------------------------------------------------------------- the adapter itself (no seed needed)
@pytest.fixture
def hw_engines(monkeypatch):
    """Import ``hw_engines`` the way the script does: only its own folder on ``sys.path``."""
    import importlib
    import sys
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2] / "course" / "lecture08"
    monkeypatch.setattr(sys, "path", [str(folder)] + [p for p in sys.path if "lecture01" not in p])
    for mod in ("hw_engines", "hw_specs"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    return importlib.import_module("hw_engines")


def test_importing_hw_engines_makes_lecture01_importable(hw_engines):
    import importlib
    specs = importlib.import_module("hw_specs")
    assert hw_engines.H100 is specs.H100
    # course units: 1.83 GHz, 3.35 TB/s, 132 SMs, 4096 FLOP/SM/clk, 989.4 TFLOPS, 4.5 T exp/s (docs/conventions.md §3)
    h = hw_engines.H100
    assert (h.clock_ghz, h.hbm_tbs, h.sms, h.tc_flops_per_sm_clk()) == (1.83, 3.35, 132, 4096)
    assert round(h.tc_peak() / 1e12, 1) == 989.4 and specs.H100.exp_per_s == 4.5e12


def test_pipeline_sim_hand_values(hw_engines):
    # synchronous: each tile takes L + t_x + t_c = 5 + 2 + 3 = 10, busy 3/10; two buffers: the hand
    # timeline of tests/test_latency_sims.py (makespan 20 for 3 tiles)
    assert hw_engines.pipeline_sim(4, 3.0, 2.0, 5.0, 1)["busy"] == pytest.approx(0.3, rel=1e-12)
    r = hw_engines.pipeline_sim(3, 3.0, 2.0, 5.0, 2)
    assert r["makespan"] == 20 and r["busy"] == pytest.approx(9 / 20, rel=1e-12)


@pytest.mark.parametrize("kw,param", [
    (dict(n=0), "n"), (dict(stages=0), "stages"), (dict(t_comp=0.0), "t_comp"), (dict(t_x=-1e-9), "t_x"),
    (dict(latency=-7e-7), "latency"), (dict(jitter=-1.0), "jitter"),
])
def test_pipeline_sim_bad_input_names_the_parameter(hw_engines, kw, param):
    from base.errors import BadInput
    args = dict(n=8, t_comp=2.8e-7, t_x=2.8e-7, latency=7e-7, stages=2)
    args.update(kw)
    with pytest.raises(BadInput) as exc:              # a ValueError, as the course scripts expect
        hw_engines.pipeline_sim(**args)
    assert isinstance(exc.value, ValueError)
    assert str(exc.value).startswith(f"{param}:") and exc.value.param == param
