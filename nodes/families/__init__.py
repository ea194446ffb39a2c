"""Family detection: walk the table of adapters. Adding a family = one module + one entry here + a tiny-model test.

Order matters only where two adapters share a ``model_base`` class: the one with the narrower ``accepts`` test
comes first (Ovis-Image before Flux.1 share ``Flux``; Z-Image before Lumina 2 share ``Lumina2``;
Wan 1.3B before the 14B share ``WAN21``).
"""

from __future__ import annotations

from .base import FamilyAdapter
from .chroma import CHROMA, CHROMA_RADIANCE
from .flux import FLUX
from .flux2 import FLUX2
from .hidream import HIDREAM
from .hunyuan_image import HUNYUAN_IMAGE21
from .hunyuan_video import HUNYUAN_VIDEO, HUNYUAN_VIDEO15
from .krea2 import KREA2
from .lens import LENS
from .longcat import LONGCAT_IMAGE
from .lumina import LUMINA2, Z_IMAGE, Z_IMAGE_PIXEL
from .mage_flow import MAGE_FLOW
from .omnigen2 import BOOGU, OMNIGEN2
from .ovis import OVIS_IMAGE
from .qwen_image import QWEN_IMAGE
from .wan import WAN21_1_3B, WAN22_5B, WAN_14B

ADAPTERS: tuple[FamilyAdapter, ...] = (
    FLUX, OVIS_IMAGE, FLUX2, CHROMA, CHROMA_RADIANCE, QWEN_IMAGE, Z_IMAGE, LUMINA2, HIDREAM, HUNYUAN_IMAGE21, OMNIGEN2,
    WAN21_1_3B, WAN_14B, WAN22_5B, HUNYUAN_VIDEO, HUNYUAN_VIDEO15,  # video: the time axis is never scaled
    # only on newer hosts (ComfyUI 0.30 and later):
    LONGCAT_IMAGE, KREA2, MAGE_FLOW, LENS, BOOGU, Z_IMAGE_PIXEL,
)

#: RoPE models the pack knowingly does not patch, and why (model_base class name -> reason).
NOT_SUPPORTED: dict[str, str] = {
    "HunyuanDiT": "its 2-D RoPE is built by a module function each forward (no embedder to replace)",
    "ErnieImage": "its pos_embed builds its own 2x2 layout (cos/sin of the two halves of the pairs, repeated), "
                  "not EmbedND's; it needs its own table builder",
    # Wan variants of newer hosts with their own position logic, not verified with the pack yet.
    "WAN21_CausalAR": "Wan causal autoregressive rollout (per-chunk frame offsets and KV cache) is not verified yet",
    "WAN21_FlowRVS": "this Wan variant is not verified with the pack yet",
    "WAN21_SCAIL": "this Wan variant (own pose/reference rope streams) is not verified with the pack yet",
    "WAN21_SCAIL2": "this Wan variant (own pose/reference rope streams) is not verified with the pack yet",
    "WAN22_WanDancer": "WanDancer rescales its time axis by fps and adds a music rope; not verified yet",
    "HunyuanVideo15_SR_Distilled": "the HunyuanVideo 1.5 super-resolution model upsamples a low-resolution video "
    "to its own trained 1080p; it is not verified with the pack",
    "Kandinsky5": "Kandinsky 5 already interpolates its own video positions (rope_scale_factor, 3.16 for the "
    "Pro model at high resolution) inside rope_encode_3d; DyPE on top of that has no adapter yet",
    "Kandinsky5Image": "Kandinsky 5 already interpolates its own positions (rope_scale_factor) inside "
    "rope_encode_3d; DyPE on top of that has no adapter yet",
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
            return adapter.bound(base_model)
    class_name = type(base_model).__name__
    config_name = type(getattr(base_model, "model_config", None)).__name__
    reason = NOT_SUPPORTED.get(class_name)
    why = f" ({reason})" if reason else ""
    raise UnsupportedModelError(
        f"DyPE/SEGA cannot patch this model: {class_name} (model config {config_name}){why}. "
        f"Supported families: {supported_families_text()}. Models without RoPE (SD1.x/SDXL UNets, SD3, AuraFlow, "
        f"PixArt) have nothing to extrapolate; other RoPE DiTs need their own adapter."
    )
