"""Family detection: walk the table of adapters. Adding a family = one module + one entry here + a tiny-model test.

Order matters only where two adapters share a ``model_base`` class: the one with the narrower ``accepts`` test
comes first (Nunchaku FLUX and Ovis-Image before Flux.1 share ``Flux``; Z-Image before Lumina 2 share ``Lumina2``;
Wan 1.3B before the 14B share ``WAN21``).

``NOT_SUPPORTED`` names every other RoPE model class of the newest tested host with a reason a user can act on;
``tests/test_family_registry.py`` walks the host's ``model_base`` and fails on a RoPE class in neither list.
"""

from __future__ import annotations

from .anima import ANIMA
from .base import FamilyAdapter, comfy_class_name
from .chroma import CHROMA, CHROMA_RADIANCE
from .flux import FLUX
from .flux2 import FLUX2
from .hidream import HIDREAM
from .hunyuan_image import HUNYUAN_IMAGE21
from .hunyuan_video import HUNYUAN_VIDEO, HUNYUAN_VIDEO15
from .kandinsky5 import KANDINSKY5_IMAGE
from .krea2 import KREA2
from .lens import LENS
from .longcat import LONGCAT_IMAGE
from .lumina import LUMINA2, Z_IMAGE, Z_IMAGE_PIXEL
from .mage_flow import MAGE_FLOW
from .nunchaku_flux import NUNCHAKU_FLUX
from .omnigen2 import BOOGU, OMNIGEN2
from .other_packs import other_pack_refusal
from .ovis import OVIS_IMAGE
from .qwen_image import QWEN_IMAGE
from .qwen_image21 import QWEN_IMAGE21
from .wan import WAN21_1_3B, WAN22_5B, WAN_14B

ADAPTERS: tuple[FamilyAdapter, ...] = (
    NUNCHAKU_FLUX, FLUX, OVIS_IMAGE, FLUX2, CHROMA, CHROMA_RADIANCE, QWEN_IMAGE, Z_IMAGE, LUMINA2, HIDREAM, HUNYUAN_IMAGE21, OMNIGEN2,
    WAN21_1_3B, WAN_14B, WAN22_5B, HUNYUAN_VIDEO, HUNYUAN_VIDEO15,  # video: the time axis is never scaled
    # only on newer hosts (ComfyUI 0.30 and later):
    LONGCAT_IMAGE, KREA2, MAGE_FLOW, LENS, BOOGU, Z_IMAGE_PIXEL, KANDINSKY5_IMAGE, ANIMA,
    # only on ComfyUI 0.37 and later (read from its code, tested on a stand-in):
    QWEN_IMAGE21,
)

_OWN_TABLE = "builds its rotary table with its own code ({how}), not through an EmbedND-style embedder the pack can " \
    "replace; it needs its own table builder, which the pack does not have yet"
_NOT_IMAGE = "is not an image or video generator ({what}): there are no generated image rows and columns to extrapolate"

