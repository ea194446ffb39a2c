"""Qwen-Image 2.1 (ComfyUI 0.37+: ``model_base.QwenImage21``, a QwenImage subclass matched by its exact name, building
``comfy/ldm/qwen_image21/model.py``'s single-stream DiT; read from Comfy-Org/ComfyUI @08f68f09 and @b806797, no host
here has it). Facts read from that code:

* Positions (``build_sequence``): one EmbedND(theta 10000, axes 16/56/56) call per forward, on batch-1 ids.
  Text segments run on from 0 on all three columns; each reference image sits at one index, centred on the target
  with half a token where its parity differs (fractional ids); the target comes last, centred on -ceil(h/2).
  Text on the spatial columns follows the text rule (nodes/rope_patch/spatial_only.py); the pack's table is every
  token's own cos/sin, so the half tokens stay fractional.
* The table's batch: one (1, N, 1, ...) table for the whole batch, the layout its fused ``rms_rope`` takes; the
  kernel (comfy-kitchen's layout check) takes one row per sample too. ``table_batch`` says so.
* The prefix K/V cache: text and reference keys/values computed at the first step and reused at every later one,
  its key holding no timestep. A table that changes per step needs it off, through the model's own switch
  (``prefix_cache_option``; nodes/rope_patch/prefix_cache.py).
* Latent: 64 channels, 16x VAE, patch 1 (a 4-D latent, 16 px per token).
"""

from .base import ONE_OR_PER_SAMPLE, FamilyAdapter, TokenEmbedding

#: The transformer_options key of Qwen-Image 2.1's prefix cache settings (node QwenImage21Cache: device, dtype).
QWEN_IMAGE21_CACHE = "qwen_image21_cache"

QWEN_IMAGE21 = FamilyAdapter(
    name="qwen_image21",
    display_name="Qwen-Image 2.1",
    model_base_classes=frozenset({"QwenImage21"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=1,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=2752,
    base_source="QwenLM/Qwen-Image-2.1 README, 'Supported Aspect Ratios' ('natively supports 2K'): 2048x2048 (1:1), "
    "2400x1792 (4:3), 2528x1696 (3:2), 2752x1536 (16:9) and their portraits: the largest side, 2752 (ComfyUI's "
    "template image_qwen_image_2_1_t2i: 'native 2K (2048*2048)')",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    # supported_models.QwenImage21 @01f03bbd: ModelType.FLUX (ModelSamplingFlux) with shift 0.69
    preview_shift=("exponential", 0.69),
    table_batch=ONE_OR_PER_SAMPLE,
    prefix_cache_option=QWEN_IMAGE21_CACHE,
)
