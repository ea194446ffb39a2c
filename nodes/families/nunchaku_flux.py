"""Nunchaku FLUX (nunchaku-tech/ComfyUI-nunchaku's ``NunchakuFluxDiTLoader``): ComfyUI's ``model_base.Flux`` whose
``diffusion_model`` is a ``ComfyFluxWrapper`` around nunchaku's quantized ``NunchakuFluxTransformer2dModel``.
Read from nunchaku-tech/ComfyUI-nunchaku @dbfd194 (``wrappers/flux.py``, ``nodes/models/flux.py``) and
nunchaku-tech/nunchaku @3a3cc3d (``nunchaku/models/transformers/transformer_flux.py``, ``_v2.py``,
``nunchaku/models/embeddings.py``); neither can run here (CUDA kernels).

Flux.1's facts (flux.py): ids (index, row, col), text ids 0, patch 2. What differs is the table: the transformer
builds it itself with ``pos_embed`` (nunchaku's own EmbedND / NunchakuFluxPosEmbed, theta 10000, axes 16/56/56) in
[sin, cos] pairs, (1, 1, N, pairs, 1, 2), one table for the whole batch (its blocks assert a batch of 1), which it
then packs for its fused kernels. The pack replaces ``pos_embed`` (nodes/rope_patch/nunchaku_embedder.py); the index
column keeps its frequencies (the spatial-only rule, nodes/rope_patch/spatial_only.py).
"""

from .base import NUNCHAKU_ROPE, ONE_TABLE, FamilyAdapter, TokenEmbedding
from .flux import FLUX


def _wraps_a_nunchaku_transformer(base_model) -> bool:
    """The diffusion model has no ComfyUI ``pe_embedder`` but wraps a transformer whose ``pos_embed`` is an
    EmbedND-style module (theta, axes_dim): how ComfyFluxWrapper holds nunchaku's transformer."""
    diffusion_model = getattr(base_model, "diffusion_model", None)
    if diffusion_model is None or hasattr(diffusion_model, "pe_embedder"):
        return False
    pos_embed = getattr(getattr(diffusion_model, "model", None), "pos_embed", None)
    return hasattr(pos_embed, "theta") and hasattr(pos_embed, "axes_dim")


NUNCHAKU_FLUX = FamilyAdapter(
    name="nunchaku_flux",
    display_name="Nunchaku FLUX.1 (SVDQuant)",
    model_base_classes=frozenset({"Flux"}),
    accepts=_wraps_a_nunchaku_transformer,
    embedder_attr="diffusion_model.model.pos_embed",
    embedder_kind=NUNCHAKU_ROPE,
    spatial_axes=FLUX.spatial_axes,
    patch_size=FLUX.patch_size,
    # ComfyFluxWrapper.process_img packs "b c (h ph) (w pw) -> b (h w) (c ph pw)" into the transformer's x_embedder
    token_embedding=TokenEmbedding("diffusion_model.model.x_embedder", "c ph pw"),
    px_per_token=FLUX.px_per_token,
    default_base_px=FLUX.default_base_px,
    base_source="the FLUX.1 checkpoints Nunchaku quantizes (FLUX.1-dev, schnell, Kontext, Krea): Flux.1's base, "
    + FLUX.base_source,
    theta=FLUX.theta,
    axes_dim=FLUX.axes_dim,
    table_batch=ONE_TABLE,
)
