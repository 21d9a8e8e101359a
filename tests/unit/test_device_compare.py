"""``bench/device/compare.py`` on the committed H200 run (``bench/device/h200-2026-12-04.json``), no GPU needed.

References are independent of the code under test: the rank correlation against hand-worked examples, the
model's times against :func:`tuning.schedule.gemm_time` one config at a time (the scalar path, not the
vectorised one compare uses), the launch rules against :func:`tuning.schedule.launch_failures` per config, and
the no-reuse HBM count of one Nsight Compute launch against a count of its waves' panels done by hand below.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from tuning.schedule import GemmConfig, gemm_time, launch_failures

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "device" / "h200-2026-12-04.json"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("device_compare", ROOT / "bench" / "device" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run(compare):
    return compare.load(RUN)


def test_ranks_average_ties(compare):
    # 10 < 20 = 20 < 30: the two 20s share ranks 2 and 3
    assert list(compare.ranks([20, 10, 30, 20])) == [2.5, 1.0, 4.0, 2.5]


def test_spearman_hand_worked(compare):
    # no ties: d = (0, 1, 1, 0), rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    assert compare.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert compare.spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    # ties: ranks of y = (1, 2, 3.5, 5, 3.5); centred x = (-2, -1, 0, 1, 2), y = (-2, -1, .5, 2, .5):
    # sum of products 8, sums of squares 10 and 9.5, rho = 8 / sqrt(95)
    assert compare.spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))
    assert math.isnan(compare.spearman([1, 2, 3], [7, 7, 7]))


def test_every_measured_config_launches_and_is_priced(compare, run):
    assert compare.check_configs(run) == []
    n = 0
    for entry in run["shapes"]:
        M, N, K = entry["M"], entry["N"], entry["K"]
        model = compare.model_times(entry)
        for c, t in zip(entry["configs"], model):
            cfg = GemmConfig(*c["config"])
            assert launch_failures(cfg, "H200") == []
            assert math.isfinite(t) and t > 0
            assert t == pytest.approx(gemm_time(cfg, M, N, K, hw="H200"), rel=1e-12)
            assert c["median_s"] > 0 and c["rel_err"] < run["tolerance"]
            n += 1
    assert n >= 100


def test_shape_summary_is_consistent(compare, run):
    for entry in run["shapes"]:
        s = compare.shape_summary(entry)
        assert -1 <= s["spearman"] <= 1
        meas = sorted(c["median_s"] for c in entry["configs"])
        assert s["best_s"] == meas[0]
        if s["pick_s"] is not None:                # the model's pick was measured: its rank and ratio
            assert meas[s["pick_rank"] - 1] == s["pick_s"]
            assert s["best_over_pick"] == pytest.approx(meas[0] / s["pick_s"])
            assert 0 < s["best_over_pick"] <= 1
        assert s["ratio_p10"] <= s["ratio_median"] <= s["ratio_p90"]


def test_ncu_no_reuse_count_by_hand(compare, run):
    # 4096^3, 256x128 tiles, G_M=1 (row-major), P=132: 16 x 32 = 512 tiles in waves [0,132), [132,264),
    # [264,396), [396,512).  Each wave spans whole tile rows, so it reads all 32 B panels (128 x 4096 each),
    # and tile rows 0-4, 4-8, 8-12, 12-15: 5 + 5 + 5 + 4 = 19 A panels (256 x 4096 each).
    by_hand = 2 * (19 * 256 * 4096 + 4 * 32 * 128 * 4096)
    rows = compare.ncu_summary(run)
    assert rows, "the committed run has Nsight Compute rows"
    row = next(r for r in rows if r["shape"] == (4096, 4096, 4096) and r["config"].G_M == 1)
    assert row["P"] == 132
    assert row["no_reuse"] == by_hand == 174_063_616
    assert row["compulsory"] == 2 * 2 * 4096 * 4096
    assert row["compulsory"] <= row["lru_model_l2"] <= row["no_reuse"]
    raw = next(r for r in run["ncu"]["rows"] if r["id"] == rows.index(row) and r["metric"] == "dram__bytes_read.sum")
    assert row["measured"] == raw["value"]     # --print-units base: bytes as recorded


def test_ncu_units(compare):
    rows = [{"id": 0, "metric": "dram__bytes_read.sum", "unit": "Mbyte", "value": 1.5},
            {"id": 1, "metric": "dram__bytes_read.sum", "unit": "byte", "value": 7.0}]
    assert compare.ncu_bytes(rows, 0, "dram__bytes_read.sum") == 1_500_000
    assert compare.ncu_bytes(rows, 1, "dram__bytes_read.sum") == 7
    assert compare.ncu_bytes(rows, 2, "dram__bytes_read.sum") is None


def test_report_prints(compare, run):
    text = compare.report(run)
    assert "spearman" in text and "4096x4096x4096" in text and "HBM reads" in text