#: RoPE models the pack knowingly does not patch, and why (ComfyUI model_base class name -> reason).
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
    "HunyuanImage21Refiner": "the HunyuanImage 2.1 refiner re-noises a finished image at the size it was made; "
    "patch the HunyuanImage 2.1 base model instead (the refiner is not verified with the pack)",
    "Kandinsky5": "the Kandinsky 5 video models interpolate their own positions (rope_scale_factor 2, and 3.16 for "
    "the Pro model at high resolution, inside rope_encode_3d): their ids are fractional, which the pack does not "
    "rescale. Kandinsky 5 Image (positions not interpolated) is supported",
    "Kandinsky5Image": "this Kandinsky 5 image model interpolates its positions (rope_scale_factor other than 1), "
    "so its ids are fractional; only the factor-1 image model (Kandinsky 5 Image Lite) is supported",
    # RoPE models whose table comes from their own code (newer hosts).
    "CosmosPredict2": "Cosmos-Predict2 samples EDM-style sigmas (up to 80; its flow time is sigma / (sigma + 1)), "
    "while the pack's schedule reads the sigma a flow model passes (0 to 1) as its time; not supported yet. Anima, "
    "the Cosmos-Predict2 model that samples as a flow model, is supported",
    "CosmosVideo": "Cosmos 1 samples EDM-style sigmas (up to 80), while the pack's schedule reads the sigma a "
    "flow model passes (0 to 1) as its time; not supported",
    "LTXV": "LTX-Video " + _OWN_TABLE.format(
        how="fractional positions, pixel coordinates divided by the model's maximum positions"),
    "LTXAV": "LTX-2 " + _OWN_TABLE.format(
        how="fractional positions, pixel coordinates divided by the model's maximum positions, audio and video"),
    "GenmoMochi": "Mochi " + _OWN_TABLE.format(how="mixed RoPE with learned frequencies"),
    "CogVideoX": "CogVideoX " + _OWN_TABLE.format(how="a 3-D rotary embedding computed each forward"),
    "HiDreamO1": "HiDream-O1 " + _OWN_TABLE.format(how="a language-model style multimodal RoPE"),
    "Ideogram4": "Ideogram 4 " + _OWN_TABLE.format(how="a split-half multimodal RoPE (mrope sections)"),
    "JoyImage": "JoyImage " + _OWN_TABLE.format(how="per-component rotary ranges"),
    "MiniMaxH3": "MiniMax H3 " + _OWN_TABLE.format(how="its own rotation tables over packed position ids"),
    "PixelDiTT2I": "PixelDiT " + _OWN_TABLE.format(how="patch positions fetched by its own rope function"),
    "PiD": "PiD (a PixelDiT model) " + _OWN_TABLE.format(how="patch positions fetched by its own rope function"),
    "SeedVR2": "SeedVR2 is a video super-resolution model with its own windowed 3-D rotary embedding; DyPE/SEGA "
    "do not apply to upscalers",
    "ACEStep": "ACE-Step " + _NOT_IMAGE.format(what="audio: its RoPE runs over time"),
    "ACEStep15": "ACE-Step 1.5 " + _NOT_IMAGE.format(what="audio: its RoPE runs over time"),
    "StableAudio1": "Stable Audio " + _NOT_IMAGE.format(what="audio: its RoPE runs over time"),
    "StableAudio3": "Stable Audio 3 " + _NOT_IMAGE.format(what="audio: its RoPE runs over time"),
    "SAM3": "SAM 3 " + _NOT_IMAGE.format(what="a segmentation model"),
    "DepthAnything3": "Depth Anything 3 " + _NOT_IMAGE.format(what="a depth estimator"),
    "TripoSplat": "TripoSplat " + _NOT_IMAGE.format(what="3-D generation over a latent sequence"),
    # Classes newer than the tested hosts (0.3.75, 0.30), read from Comfy-Org/ComfyUI comfy/model_base.py @094c74c1
    # and the ldm modules they build; no tested host has them, so tests/test_refused_newest.py checks them by name.
    # Kandinsky6 and Prism are the names of their diffusion models (comfy/ldm/kandinsky6, comfy/ldm/prism): the
    # stored model_base.py predates their model_base classes, so those names are unconfirmed. (Qwen-Image 2.1,
    # QwenImage21, is supported: qwen_image21.py.)
    "SenseNovaU15": "SenseNova U1.5 " + _OWN_TABLE.format(
        how="(t, h, w) indexes over a sequence that interleaves text, references and the image, with the text and "
        "reference keys/values precomputed once per run"),
    "MingImage": "Ming-Image (a Lumina 2 NextDiT whose reference frames get their own frame positions) is not "
    "verified with the pack yet; Lumina 2 and Z-Image are supported",
    "WAN_Animate2": "Wan Animate 2 keeps a pose-branch cache across the steps of a run (model_animate2 "
    "PoseBranchCache) and is not verified with the pack yet; Wan 2.2 Animate (WAN22_Animate) is supported",
    "Kandinsky6": "Kandinsky 6 generates video with audio: its visual positions are interpolated (rope_scale_factor, "
    "as the Kandinsky 5 video models) and audio and video attend to each other with their own rotary tables; not "
    "supported. Kandinsky 5 Image Lite is supported",
    "Prism": "Prism (audio-video) " + _OWN_TABLE.format(how="rotary_table per tower and half-split bridge tables"),
    "Trellis2": "Trellis 2 " + _NOT_IMAGE.format(what="3-D asset generation"),
    "YuE2": "YuE 2 " + _NOT_IMAGE.format(what="music: its RoPE runs over time"),
    "MiniMaxMusic3": "MiniMax Music 3 " + _NOT_IMAGE.format(what="music: its RoPE runs over time"),
}


