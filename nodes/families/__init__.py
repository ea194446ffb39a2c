"""Family detection: walk the table of adapters. Adding a family = one module + one entry here + a tiny-model test."""

from __future__ import annotations

from .base import FamilyAdapter
from .flux import FLUX
from .qwen_image import QWEN_IMAGE

ADAPTERS: tuple[FamilyAdapter, ...] = (FLUX, QWEN_IMAGE)


class UnsupportedModelError(ValueError):
    """The MODEL is not a RoPE DiT family this pack knows how to patch."""


def supported_families_text() -> str:
    return "; ".join(a.display_name for a in ADAPTERS)


def detect_family(base_model) -> FamilyAdapter:
    """The adapter for a ComfyUI BaseModel (``ModelPatcher.model``), or an error naming the class and the families."""
    class_name = type(base_model).__name__
    config_name = type(getattr(base_model, "model_config", None)).__name__
    for adapter in ADAPTERS:
        if class_name in adapter.model_base_classes:
            return adapter
    raise UnsupportedModelError(
        f"DyPE/SEGA cannot patch this model: {class_name} (model config {config_name}). "
        f"Supported families: {supported_families_text()}. Models without RoPE (SD1.x/SDXL UNets, SD3, AuraFlow, "
        f"PixArt) have nothing to extrapolate; other RoPE DiTs need their own adapter."
    )
