"""One step of a real LLM, operation by operation, priced on the project's verified models.

``load_config`` reads a Hugging Face ``config.json`` (or a shipped one, :data:`CONFIGS`); ``step`` lists every
operation of one prefill or decode step, each a registered model at stated parameters, with its exact bytes
and FLOPs and its roofline time.  ``verify.llm.verify_step`` runs each operation's executor at those shapes.
"""

from .configs import CONFIGS, Config, load_config
from .step import Op, Step, step

__all__ = ["load_config", "step", "CONFIGS", "Config", "Step", "Op"]
