"""``tilebound grade``: exit status 0 (agrees), 1 (disagrees, or the student's code raised), 2 (bad input, one
line on stderr naming the option); the ``--json`` result an autograder reads.

The expected values are computed here, by hand: the FlashAttention issue #1705 formula at ``N = d = M = 1`` is
``2 + 8 + 8 = 18``, and Algorithm 1 with one block each way moves ``3 N d + 2 N + (3 d + 4) N = 12`` elements
(docs/conventions.md §1.3: O, l, m initialised; K, V read; Q, O, l, m read and O, l, m written once).
"""

from __future__ import annotations

import json
import sys

import pytest

from tilebound.cli import main

MODEL = "attention.fa1.fwd.paper"
ISSUE_1705 = "2*N*d + 8*N**2*d**2/M + 8*N**2*d/M"
BY_HAND = "3*N*d + 2*N + (3*d + 4)*N*ceil(N/ceil(M/(4*d)))"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def grade(capsys, *argv):
    return run(capsys, "grade", "--against", MODEL, "-q", "total", *argv)


def test_a_disagreement_exits_1_with_the_point_values_and_leading_terms(capsys):
    rc, out, err = grade(capsys, "--formula", ISSUE_1705)
    assert rc == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{MODEL} total: disagrees with the executed count"
    fields = {line[:31].strip(): line[31:].strip() for line in lines[1:6]}
    assert fields == {"smallest disagreeing point": "N = 1, d = 1, M = 1", "yours": "18", "executed": "12",
                      "the model's formula": "12", "difference (yours - executed)": "6"}
    yours = next(line for line in lines if line.strip().startswith("yours ") and "N" in line)
    model = next(line for line in lines if line.strip().startswith("the model "))
    assert "8·N²·d²/M" in yours and "12·N²·d²/M" in model           # side by side, with their constants
    assert "searched" in out and "hypothesis" in out


def test_an_agreement_exits_0(capsys):
    rc, out, err = grade(capsys, "--formula", BY_HAND)
    assert rc == 0 and err == "" and "agrees with the executed count" in out.splitlines()[0]


def test_leading(capsys):
    rc, out, _ = grade(capsys, "--leading", "--formula", "12*N**2*d**2/M + N*d")
    assert rc == 0 and "the leading term agrees" in out
    rc, out, _ = grade(capsys, "--leading", "--formula", ISSUE_1705)
    assert rc == 1 and "the leading term disagrees" in out and "the same Θ class, a different constant" in out


JSON_KEYS = {"model", "quantity", "student", "mode", "agree", "point", "values", "difference", "error", "leading",
             "theta", "why_no_leading", "regime", "search", "smallest"}


def test_json_schema(capsys):
    rc, out, _ = grade(capsys, "--json", "--formula", ISSUE_1705)
    assert rc == 1
    r = json.loads(out)
    assert set(r) == JSON_KEYS
    assert r["agree"] is False and r["mode"] == "values" and r["student"] == ISSUE_1705
    assert r["point"] == {"N": "1", "d": "1", "M": "1"}
    assert r["values"] == {"student": "18", "executed": "12", "formula": "12"} and r["difference"] == "6"
    assert r["leading"] == {"student": "8*N**2*d**2/M", "model": "12*N**2*d**2/M"}
    assert r["search"]["method"] == "hypothesis" and r["search"]["examples"] > 0
    rc, out, _ = grade(capsys, "--json", "--formula", BY_HAND, "--max-examples", "30")
    r = json.loads(out)
    assert rc == 0 and set(r) == JSON_KEYS and r["agree"] is True and r["point"] is None and r["values"] is None
    assert 30 <= r["search"]["examples"]           # the grid's points and hypothesis' draws, each distinct once


def test_json_fractions_are_exact_strings(capsys):
    rc, out, _ = grade(capsys, "--json", "--formula", "3*N*d + 2*N + (3*d + 4)*N*N/ceil(M/(4*d))")
    r = json.loads(out)
    # at N = d = 1, M = 5: B_c = 2, so 3 + 2 + 7/2 = 17/2 against 12 elements moved
    assert rc == 1 and r["point"] == {"N": "1", "d": "1", "M": "5"}
    assert r["values"]["student"] == "17/2" and r["difference"] == "-7/2"


