"""The lecture-13 script (03_gpu_schedule_space.py) runs unchanged on the adapters, and its printed
landscape has the structure the lecture's observations state (figures quoted from the script's text)."""

import re

import pytest


def test_lecture13_script(course_script):
    """One run of the script; each group of its observations is checked by a function below."""
    out, _seconds = course_script("lecture13")
    check_space_counts(out)
    check_big_gemm_landscape(out)
    check_shapes_and_penalties(out)
    check_one_at_a_time(out)


def _section(out, n):
    parts = re.split(r"\n=+\n演示 ", out)
    return next(p for p in parts if p.startswith(f"{n}："))


def _rows(text):
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|") and not line.startswith("|--")][1:]


def check_space_counts(out):
    assert "一共 6000 个组合，能启动的 3744 个（62%）" in out
    rows = dict((r[0], int(r[1])) for r in _rows(_section(out, 1).split("不能启动的原因")[1]))
    assert rows == {"每线程寄存器超过 255": 1200, "warp 的块小于一条 mma（16×8）": 900, "共享内存超过 227 KB": 384}


def check_big_gemm_landscape(out):
    sec = _section(out, 2)
    rows = _rows(sec)
    assert len(rows) == 6
    pairs = set()
    for cfg, _t, tflops, rel in rows:
        bm, bn, bk, w, s, g = map(int, cfg.strip("()").split(","))
        assert (bm, bn, w) == (256, 128, 8)                 # "256x128 tiles, 8 warps"
        assert rel == "1.000"                               # ties
        assert 850 <= int(tflops) <= 950                    # "about 900 TFLOPS, ~90% of 989"
        pairs.add((bk, s))
    # "BK = 32 with 4-5 stages, 64 with 3, 128 with 2 are equally fast" (64 with 4 also fits and hides)
    assert len(pairs) >= 2 and pairs <= {(32, 4), (32, 5), (64, 3), (64, 4), (128, 2)}
    m = re.search(r"离最快 5% 以内的 (\d+) 个、2 倍以内的 (\d+) 个", sec)
    within5, within2 = int(m.group(1)), int(m.group(2))
    assert 6 <= within5 < 100 and within5 < within2 < 3744  # good configs are rare
    med = float(re.search(r"中位数 ([\d.]+)", sec).group(1))
    assert med > 2


def check_shapes_and_penalties(out):
    sec = _section(out, 3)
    tables = sec.split("把每一行形状的最优配置")
    best = _rows(tables[0])
    cfgs = [tuple(map(int, r[2].strip("()").split(","))) for r in best]
    assert cfgs[0] == cfgs[1] == cfgs[2]                    # the first three shapes share the optimum
    assert cfgs[0][:2] == (256, 128) and cfgs[0][3] == 8
    assert cfgs[3][0] == 16 and cfgs[3][1] <= 32            # decode: BM = 16, small tiles
    pen = [[float(x) for x in r[1:]] for r in _rows(tables[1])]
    for i in range(4):
        assert pen[i][i] == 1.0
    for i in range(3):
        assert 2.5 <= pen[i][3] <= 4.0                      # "about 3x slower on decode"
    for j in range(3):
        assert 6.6 <= pen[3][j] <= 14                       # "6.6-14x on the other three"


def check_one_at_a_time(out):
    sec = _section(out, 4)
    cells = {r[0]: dict(c.split(":") for c in r[1].split()) for r in _rows(sec)}
    assert cells["bm"]["16"] == cells["bm"]["32"] == "—"   # 8 warps: warp tile below one mma
    assert cells["bm"]["256"] == "1.00*" and cells["bn"]["128"] == "1.00*"
    assert 1.4 <= float(cells["bm"]["128"]) <= 3 and 1.4 <= float(cells["bn"]["64"]) <= 3
    assert cells["warps"] == {"1": "—", "2": "—", "4": "—", "8": "1.00*"}
    st = cells["stages"]
    assert st["4"] == "1.00*" and st["5"] == "1.00"        # 5 stages no better
    assert 3.2 <= float(st["1"]) <= 4.0                     # the lecture: 3.67
    assert float(st["1"]) > float(st["2"]) > float(st["3"]) > 1.0
    assert cells["bk"]["128"] == "—"                       # BK = 128 with 4 stages overflows smem
    assert set(cells["group"].values()) <= {"1.00", "1.00*"}


# --------------------------------------------------------------------------------- the adapter itself (no seed needed)
@pytest.fixture
def sched_lab(monkeypatch):
    """Import ``sched_lab`` the way the script does: its own folder on ``sys.path``, nothing else of course/."""
    import importlib
    import sys
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2] / "course" / "lecture13"
    monkeypatch.setattr(sys, "path", [str(folder)] + [p for p in sys.path if "lecture" not in p])
    for mod in ("sched_lab", "kernel_lab", "console"):
        monkeypatch.delitem(sys.modules, mod, raising=False)
    return importlib.import_module("sched_lab")


def test_adapter_fields_as_the_script_uses_them(sched_lab):
    assert list(sched_lab.SPACE) == ["bm", "bn", "bk", "warps", "stages", "group"]
    c = sched_lab.GemmConfig(256, 128, 32, 8, 4, 1)
    assert c.as_tuple() == (256, 128, 32, 8, 4, 1) and {c: 0}[sched_lab.GemmConfig(*c.as_tuple())] == 0
    assert sched_lab.H100_TC.smem_limit == 227 * 1024
    assert len(sched_lab.all_configs()) == 6000
    assert sched_lab.static_valid(c) and not sched_lab.static_valid(sched_lab.GemmConfig(256, 128, 128, 8, 4, 1))


@pytest.mark.parametrize("call,param", [
    (lambda m: m.gemm_time(m.GemmConfig(256, 128, 32, 8, 4, 1), 0, 4096, 4096), "M"),
    (lambda m: m.gemm_time(m.GemmConfig(256, 128, 32, 8, 4, 1), 16, -4, 4096), "N"),
    (lambda m: m.gemm_time(m.GemmConfig(256, 128, 32, 8, 4, 1), 16, 4096, 0.5), "K"),
    (lambda m: m.GemmConfig(256, 128, 32, 8, 4, 2), "group"),
    (lambda m: m.GemmConfig(256, 128, 32, 8, 6, 1), "stages"),
    (lambda m: m.gemm_time((256, 128, 32), 16, 4096, 4096), "config"),
    (lambda m: m.gemm_time(m.GemmConfig(256, 128, 32, 8, 4, 1), 16, 4096, 4096, hw="TPU"), "hw"),
    (lambda m: m.static_valid(m.GemmConfig(256, 128, 32, 8, 4, 1), hw="B200"), "hw"),
])
def test_adapter_bad_input_names_the_parameter(sched_lab, call, param):
    with pytest.raises(ValueError) as e:
        call(sched_lab)
    assert str(e.value).startswith(param + ":")
