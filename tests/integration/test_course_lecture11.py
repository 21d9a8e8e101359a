"""The lecture-11 script runs unchanged on the adapters, and its tables agree with its own text."""

import re


def test_lecture11_script(course_script):
    out, seconds = course_script("lecture11")
    # demo 1: exact attention, errors of order 1e-15 or below
    errs = [float(x) for x in re.findall(r"\|\s*(\d\.\de[-+]\d\d)\s*", out)]
    assert len(errs) == 16 and max(errs) < 1e-14
    # demo 2: "÷ (N²d²/M)" about 12-25 and flat; FLOPs identical
    demo2 = out.split("演示 2：")[1].split("演示 3：")[0]
    rows = [r for r in demo2.splitlines() if re.match(r"\|\s*\d{3,4}\s*\|", r)]
    assert len(rows) == 5
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        std_over_fa1, r1, r2, flops = float(cells[5]), float(cells[6]), float(cells[7]), cells[8]
        assert 2.8 <= std_over_fa1 <= 4.1            # "3-4 times"
        assert 12 <= r1 <= 20 and 25 <= r2 <= 29     # "about 12-25", nearly constant in N
        assert flops == "1.000"
    # demo 4: standard 25 GB, FlashAttention 7.7-8.8 GB; roofline 16.3 -> 4.9-5.6 ms
    demo4 = out.split("演示 4：")[1]
    table = [r for r in demo4.splitlines() if r.startswith("|") and "GB" in r]
    std, fa_paper, fa_128 = table[0], table[1], table[2]
    assert "25.2 GB" in std and "16.2 ms" in std
    assert "8.75 GB" in fa_paper and "5.63 ms" in fa_paper
    assert "7.69 GB" in fa_128 and "4.94 ms" in fa_128
    assert "824.6" in std and "962.1" in fa_paper     # ratio 14/12: ~17 % more matmul FLOPs
