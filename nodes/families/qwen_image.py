"""Qwen-Image (and Edit): centred image ids (0, r - h//2, c - w//2), text ids on the diagonal after the image.

The scale comes from the generated latent's grid only (text and reference latents never count). The model casts
the table to its dtype itself, so the embedder returns float32 like stock. Latents are 5-D (B, C, T, H, W). Text on
the diagonal follows the spatial-only rule (nodes/rope_patch/spatial_only.py).
"""

from ...spectral import PaperQuirks
from .base import FamilyAdapter, TokenEmbedding

#: Where the SEGA authors' Qwen-Image code (rajabi2001/sega qwen_sega/transformer_qwenimage.py) departs from its Flux
#: code; reproduced by SEGA's "paper" recipe only (spectral/recipes.py).
OFFICIAL_SEGA_QUIRKS = PaperQuirks(base_px=1024, per_axis_scale=True, height_uses_width=True)

QWEN_IMAGE = FamilyAdapter(
    name="qwen_image",
    display_name="Qwen-Image (incl. Edit)",
    model_base_classes=frozenset({"QwenImage"}),
    embedder_attr="diffusion_model.pe_embedder",
    spatial_axes=(1, 2),
    patch_size=2,
    token_embedding=TokenEmbedding("diffusion_model.img_in", "c ph pw"),
    px_per_token=16,
    default_base_px=1664,
    base_source="QwenLM/Qwen-Image README aspect_ratios: 1328x1328 (1:1) ... 1664x928 (16:9), 928x1664 (9:16) "
    "(also ComfyUI template image_qwen_Image_2512's note): the largest side, 1664. Edit models follow the input "
    "image at about 1 MP (TextEncodeQwenImageEdit: 1024x1024 total pixels), within it",
    theta=10000.0,
    axes_dim=(16, 56, 56),
    preview_shift=("linear", 3.1),
    paper_quirks=OFFICIAL_SEGA_QUIRKS,
)

#: Why Qwen-Image 2.1 (ComfyUI 0.37+, ``model_base.QwenImage21(QwenImage)``, ``comfy/ldm/qwen_image21/model.py``) is
#: refused by name. Read from its code (Comfy-Org/ComfyUI, qwen_image21/model.py @08f68f09, model_base.py
#: @094c74c1); no host here has the class, so none of this could be run. Its EmbedND (theta 10000, axes 16/56/56)
#: would accept a patched table, but: (1) the text and reference keys/values are computed once per sampling run and
#: reused at every later step (``prefix_cache``, on whenever the patcher has no hook patches; its key holds the
#: prompt, references and target shape, not the step), so a table that changes each step would leave cached keys
#: rotated by the first step's frequencies against queries rotated by the current step's; switching the cache off
#: is the user's ``qwen_image21_cache`` option (QwenImage21Cache), which the pack may not overwrite; (2) its
#: positions are not Qwen-Image's: targets centred on -ceil(h/2), references offset by half a token where their
#: parity differs, text split around the references at ``image_slots``, each segment's index running on; (3) the
#: fused ``rms_rope`` kernel takes one (1, N, 1, ...) table for the whole batch, where SEGA's per-sample recipe
#: needs one per row.
QWEN_IMAGE21_REFUSAL = (
    "Qwen-Image 2.1 reuses its text and reference keys/values across the steps of a run (its prefix K/V cache), so "
    "a rotary table that changes every step (DyPE) or carries SEGA's temperatures would mix two steps' frequencies "
    "in one attention; its positions are also half-token fractional and interleave the text with the references. "
    "Not supported until verified on a ComfyUI that has it. Meanwhile use Qwen-Image or Qwen-Image-2512 with "
    "these nodes, or Qwen-Image 2.1 at its trained sizes without them"
)