class UnsupportedModelError(ValueError):
    """The MODEL is not a RoPE DiT family this pack knows how to patch."""


#: Models of other packs' loaders, listed after ComfyUI's own (ADAPTERS orders by detection, where they come first).
OTHER_PACKS = (NUNCHAKU_FLUX,)
#: The families in the order a user reads them (lists, combos, messages): ComfyUI's own first, other packs' loaders
#: last. ADAPTERS keeps detection's order (a wrapper of another pack is tested before the class it wraps).
LISTED: tuple[FamilyAdapter, ...] = tuple(a for a in ADAPTERS if a not in OTHER_PACKS) + OTHER_PACKS


def supported_families_text() -> str:
    own = [a.display_name for a in LISTED if a not in OTHER_PACKS]
    return "; ".join(own) + "; other packs' loaders: " + "; ".join(a.display_name for a in OTHER_PACKS)


def find_adapter(name: str) -> FamilyAdapter:
    for adapter in ADAPTERS:
        if adapter.name == name:
            return adapter
    raise ValueError(f"Unknown family {name!r}; expected one of {', '.join(a.name for a in ADAPTERS)}.")


def detect_family(base_model) -> FamilyAdapter:
    """The adapter for a ComfyUI BaseModel (``ModelPatcher.model``), or an error naming the class and the families.

    The class is ComfyUI's own (``comfy_class_name``): another pack's subclass of a ComfyUI class (Nunchaku's
    ``NunchakuQwenImage``) is detected as that class; whether its embedder is ComfyUI's is checked when patching.
    Another pack's diffusion model the pack refuses (other_packs.py) is named first, whatever class carries it.
    """
    refused = other_pack_refusal(base_model)
    if refused is not None:
        raise UnsupportedModelError(
            f"DyPE/SEGA cannot patch this model: {type(base_model).__name__} running "
            f"{type(base_model.diffusion_model).__name__}. {refused}.")
    for adapter in ADAPTERS:
        if adapter.matches(base_model):
            return adapter.bound(base_model)
    own_name = type(base_model).__name__
    class_name = comfy_class_name(base_model)
    config_name = type(getattr(base_model, "model_config", None)).__name__
    reason = NOT_SUPPORTED.get(class_name)
    why = f" ({reason})" if reason else ""
    shown = class_name if own_name == class_name else f"{own_name} (a subclass of ComfyUI's {class_name})"
    raise UnsupportedModelError(
        f"DyPE/SEGA cannot patch this model: {shown} (model config {config_name}){why}. "
        f"Supported families: {supported_families_text()}. Models without RoPE (SD1.x/SDXL UNets, SD3, AuraFlow, "
        f"PixArt) have nothing to extrapolate; other RoPE DiTs need their own adapter."
    )


def variant_options() -> list[str]:
    """The nodes' ``variant`` combo: "auto", then every family's variants by name and trained size."""
    return [AUTO_VARIANT] + [variant.option for adapter in ADAPTERS for variant in adapter.variants]


def variant_base_px(option: str, adapter: FamilyAdapter) -> float:
    """The trained long side the ``variant`` option selects for ``adapter``'s model (0: "auto", the family default),
    or an error naming the option's family, the model's family and the options that fit it."""
    if option in ("", AUTO_VARIANT):
        return 0.0
    for variant in adapter.variants:
        if variant.option == option:
            return float(max(variant.size_hw))
    owner = next((a for a in ADAPTERS for v in a.variants if v.option == option), None)
    fits = [AUTO_VARIANT] + [v.option for v in adapter.variants]
    what = f"is for {owner.display_name}" if owner is not None else "is not a known variant"
    raise ValueError(
        f"DyPE/SEGA: variant {option!r} {what}, but this model is {adapter.display_name}. "
        f"Pick one of: {', '.join(repr(o) for o in fits)}."
    )


#: The first ``variant`` option: the family default (``FamilyAdapter.variants[0]``, the largest trained size).
AUTO_VARIANT = "auto"
