"""``tilebound splits`` and the decode tables on the command line.

The split counts expected are worked out by hand in tests/unit/test_decode_splits.py (FA2 29, FA3 15,
FlashInfer 33, vLLM 64 for a Llama-3-8B-like decode at 32k keys on an H100); bad input is one line on
stderr and exit status 2.
"""

from __future__ import annotations

import pytest

from tilebound.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def rows(out: str) -> dict:
    """``{rule: [cells]}`` from the text table: the rule is the text before the split count."""
    table = {}
    for line in out.splitlines():
        cells = line.split()
        for i, c in enumerate(cells):
            if c.isdigit():
                table[" ".join(cells[:i])] = cells[i:]
                break
    return table


LLAMA = ("--at", "B=1", "H=32", "H_kv=8", "L_q=1", "N_k=32768", "d=128")


def test_one_row_per_rule_with_its_split_count(capsys):
    rc, out, err = run(capsys, "splits", "--gpu", "H100", *LLAMA)
    assert rc == 0 and err == ""
    t = rows(out)
    assert {r: t[r][0] for r in ("FlashAttention-2", "FlashAttention-3", "FlashInfer", "vLLM", "no split")} == \
        {"FlashAttention-2": "29", "FlashAttention-3": "15", "FlashInfer": "33", "vLLM": "64", "no split": "1"}
    assert "decode.time optimum" in t
    # the unsplit kernel: 8 CTAs, 358 us, 11 % of HBM bandwidth; every rule's count is far better
    # cells: S, bytes (2), split overhead (2), time (2), HBM fraction, source
    assert t["no split"][3:8] == ["0", "B", "358", "µs", "0.112"]
    for r in ("FlashAttention-2", "FlashAttention-3", "FlashInfer", "vLLM"):
        assert float(t[r][7]) > 0.8
    assert "on H100" in out and "132 SMs" in out


def test_gpu_changes_the_counts(capsys):
    rc, out, _ = run(capsys, "splits", "--gpu", "A100", *LLAMA)
    assert rc == 0 and rows(out)["FlashAttention-2"][0] == "24"        # 8 S / 216 >= 0.85 x best


def test_markdown_and_latex(capsys):
    for fmt in ("markdown", "latex"):
        rc, out, _ = run(capsys, "splits", *LLAMA, "--format", fmt)
        assert rc == 0 and "FlashInfer" in out


@pytest.mark.parametrize("argv,param", [
    (("--gpu", "X100"), "gpu"),
    (("--at", "H=33"), "H_kv"),
    (("--at", "N_k=0"), "N_k"),
    (("--at", "foo=1"), "foo"),
    (("--at", "Nk=5"), "Nk"),
    (("--at", "P=0"), "P"),
    (("--at", "d=1.5"), "d"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, param):
    rc, out, err = run(capsys, "splits", *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"tilebound: {param}: ")


def test_time_table_over_the_splits(capsys):
    rc, out, err = run(capsys, "table", "decode.time", "--vary", "S=1..128", "-q", "time", "-q", "hbm_fraction",
                       "--at", "B=1", "H=32", "H_kv=8", "d=128", "N_k=32768")
    assert rc == 0
    data = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert [r[0] for r in data] == ["1", "2", "4", "8", "16", "32", "64", "128"]
    assert data[0][1:3] == ["358", "µs"]


# ------------------------------------------------------------------ bounded work at any size (issue 18)
SHAPE = ("H=32", "H_kv=8", "L_q=1", "d=128")


def test_a_billion_keys_answers_with_vllms_partitions(capsys):
    """vLLM's fixed 512-token partitions: ceil(10**9 / 512) = 1,953,125 splits, printed, and the optimum
    search visits 1..128 and that count only (it used to visit all 1,953,125)."""
    rc, out, err = run(capsys, "splits", "--at", *SHAPE, "B=1", "N_k=10**9")
    assert rc == 0 and err == ""
    assert next(ln for ln in out.splitlines() if ln.startswith("vLLM")).split()[1] == "1,953,125"
    assert "argmin over S = 1..128 and 1953125" in out


def test_a_shape_beyond_a_kernels_int_is_refused_in_its_row(capsys):
    """B = 10**9 sequences: FA2 and FA3 count CTAs in a 32-bit int (8 * 10**9 of them overflow it), so their
    rows say so; FlashInfer and vLLM still answer (the batch fills the grid: no split for FlashInfer)."""
    rc, out, err = run(capsys, "splits", "--at", *SHAPE, "B=10**9", "N_k=32768")
    assert rc == 0 and err == ""
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith(("FlashAttention", "FlashInfer"))}
    assert "refused: B: batch x heads x row blocks = 8,000,000,000" in lines["FlashAttention-2"]
    assert "refused: B:" in lines["FlashAttention-3"]
    assert rows(out)["FlashInfer"][0] == "1"


@pytest.mark.parametrize("at", [("B=1", "N_k=10**30"), ("B=10**30", "N_k=32768")])
def test_huge_sizes_finish_and_say_why(capsys, at):
    rc, out, err = run(capsys, "splits", "--at", *SHAPE, *at)
    assert rc == 0 and err == "" and "exceeds the kernel's 32-bit int" in out


# ------------------------------------------------------------------ --mla: FlashMLA's scheduler (issue 19)
def test_mla_splits_of_one_deepseek_sequence(capsys):
    """One 32k sequence of DeepSeek-V3 (128 heads: two row groups of 64) on 132 SMs: 66 partitions; 512 key
    blocks plus 5 of overhead each gives ceil(517 / 66) + 5 = 13 a partition, 8 blocks each: 64 splits
    (worked in tuning/mla_splits.py, checked there against the scheduler's loop)."""
    rc, out, err = run(capsys, "splits", "--mla", "--gpu", "H100", "--at", "B=1", "H=128", "L_q=1", "N_k=32768")
    assert rc == 0 and err == ""
    row = next(ln for ln in out.splitlines() if ln.startswith("FlashMLA ("))
    assert row.split()[3] == "64"


@pytest.mark.parametrize("at,line", [(["B=10**9"], "tilebound: B: FlashMLA's scheduler lists every sequence"),
                                     (["S=4"], "tilebound: S: is what the scheduler chooses"),
                                     (["H_kv=8"], "tilebound: H_kv: not a parameter of decode.mla")])
def test_mla_splits_bad_input(capsys, at, line):
    rc, out, err = run(capsys, "splits", "--mla", "--at", *at)
    assert rc == 2 and err.startswith(line) and err.count("\n") == 1
