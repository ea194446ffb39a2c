"""Family detection: walk the table of adapters. Adding a family = one module + one entry here + a tiny-model test.

Order matters only where two adapters share a ``model_base`` class: the one with the narrower ``accepts`` test
comes first (Ovis-Image before Flux.1 share ``Flux``; Z-Image before Lumina 2 share ``Lumina2``).
"""

from __future__ import annotations

from .base import FamilyAdapter
from .chroma import CHROMA, CHROMA_RADIANCE
from .flux import FLUX
from .flux2 import FLUX2
from .hidream import HIDREAM
from .hunyuan_image import HUNYUAN_IMAGE21
from .lumina import LUMINA2, Z_IMAGE
from .omnigen2 import OMNIGEN2
from .ovis import OVIS_IMAGE
from .qwen_image import QWEN_IMAGE

ADAPTERS: tuple[FamilyAdapter, ...] = (
    FLUX, OVIS_IMAGE, FLUX2, CHROMA, CHROMA_RADIANCE, QWEN_IMAGE, Z_IMAGE, LUMINA2, HIDREAM, HUNYUAN_IMAGE21, OMNIGEN2,
)

#: RoPE models the pack knowingly does not patch, and why (model_base class name -> reason).
NOT_SUPPORTED: dict[str, str] = {
    "HunyuanDiT": "its 2-D RoPE is built by a module function each forward (no embedder to replace)",
}


class UnsupportedModelError(ValueError):
    """The MODEL is not a RoPE DiT family this pack knows how to patch."""


def supported_families_text() -> str:
    return "; ".join(a.display_name for a in ADAPTERS)


def find_adapter(name: str) -> FamilyAdapter:
    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise ValueError(f"Unknown family {name!r}; expected one of {', '.join(a.name for a in ADAPTERS)}.")


def detect_family(base_model) -> FamilyAdapter:
    """The adapter for a ComfyUI BaseModel (``ModelPatcher.model``), or an error naming the class and the families."""
    for adapter in ADAPTERS:
        if adapter.matches(base_model):
            return adapter
    class_name = type(base_model).__name__
    config_name = type(getattr(base_model, "model_config", None)).__name__
    reason = NOT_SUPPORTED.get(class_name)
    why = f" ({reason})" if reason else ""
    raise UnsupportedModelError(
        f"DyPE/SEGA cannot patch this model: {class_name} (model config {config_name}){why}. "
        f"Supported families: {supported_families_text()}. Models without RoPE (SD1.x/SDXL UNets, SD3, AuraFlow, "
        f"PixArt) have nothing to extrapolate; other RoPE DiTs (video models included) need their own adapter."
    )
