"""The pack's one float64 rule: where every float64 tensor of rope/, spectral/ and nodes/ is made.

The latent's device, unless the host says that device has no float64; then the CPU, as the host's own ``rope()``
does. ComfyUI 0.30.0 (upstream 14b05228): ``comfy/model_management.py`` ``supports_fp64(device)`` is False on MPS,
Intel XPU, DirectML and Iluvatar (ixuca), and ``comfy/ldm/flux/math.py`` ``rope()`` then builds its float64 table on
the CPU; 0.3.75's ``rope()`` tests ``is_device_mps(device) or is_intel_xpu() or is_directml_enabled()`` for the same.
MPS raises on a float64 tensor; the others lack or emulate it.

rope/ and spectral/ never import ComfyUI: the nodes ask here and hand the answer down as their ``device`` argument
(a ``CallScope`` keeps it as ``math_device``). tests/test_float64_sites.py checks every float64 of the pack names
it, tests/test_no_float64.py runs every node and cascade with the host's check saying "no float64".
"""

from __future__ import annotations

import torch


def math_device(device: torch.device) -> torch.device:
    """Where float64 for tensors on ``device`` is made: ``device``, or the CPU where the host says it has no float64
    (its ``supports_fp64``; on 0.3.75, the MPS / Intel XPU / DirectML checks of its ``flux/math.py``)."""
    import comfy.model_management as mm

    supports_fp64 = getattr(mm, "supports_fp64", None)
    if supports_fp64 is not None:
        no_fp64 = not supports_fp64(device)
    else:
        no_fp64 = mm.is_device_mps(device) or mm.is_intel_xpu() or mm.is_directml_enabled()
    return torch.device("cpu") if no_fp64 else device
