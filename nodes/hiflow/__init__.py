"""HiFlow (arXiv 2504.06232) in ComfyUI's own terms: a base pass that records its x0 predictions, then stages at
larger sizes, each a ComfyUI sampler run on the tail of the base schedule, pulled toward the previous stage's
predictions (spectral/hiflow.py). docs/hiflow.md explains it and lists where we differ from the official code."""

from .cascade import CascadeResult, run_cascade
from .settings import HiFlowSettings

__all__ = ["CascadeResult", "HiFlowSettings", "run_cascade"]
