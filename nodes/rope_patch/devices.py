"""Where the float64 math of schedules and tables runs: the latent's device, unless the host says it has no float64."""

from __future__ import annotations

import torch


def math_device(device: torch.device) -> torch.device:
    """Where schedules and tables are built: ``device``, or the CPU where the host says it has no float64.

    Follows the host's own test, as its ``rope()`` does: ``supports_fp64`` on newer hosts (MPS, Intel XPU,
    DirectML, Iluvatar), the MPS/XPU/DirectML checks of ``flux/math.py`` on 0.3.75.
    """
    import comfy.model_management as mm

    supports_fp64 = getattr(mm, "supports_fp64", None)
    if supports_fp64 is not None:
        no_fp64 = not supports_fp64(device)
    else:
        no_fp64 = mm.is_device_mps(device) or mm.is_intel_xpu() or mm.is_directml_enabled()
    return torch.device("cpu") if no_fp64 else device
