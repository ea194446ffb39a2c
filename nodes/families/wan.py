"""Wan 2.1 and Wan 2.2 (``comfy.ldm.wan.model.WanModel`` and the subclasses that keep its RoPE path).

``WanModel.rope_encode`` builds ids (frame, row, col) from 0 in ``x.dtype`` with batch 1, calls ``rope_embedder``
(EmbedND, theta 10000, axes [44, 42, 42] for head dim 128) and ``movedim``s the table itself, so the embedder keeps
EmbedND's layout. Column 0 is time: frames stay exactly as trained (the spatial-only rule,
nodes/rope_patch/spatial_only.py); rows and columns get DyPE/SEGA as in images. There are no text tokens in
self-attention. Every extra stream goes through the same embedder with its own ids and shares the generated latent's
scale: I2V/FLF/Fun concat channels and clip-vision tokens add no positions at all, ``reference_latent`` /
``time_dim_concat`` / S2V motion frames / Animate pose and reference add frames (time axis). On newer hosts (0.30)
in-context ``context_latents`` streams (``source_id`` 1, 2, ...) get ComfyUI's extra source rotation composed onto our
table afterwards: a constant per-pair phase, so it commutes with the rescaling.

Trained sizes (rows x cols px, both orientations): Wan 2.1 1.3B 480x832; the 14B models (2.1 T2V/I2V 720P,
2.2 high/low-noise pair) 720x1280, also trained at 480x832 (the 2.1 I2V 480P checkpoint, which has the same dims:
set base_resolution 832 there); Wan 2.2 TI2V 5B 704x1280 on its 48-channel 16x VAE.
"""

from .base import FamilyAdapter, TokenEmbedding, Variant

_WAN_SIZES = "Wan-Video/Wan2.1 README and wan/configs/__init__.py SUPPORTED_SIZES"

#: model_base classes whose diffusion model is a WanModel that routes all its RoPE through ``rope_encode``.
WAN21_CLASSES = frozenset({"WAN21", "WAN21_Vace", "WAN21_Camera", "WAN21_HuMo", "WAN22_S2V", "WAN22_Animate"})
WAN_1_3B_DIM = 1536  # Wan 2.1 T2V 1.3B (and Vace 1.3B); the 14B models have dim 5120


def _model_dim(base_model) -> int:
    return int(getattr(getattr(base_model, "diffusion_model", None), "dim", 0))


_COMMON = dict(
    embedder_attr="diffusion_model.rope_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.patch_embedding", "conv"),
    theta=10000.0,
    axes_dim=(44, 42, 42),
    preview_shift=("linear", 8.0),
)

WAN21_1_3B = FamilyAdapter(
    name="wan21_1_3b",
    video=True,
    display_name="Wan 2.1 1.3B (T2V, Vace)",
    model_base_classes=WAN21_CLASSES,
    accepts=lambda base_model: _model_dim(base_model) == WAN_1_3B_DIM,
    px_per_token=16,
    default_base_px=832,
    default_base_hw=(480, 832),
    base_source=f"{_WAN_SIZES}: t2v-1.3B 480*832, 832*480",
    **_COMMON,
)

WAN_14B = FamilyAdapter(
    name="wan_14b",
    video=True,
    display_name="Wan 2.1 / 2.2 14B (T2V, I2V, FLF, Vace, Camera, HuMo, S2V, Animate)",
    model_base_classes=WAN21_CLASSES,
    px_per_token=16,
    default_base_px=1280,
    default_base_hw=(720, 1280),
    trained_sizes=((720, 1280), (480, 832)),
    base_source=f"{_WAN_SIZES}: 14B (T2V, I2V, FLF2V, VACE) 720*1280, 1280*720, 480*832, 832*480; the I2V 480P "
    "checkpoint supports 480P only; Wan-Video/Wan2.2 the same for t2v/i2v-A14B (s2v-14B adds 1024*704)",
    variants=(Variant("Wan 14B 720P", (720, 1280), f"{_WAN_SIZES}: 720*1280"),
              Variant("Wan 14B 480P", (480, 832), f"{_WAN_SIZES}: I2V-14B-480P supports 480P")),
    **_COMMON,
)

WAN22_5B = FamilyAdapter(
    name="wan22_5b",
    video=True,
    display_name="Wan 2.2 TI2V 5B",
    model_base_classes=frozenset({"WAN22"}),
    px_per_token=32,
    default_base_px=1280,
    default_base_hw=(704, 1280),
    base_source="Wan-Video/Wan2.2 wan/configs/__init__.py SUPPORTED_SIZES: ti2v-5B 704*1280, 1280*704",
    **_COMMON,
)
