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
"""

from __future__ import annotations

from ..families import FamilyAdapter
from .config import PatchConfig
from .scopes import RunScope

#: The attribute of a diffusion model that keeps a prefix cache (Qwen-Image 2.1's QwenImage21Transformer2DModel).
CACHE_ATTRIBUTE = "prefix_cache_enabled"


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
