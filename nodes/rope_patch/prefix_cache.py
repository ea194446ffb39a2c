"""Models that reuse text and reference keys across steps (Qwen-Image 2.1's prefix K/V cache), and why a per-step
table turns that cache off for the calls it changes.

Read from Comfy-Org/ComfyUI ``comfy/ldm/qwen_image21/model.py`` (@08f68f09, @b806797): at the first step of a run
the model stores the text and reference tokens' keys (after the rotary table) and values, and at every later step
runs the target rows only, attending to the stored ones. The cache's key holds the prompt, the references and the
sizes, not the step. With DyPE or SEGA the table changes every step, so the stored keys would keep the first step's
rotation while the target's queries take the current one: a text↔image phase from two different schedules, silently
(the stale keys tests/test_qwen_image21_host.py reproduces on its stand-in). Exact per-step tables need those keys
recomputed each step.

The model's own switch does it: ``transformer_options["qwen_image21_cache"]["device"] = "off"`` (ComfyUI's
QwenImage21Cache node: "off recomputes the prefix every step ... the one way to rule the cache out"). It is set in
the options of the calls whose table the pack builds (above the trained size) and nowhere else: the clone's options
and the user's other cache settings are untouched, and at or below the trained size the cache runs as the user set
it, so the model stays bit-identical to the unpatched one. A table that is the same at every step (DyPE with
``dynamic`` off and no SEGA: static positions) keeps the cache: the stored keys are then the ones every step would
compute. Turning it off is detected by attribute: a diffusion model without the cache (``prefix_cache_enabled``)
gets its options as they are.

The cost: the prefix's rows go through every block at every step again, as at the first one (what the cache saves
on edits with reference images); docs/models.md gives the measured extra work per step.

Two slots in one run. The cache keeps a slot per key (cond and uncond, each grid of HiFlow's swin shift), least
recently used first. Its first releases found a slot with ``list.remove`` (comfy/ldm/wan/model_animate2.py,
``PoseBranchCache.select``; @a464ac33:143), which compares the dicts of tensors in front of the match and raises once
a run reads a slot behind an older one (a cond that starts mid-run, ConditioningSetTimestepRange); newer ComfyUI
removes it by index (@1e416935:142). The cascades' passes read their slots in turn (never behind another), but a
cascade cannot know the conditioning it is given, so where the model's cache class raises on such a read
(``holds_two_slots``, tried once per class on two tiny keys), the cascade's passes run with that cache off
(``cascade_pass_model``): the same results, the prefix recomputed per step, and a warning saying why.
"""

from __future__ import annotations

import functools
import logging
import sys

from ..families import FamilyAdapter
from .config import PatchConfig
from .scopes import RunScope

logger = logging.getLogger(__name__)

#: The attribute of a diffusion model that keeps a prefix cache (Qwen-Image 2.1's QwenImage21Transformer2DModel).
CACHE_ATTRIBUTE = "prefix_cache_enabled"
#: The name its model module gives the cache class (comfy/ldm/qwen_image21/model.py imports it from model_animate2).
CACHE_CLASS = "PoseBranchCache"


def changes_every_step(config: PatchConfig) -> bool:
    """Whether the table differs from step to step: SEGA's temperatures (from each step's latent) or DyPE's
    dynamic positions (from each step's sigma)."""
    return config.sega is not None or config.effective_positions.dynamic


def per_step_options(transformer_options: dict, adapter: FamilyAdapter, base_model, config: PatchConfig,
                     run: RunScope | None = None) -> dict:
    """The options for a call whose table is the step's own: the family's prefix cache "off" (a copy; the dict
    passed in is never written), or the options as they are where the model has no such cache or the table is the
    same at every step."""
    option = adapter.prefix_cache_option
    if option is None or not changes_every_step(config):
        return transformer_options
    if not hasattr(getattr(base_model, "diffusion_model", None), CACHE_ATTRIBUTE):
        return transformer_options
    settings = transformer_options.get(option)
    settings = dict(settings) if isinstance(settings, dict) else {}
    if settings.get("device") == "off":
        return transformer_options
    settings["device"] = "off"
    if run is not None:
        run.note_once(
            f"DyPE/SEGA: {adapter.display_name}'s prefix K/V cache is off for this run: the rotary table changes "
            "every step, and cached text/reference keys would keep the first step's rotation. The text and "
            "reference tokens are recomputed at every step (slower on edits with reference images).")
    return {**transformer_options, option: settings}


@functools.lru_cache(maxsize=8)
def holds_two_slots(cache_class: type) -> bool:
    """Whether ``cache_class`` reads a slot behind an older one without raising (a fact of the class, kept per class):
    two tiny keys on the host, the second read again, the cache freed."""
    import torch

    cache = cache_class(store_device=torch.device("cpu"), dtype="default")
    older, newer = torch.zeros(1, 2), torch.ones(1, 2)
    try:
        cache.select(older)
        cache.select(newer)
        cache.select(newer, create=False)
    except RuntimeError as error:  # list.remove comparing dicts of tensors: "Boolean value of Tensor ... ambiguous"
        logger.debug("%s cannot read a slot behind another: %s", cache_class.__qualname__, error)
        return False
    finally:
        cache.free()
    return True


def cascade_pass_model(model, adapter: FamilyAdapter, node: str, warn: bool = False):
    """The MODEL a cascade's pass samples: as it is, or, where its family's prefix cache class raises on a second
    slot read out of turn, a clone with that cache off (the user's other cache settings kept)."""
    option = adapter.prefix_cache_option
    diffusion_model = getattr(getattr(model, "model", None), "diffusion_model", None)
    if option is None or not hasattr(diffusion_model, CACHE_ATTRIBUTE):
        return model
    cache_class = getattr(sys.modules.get(type(diffusion_model).__module__), CACHE_CLASS, None)
    if cache_class is None or holds_two_slots(cache_class):
        return model
    clone = model.clone()
    options = clone.model_options.setdefault("transformer_options", {})
    settings = options.get(option)
    options[option] = {**(settings if isinstance(settings, dict) else {}), "device": "off"}
    if warn:
        logger.warning(
            "%s: this ComfyUI's %s prefix cache raises once a run reads one of its slots behind another (%s.select "
            "removes the slot with list.remove; newer ComfyUI removes it by index). The cascade runs with that cache "
            "off: the same results, the text and reference tokens recomputed at every step. Update ComfyUI to keep "
            "the cache.", node, adapter.display_name, cache_class.__name__)
    return clone
