"""``tilebound llm``: its formats, the JSON schema, bad input (one line, exit 2), -o and --split refusals."""

from __future__ import annotations

import json

import pytest

from tilebound.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_text_table(capsys):
    rc, out, err = run(capsys, "llm", "llama-3.1-8b", "--context", "32767")
    assert rc == 0 and not err
    for name in ("QKV projection", "attention (decode)", "decode.packed", "gate/up projection", "LM head", "step"):
        assert name in out
    assert "N_k=32768" in out and "B_n=128" in out
    assert "4,294,967,296 B per GPU" in out            # KV cache: 131,072 B a token x 32768 tokens


def test_json_schema(capsys):
    rc, out, _ = run(capsys, "llm", "mixtral-8x7b", "--batch", "8", "--context", "100", "--format", "json")
    assert rc == 0
    d = json.loads(out)
    assert set(d) >= {"ops", "totals", "notes", "settings"}
    assert set(d["totals"]) >= {"bytes", "flops", "time_s", "kv_cache_bytes", "tokens_per_s"}
    for op in d["ops"]:
        assert set(op) >= {"name", "model", "params", "count", "bytes", "flops", "time_s", "bound"}
        assert isinstance(op["count"], int) and isinstance(op["params"], dict)
    assert sum(o["count"] * o["bytes"] for o in d["ops"]) == d["totals"]["bytes"]
    assert d["settings"]["batch"] == 8 and d["settings"]["N_k"] == 101
    assert {o["model"] for o in d["ops"]} >= {"moe.grouped", "gemm.tiled", "decode.packed", "act.swiglu"}


@pytest.mark.parametrize("fmt,marker", [("markdown", "| operation"), ("latex", "\\begin{table}")])
def test_other_formats(capsys, fmt, marker):
    rc, out, _ = run(capsys, "llm", "qwen2.5-7b", "--format", fmt)
    assert rc == 0 and marker in out


def test_explain(capsys):
    rc, out, _ = run(capsys, "llm", "llama-3.1-8b", "--explain")
    assert rc == 0 and "num_splits_heuristic" in out and "schedule space" in out


@pytest.mark.parametrize("argv,option", [
    (["nosuch-model"], "config"),
    (["llama-3.1-8b", "--tp", "3"], "tp"),
    (["llama-3.1-8b", "--context", "200000"], "context"),
    (["llama-3.1-8b", "--batch", "0"], "batch"),
    (["llama-3.1-8b", "--phase", "train"], "phase"),
    (["llama-3.1-8b", "--weights", "int2"], "weights"),
    (["llama-3.1-8b", "--format", "html"], "format"),
    (["llama-3.1-8b", "--gpu", "V100"], "gpu"),
])
def test_bad_input_one_line_exit_2(capsys, argv, option):
    rc, out, err = run(capsys, "llm", *argv)
    assert rc == 2 and not out
    assert err.count("\n") == 1 and err.startswith(f"tilebound: {option}:"), err


