"""Turn a MODEL into a patched clone: object-patch the family's embedder, store the config, chain our wrappers."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..families import FamilyAdapter, UnsupportedModelError, detect_family
from ..families.base import COSMOS_ROPE, EMBEDND, NUNCHAKU_ROPE
from .config import CONFIG_KEY, WRAPPER_KEY, PatchConfig, read_config
from .cosmos_embedder import CosmosRopeEmbedder, cosmos_rope_problem
from .embedder import ExtrapolatingRopeEmbedder, describe_module, is_stock_rope_embedder
from .memory import follow_host_memory
from .nunchaku_embedder import NunchakuRopeEmbedder, nunchaku_rope_problem
from .reload import add_reload
from .wrappers import apply_model_wrapper, calc_cond_batch_wrapper, outer_sample_wrapper

logger = logging.getLogger(__name__)


class ForeignRopeEmbedderError(UnsupportedModelError):
    """Another node already replaced the RoPE embedder; DyPE/SEGA cannot build on its table."""


def _original_embedder(model, adapter: FamilyAdapter):
    """The embedder a new clone starts from: ours (a second node of this pack) or ComfyUI's own EmbedND.

    An EmbedND of ComfyUI's class object-patched by another node (say with another theta) composes: our schedule is
    built from its theta and axes. Any other class is refused: above the trained size our table replaces the whole
    rotary table, so its effect would vanish without a word.
    """
    current = _embedder(model, adapter)
    original = current.original if isinstance(current, ExtrapolatingRopeEmbedder) else current
    if adapter.embedder_kind in (COSMOS_ROPE, NUNCHAKU_ROPE):
        problem = (cosmos_rope_problem(original) if adapter.embedder_kind == COSMOS_ROPE
                   else nunchaku_rope_problem(original, adapter.spatial_axes))
        if problem is not None:
            raise UnsupportedModelError(
                f"DyPE/SEGA cannot patch {type(model.model).__name__}.{adapter.embedder_attr}: {problem}. Another "
                "node may have replaced it; put DyPE/SEGA before that node."
            )
        return current
    if not is_stock_rope_embedder(original, adapter.spatial_axes):
        model_name = type(model.model).__name__
        if hasattr(original, "theta") and hasattr(original, "axes_dim"):
            raise ForeignRopeEmbedderError(
                f"DyPE/SEGA: {model_name}.{adapter.embedder_attr} was already replaced by "
                f"{describe_module(original)}, another node's RoPE patch. DyPE/SEGA rebuilds the whole rotary table "
                "above the trained resolution and would silently drop that patch, so it refuses instead. Remove one "
                "of the two RoPE patches (or apply the other one after DyPE/SEGA to let it win)."
            )
        raise UnsupportedModelError(
            f"DyPE/SEGA: {model_name}.{adapter.embedder_attr} is {describe_module(original)}, which has no "
            "EmbedND-style theta/axes_dim; another custom node may have replaced it. Put DyPE/SEGA before that node."
        )
    return current


def _embedder(model, adapter: FamilyAdapter):
    """The module at the family's embedder attribute, or an error saying whose diffusion model has none."""
    try:
        return model.get_model_object(adapter.embedder_attr)
    except AttributeError:
        raise missing_embedder_error(model.model, adapter) from None


def missing_embedder_error(base_model, adapter: FamilyAdapter) -> UnsupportedModelError:
    """A ComfyUI model class whose diffusion model is another pack's, without ComfyUI's embedder. A Nunchaku wrapper
    (``ComfyFluxWrapper``) whose transformer has no nunchaku ``pos_embed`` the pack knows is named as such."""
    diffusion_model = getattr(base_model, "diffusion_model", None)
    what = describe_module(diffusion_model)
    inner = getattr(diffusion_model, "model", None)
    if "nunchaku" in f"{what} {describe_module(inner)}".lower() or type(diffusion_model).__name__ == "ComfyFluxWrapper":
        return UnsupportedModelError(
            f"DyPE/SEGA cannot patch this Nunchaku model ({type(base_model).__name__} running {what}, around "
            f"{describe_module(inner)}): the transformer inside has no 'pos_embed' with theta and axes_dim, where "
            "nunchaku's FLUX transformers (NunchakuFluxTransformer2dModel, NunchakuFluxTransformer2DModelV2) build "
            "their rotary table, so there is no table to replace. Load the model with ComfyUI-nunchaku's own FLUX "
            "loader (Nunchaku FLUX DiT Loader), or a BF16 / FP8 checkpoint with ComfyUI's own loader."
        )
    return UnsupportedModelError(
        f"DyPE/SEGA cannot patch this {type(base_model).__name__} model: its diffusion model is {what}, not "
        f"ComfyUI's {adapter.display_name} model, and has no {adapter.embedder_attr}. Another custom node replaced "
        "the diffusion model; DyPE/SEGA patches ComfyUI's own."
    )


def _log_replaced(before: PatchConfig, after: PatchConfig) -> None:
    """A second node of the same kind on one model: its settings win (the last node applied), said in one line."""
    for node, old, new, base in (
        ("DyPE Patch Model", before.positions, after.positions, before.positions_base_px),
        ("SEGA Attention", before.sega, after.sega, before.sega_base_px),
    ):
        if old is not None and new is not old:
            logger.warning("%s is applied twice to this model: the later node's settings replace the earlier one's "
                           "(the last wins). Replaced: %s, base_resolution %g.", node, old, base)


#: The replacement module of each kind of embedder (FamilyAdapter.embedder_kind).
REPLACEMENTS = {EMBEDND: ExtrapolatingRopeEmbedder, COSMOS_ROPE: CosmosRopeEmbedder,
                NUNCHAKU_ROPE: NunchakuRopeEmbedder}


def family_of(model) -> FamilyAdapter:
    """The family of a MODEL (ModelPatcher), or an error for anything else."""
    if not hasattr(model, "model") or not hasattr(model, "clone"):
        raise TypeError(f"Expected a ComfyUI MODEL (ModelPatcher), got {type(model).__name__}.")
    return detect_family(model.model)


def patch_model(model, update: Callable[[PatchConfig], PatchConfig]):
    """A clone of ``model`` whose config is ``update(current config)``. The input MODEL is left untouched."""
    import comfy.patcher_extension as ext

    adapter = family_of(model)
    follow_host_memory()
    current = _original_embedder(model, adapter)
    clone = model.clone()
    if not isinstance(current, ExtrapolatingRopeEmbedder):
        clone.add_object_patch(adapter.embedder_attr, REPLACEMENTS[adapter.embedder_kind](current))
    options = clone.model_options.setdefault("transformer_options", {})
    current_config = read_config(options) or PatchConfig()
    options[CONFIG_KEY] = update(current_config)
    _log_replaced(current_config, options[CONFIG_KEY])
    add_reload(clone)  # outside the call scope below: a call made again opens its scope again
    for wrapper_type, wrapper in (
        (ext.WrappersMP.OUTER_SAMPLE, outer_sample_wrapper),
        (ext.WrappersMP.CALC_COND_BATCH, calc_cond_batch_wrapper),
        (ext.WrappersMP.APPLY_MODEL, apply_model_wrapper),
    ):
        if not clone.get_wrappers(wrapper_type, WRAPPER_KEY):  # a second node of ours only updates the config
            clone.add_wrapper_with_key(wrapper_type, WRAPPER_KEY, wrapper)
    logger.debug("Patched %s (%s): %s", type(model.model).__name__, adapter.name, options[CONFIG_KEY])
    return clone
