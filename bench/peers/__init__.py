"""The published per-operation formulas of three LLM cost modellers, restated in the project's own code.

* :mod:`peers.llm_viewer` - LLM-Viewer (hahnyuan/LLM-Viewer ``model_analyzer.py``);
* :mod:`peers.llm_analysis` - llm-analysis (cli99/llm-analysis ``llm_analysis/analysis.py``);
* :mod:`peers.genz` - GenZ (abhibambhaniya/GenZ-LLM-Analyzer ``GenZ/operators.py``, ``GenZ/Models/``).

Each restatement returns :class:`peers.common.PeerOp` rows (bytes and FLOPs the peer charges an operation, per
layer, and how many times it runs in the step) for a Hugging Face ``config.json`` (:mod:`peers.hf_configs`) at a
phase, batch and context.  The figures are the peer's, errors included; every function cites the file, lines and
commit it restates.  ``bench/bench_llm_peers.py`` sets them beside ``tuning.llm``'s exact bytes.  Nothing here is
imported by the packages: ``bench/`` is for measurements side by side (tests load it from ``bench/``).
"""
