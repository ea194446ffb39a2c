"""The errors that stop a sampling run, each naming the cause the pack can actually see.

Every model call checks that the shared base model still holds the replacement embedder this run's clone
object-patched in (wrappers.apply_model_wrapper). What it holds instead tells the causes apart:

* another clone's DyPE/SEGA embedder: another sampler, on another thread, loaded its clone onto the shared model;
* ComfyUI's own embedder, and a clone other than this run's is what the host has loaded: the same, with a clone
  that carries no DyPE/SEGA patch;
* ComfyUI's own embedder, and no loaded clone holds the model (or this run's clone still does, unpatched): the
  model was unloaded in the middle of the run, and sampling on would silently use stock RoPE. reload.py loads an
  unloaded clone again before this check, so what reaches it is a clone still listed loaded without its patches
  (``unpatch_model`` during sampling) or a sampler that never told the model which clone it samples.
"""

from __future__ import annotations

_TWO_THREADS = (
    "That happens when two samplers run one loaded model at the same time on different threads, which ComfyUI does "
    "not support: the object patches and weight patches of every clone are applied to the one shared module, so each "
    "run would silently use the other's RoPE (and LoRA/weights). Sample one after the other, or load the model twice."
)


class ConcurrentSamplingError(RuntimeError):
    """The shared base model was re-patched for another clone while this one was sampling (another thread)."""


class ModelUnloadedError(RuntimeError):
    """The shared base model was unloaded (its object patches removed) while this clone was sampling."""


def concurrent_sampling_error(model_name: str, attr: str, what: str) -> ConcurrentSamplingError:
    return ConcurrentSamplingError(
        f"DyPE/SEGA: while this sampler was running, {attr} of the shared {model_name} model was switched to "
        f"{what}. {_TWO_THREADS}"
    )


def embedder_swapped_error(base_model: object, attr: str, found: object, expected: object,
                           patcher: object | None) -> RuntimeError:
    """The error for a model call that finds ``found`` where this run's clone put ``expected``."""
    model_name = type(base_model).__name__
    found_type = f"{type(found).__module__}.{type(found).__qualname__}"
    if hasattr(found, "original"):
        return concurrent_sampling_error(model_name, attr, "another clone's DyPE/SEGA embedder")
    if found is not getattr(expected, "original", None):
        return concurrent_sampling_error(model_name, attr, f"{found_type}, a module another clone patched in")
    holders = loaded_patchers_of(base_model)
    others = [holder for holder in holders if holder is not patcher]
    if others:
        return concurrent_sampling_error(
            model_name, attr,
            f"ComfyUI's own {found_type}: another clone of this model without DyPE/SEGA "
            f"({len(others)} loaded now) replaced this sampler's clone on it")
    how = ("its object patches were removed while it stayed loaded (ModelPatcher.unpatch_model() during sampling)"
           if holders else "it was unloaded (no loaded clone holds it now), which removed its object patches")
    return ModelUnloadedError(
        f"DyPE/SEGA: the shared {model_name} model lost this sampler's patches between two of its model calls: {how}, "
        f"so {attr} is ComfyUI's own {found_type} again. Something freed models in the middle of sampling: "
        "comfy.model_management.unload_all_models() or free_memory() called from a node, a sampler callback or "
        "another workflow's thread. Sampling on would silently use stock RoPE for the remaining steps, so the run "
        "stops here. Queue it again; if this recurs, look for the node or extension that frees memory during sampling."
    )


def loaded_patchers_of(base_model: object) -> list:
    """The clones (ModelPatchers) the host lists as loaded whose shared model is ``base_model``."""
    import comfy.model_management as mm

    holders = []
    for loaded in list(getattr(mm, "current_loaded_models", [])):
        patcher = getattr(loaded, "model", None)  # a weak reference on every host: None once collected
        if patcher is not None and getattr(patcher, "model", None) is base_model:
            holders.append(patcher)
    return holders
