"""The errors that stop a sampling run, each naming the cause the pack can actually see.

Every model call checks that the shared base model still holds the replacement embedder this run's clone
object-patched in (wrappers.apply_model_wrapper). What it holds instead tells the causes apart:

* another clone's DyPE/SEGA embedder: another sampler, on another thread, loaded its clone onto the shared model;
* ComfyUI's own embedder, and a clone other than this run's is what the host has loaded: the same, with a clone
  that carries no DyPE/SEGA patch;
* ComfyUI's own embedder, and no loaded clone holds the model (or this run's clone still does, unpatched): the
  model was unloaded in the middle of the run, and sampling on would silently use stock RoPE.
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


class WindowMissError(RuntimeError):
    """A gathered RoPE table used ids that had moved since their signature was checked: the result is not exact."""


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


def window_miss_error(model_name: str, calls: int, suspects: str) -> WindowMissError:
    """``calls`` gathered model calls used ids that had moved since their ids signature was checked."""
    return WindowMissError(
        f"DyPE/SEGA stopped this run because its result would not be exact. The RoPE positions (ids) of {model_name} "
        "changed between model calls that ComfyUI made with the same inputs: when first checked they were integers "
        "inside the window the fast path gathers its rotary tables from, later they were not, so "
        f"{'one model call gathered its table' if calls == 1 else f'{calls} model calls gathered their tables'} "
        "from the wrong positions. "
        "Likely cause: a node applied to this model (before or after DyPE/SEGA in the graph) that moves positions "
        "differently from one model call to the next, such as a diffusion-model wrapper or patch that shifts or "
        f"rescales RoPE positions; no ComfyUI node does this. {suspects} To get the exact result, queue the prompt "
        "again: this patched model now builds every table with the stock formula (each token's own cos/sin: exact, "
        "slower above the trained size) until its DyPE/SEGA node runs again."
    )


def describe_suspects(transformer_options: dict, own_key: str) -> str:
    """What on a model can move its RoPE ids between calls: wrappers and patches of others, ``rope_options``."""
    found = []
    wrappers = transformer_options.get("wrappers") or {}
    for kind in ("diffusion_model", "apply_model"):
        keys = [key for key in (wrappers.get(kind) or {}) if key != own_key]
        if keys:
            found.append(f"{kind} wrappers {', '.join(map(repr, keys))}")
    patches = transformer_options.get("patches") or {}
    if patches:
        found.append(f"model patches {', '.join(sorted(map(str, patches)))}")
    replaced = transformer_options.get("patches_replace") or {}
    if replaced:
        found.append(f"replaced blocks {', '.join(sorted(map(str, replaced)))}")
    if transformer_options.get("rope_options") is not None:
        found.append(f"rope_options {transformer_options['rope_options']!r}")
    if not found:
        return ("This model carries no other wrapper, patch or rope_options, so the change comes from the model "
                "code itself or from a node that edits the model directly.")
    return f"On this model besides DyPE/SEGA: {'; '.join(found)}."
