"""The room of guided cascades (docs/ARCHITECTURE.md): a base pass at the trained size, then stages at larger sizes
that follow the base run under a method's rule. HiFlow (arXiv 2504.06232, docs/hiflow.md) and I-Max (arXiv
2410.07536, docs/imax.md) are rules in it, and HRDiT (arXiv 2608.07003, docs/hrdit.md) is HiFlow's with its own
settings and stage models; ``run_cascade`` runs the one its settings name."""

from __future__ import annotations

from .hiflow import HiFlowMethod
from .hrdit import hrdit_method
from .hrdit_settings import HrditSettings
from .imax import ImaxMethod
from .imax_settings import ImaxSettings
from .room import CascadeResult, run_passes
from .settings import HiFlowSettings

__all__ = ["CascadeResult", "HiFlowSettings", "HrditSettings", "ImaxSettings", "latent_previews", "run_cascade",
           "run_passes"]


def run_cascade(model, positive, negative, vae, latent: dict, seed: int,
                settings: HiFlowSettings | HrditSettings | ImaxSettings, stage_model=None, disable_pbar: bool = True,
                callbacks=None) -> CascadeResult:
    """One cascade under the method its settings belong to (HiFlowSettings: HiFlow, HrditSettings: HRDiT,
    ImaxSettings: I-Max)."""
    if isinstance(settings, HrditSettings):
        method = hrdit_method(settings)
    elif isinstance(settings, HiFlowSettings):
        method = HiFlowMethod(settings)
    elif isinstance(settings, ImaxSettings):
        method = ImaxMethod(settings)
    else:
        raise TypeError(f"A cascade's settings must be HiFlowSettings, HrditSettings or ImaxSettings, got {type(settings).__name__}.")
    return run_passes(method, model, positive, negative, vae, latent, seed, stage_model=stage_model,
                      disable_pbar=disable_pbar, callbacks=callbacks)


def latent_previews(model, steps: int):
    """ComfyUI's latent preview and progress for one pass of ``steps`` (what KSampler shows), for the nodes."""
    import latent_preview

    return latent_preview.prepare_callback(model, steps)