def _student(tmp_path, body):
    path = tmp_path / "hw3.py"
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_a_function_file(tmp_path, capsys):
    path = _student(tmp_path, "def total(N, d, M):\n    b = -(-M // (4 * d))\n"
                              "    return 3*N*d + 2*N + (3*d + 4) * N * -(-N // b)\n"
                              "def wrong(N, d, M):\n    return 12 * N * N * d * d // M + 1\n")
    assert grade(capsys, f"{path}:total")[0] == 0
    rc, out, _ = grade(capsys, f"{path}:wrong", "--json")
    r = json.loads(out)
    # 12 // 1 + 1 = 13 against 12 at the least point
    assert rc == 1 and r["point"] == {"N": "1", "d": "1", "M": "1"} and r["values"]["student"] == "13"
    assert r["leading"]["student"] is None and r["why_no_leading"]["student"]


def test_a_function_that_raises_is_one_line_and_exit_1(tmp_path, capsys):
    path = _student(tmp_path, "def total(N, d, M):\n    return N // (d - 1)\n")
    rc, out, err = grade(capsys, f"{path}:total")
    assert rc == 1 and err == ""
    assert out == f"{MODEL} total: {path}:total raised ZeroDivisionError: integer division or modulo by zero " \
                  "at N = 1, d = 1, M = 1\n"
    rc, out, _ = grade(capsys, f"{path}:total", "--json")
    r = json.loads(out)
    assert rc == 1 and r["error"].startswith("raised ZeroDivisionError") and r["point"] == {"N": "1", "d": "1", "M": "1"}


def test_a_file_that_fails_to_import_is_exit_1(tmp_path, capsys):
    path = _student(tmp_path, "def total(N, d, M)\n    return N\n")
    rc, out, err = grade(capsys, f"{path}:total")
    assert rc == 1 and err == "" and out.count("\n") == 1 and "SyntaxError" in out


@pytest.mark.parametrize("argv,param,hint", [
    (["grade", "--against", "attention.fa1.fwd.papr", "-q", "total", "--formula", "N"], "model",
     "attention.fa1.fwd.paper"),
    (["grade", "--against", MODEL, "-q", "totl", "--formula", "N"], "quantity", "total"),
    (["grade", "--against", MODEL, "-q", "total", "--formula", "N*d_k"], "formula", "d"),
    (["grade", "--against", MODEL, "-q", "total", "--formula", "2*N*("], "formula", "cannot read"),
    (["grade", "--against", MODEL, "-q", "total", "--formula", "__import__('os').system('touch INJECTED')"],
     "formula", "cannot read"),
    (["grade", "--against", MODEL, "-q", "total"], "formula", "one of the two"),
    (["grade", "--against", MODEL, "-q", "total", "--formula", "N", "x.py:f"], "formula", "one of the two"),
    (["grade", "--against", MODEL, "-q", "total", "--formula", "N", "--max-examples", "0"], "max-examples", "1"),
    (["grade", "--against", MODEL, "-q", "total", "missing.py:total"], "function", "no file"),
    (["grade", "--against", MODEL, "-q", "total", "--leading", "missing.py:total"], "leading", "--formula"),
    (["grade", "-q", "total", "--formula", "N"], None, "--against"),
])
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, monkeypatch, argv, param, hint):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tilebound: ") and "Traceback" not in err
    if param is not None:
        assert err.startswith(f"tilebound: {param}: ")
    assert hint in err
    assert not (tmp_path / "INJECTED").exists()


def test_a_function_file_with_a_leading_flag_names_leading(tmp_path, capsys):
    path = _student(tmp_path, "def total(N, d, M):\n    return N\n")
    rc, _, err = grade(capsys, "--leading", f"{path}:total")
    assert rc == 2 and err.startswith("tilebound: leading: ")


def test_without_hypothesis_the_output_says_so(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    rc, out, _ = grade(capsys, "--formula", ISSUE_1705)
    assert rc == 1 and "hypothesis is not installed" in out and "grid" in out


def test_help_says_the_function_runs_the_students_code(capsys):
    rc, out, _ = run(capsys, "grade", "--help")
    assert rc == 0 and "RUNS THE STUDENT'S CODE" in " ".join(out.split())