def test_bad_config_files(capsys, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{oops")
    rc, _, err = run(capsys, "llm", str(bad))
    assert rc == 2 and "not JSON" in err and err.count("\n") == 1
    bad.write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    rc, _, err = run(capsys, "llm", str(bad))
    assert rc == 2 and err.startswith("tilebound: num_hidden_layers:")
    bad.write_text(json.dumps({"model_type": "rwkv"}))
    rc, _, err = run(capsys, "llm", str(bad))
    assert rc == 2 and "rwkv" in err


def test_output_file_refusal(capsys, tmp_path):
    target = tmp_path / "step.json"
    target.write_text("a user's file\n")
    rc, _, err = run(capsys, "llm", "llama-3.1-8b", "--format", "json", "-o", str(target))
    assert rc == 2 and err.startswith("tilebound: output:")
    assert target.read_text() == "a user's file\n"
    rc, _, _ = run(capsys, "llm", "llama-3.1-8b", "--format", "json", "-o", str(target), "--force")
    assert rc == 0 and json.loads(target.read_text())["settings"]["config"] == "llama-3.1-8b"
    tex = tmp_path / "step.tex"
    assert run(capsys, "llm", "llama-3.1-8b", "--format", "latex", "-o", str(tex))[0] == 0
    assert run(capsys, "llm", "llama-3.1-8b", "--format", "latex", "-o", str(tex))[0] == 0   # ours: rewritten
    for fmt, name in (("markdown", "step.md"), ("text", "step.txt")):
        f = tmp_path / name
        assert run(capsys, "llm", "qwen2.5-7b", "--format", fmt, "-o", str(f))[0] == 0
        assert run(capsys, "llm", "qwen2.5-7b", "--format", fmt, "-o", str(f))[0] == 0
        f.write_text(f.read_text() + "a line added by hand\n")
        rc, _, err = run(capsys, "llm", "qwen2.5-7b", "--format", fmt, "-o", str(f))
        assert rc == 2 and "a line added by hand" in f.read_text()


def test_split(capsys, tmp_path):
    d = tmp_path / "frags"
    rc, out, _ = run(capsys, "llm", "gemma-2-9b", "--split", str(d))
    assert rc == 0
    names = sorted(p.name for p in d.iterdir())
    assert names == ["gemma-2-9b.decode.global.dense.tex", "gemma-2-9b.decode.head.tex",
                     "gemma-2-9b.decode.local.dense.tex", "gemma-2-9b.decode.totals.tex"]
    (d / "gemma-2-9b.decode.head.tex").write_text("edited by hand\n")
    rc, _, err = run(capsys, "llm", "gemma-2-9b", "--split", str(d))
    assert rc == 2 and err.startswith("tilebound: split: ") and "--force" in err


def test_verify_rows(capsys):
    rc, out, _ = run(capsys, "llm", "qwen2.5-7b", "--context", "300", "--verify", "--format", "json")
    assert rc == 0
    d = json.loads(out)
    assert len(d["verify"]) == len(d["ops"])
    assert {r["status"] for r in d["verify"]} == {"agrees"}


def test_verify_text_column_and_pending(capsys):
    rc, out, _ = run(capsys, "llm", "qwen2.5-7b", "--tp", "2", "--verify")
    assert rc == 0 and "executed" in out and "closed form" in out


def test_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    img = tmp_path / "step.png"
    rc, _, _ = run(capsys, "llm", "llama-3.1-8b", "--plot", str(img))
    assert rc == 0 and img.stat().st_size > 1000
    rc, _, err = run(capsys, "llm", "llama-3.1-8b", "--plot", str(tmp_path / "step.nope"))
    assert rc == 2 and err.startswith("tilebound: plot:")            # the option it came from, not -o


@pytest.mark.parametrize("batch", ["11623", "20000", "100000000"])
def test_an_mla_decode_batch_beyond_flashmla_s_scheduler_is_one_line_before_any_scheduling(capsys, monkeypatch,
                                                                                             batch):
    """DeepSeek-V3's decode at more sequences than FlashMLA's scheduler holds: one line naming batch and the cap,
    exit 2, before a sequence is listed or scheduled (the scheduler is replaced by a function that fails)."""
    import tuning.mla_splits as mla_splits

    def scheduled(*args, **kwargs):
        raise AssertionError("scheduled before the refusal")

    monkeypatch.setattr(mla_splits, "flashmla_splits", scheduled)
    monkeypatch.setattr(mla_splits, "flashmla_schedule", scheduled)
    rc, out, err = run(capsys, "llm", "deepseek-v3", "--batch", batch)
    assert rc == 2 and not out
    assert err.startswith("tilebound: batch:") and err.count("\n") == 1 and "11,622" in err, err


def test_an_mla_decode_batch_the_scheduler_holds_is_priced(capsys):
    rc, out, err = run(capsys, "llm", "deepseek-v3", "--batch", "11622", "--format", "json")
    assert rc == 0, err
    per_type: dict = {}
    for o in json.loads(out)["ops"]:
        if o["name"].startswith("attention (MLA decode"):
            per_type[o["layer_type"]] = per_type.get(o["layer_type"], 0) + o["params"]["B"]
    assert per_type and set(per_type.values()) == {11622}         # every sequence in one row of each layer type
