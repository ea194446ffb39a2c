"""Memory freed in the middle of a run: the clone being sampled is loaded again, patches and all.

``comfy.model_management.unload_all_models()`` / ``free_memory()`` unload the loaded clone, and unloading puts the
shared model's original modules back (``ModelPatcher.unpatch_model`` restores ``object_patches_backup``: ComfyUI
0.3.75 ``comfy/model_patcher.py`` lines 866-870, 0.30.0 lines 1157-1161) and its original weights. Nothing loads it
again before the run's next model call, so the rest of the run would sample without the clone's object patches: the
DyPE / SEGA embedder, a cascade's stage table (HiFlow's, I-Max's), SPA's embedder. The clone's options (wrappers,
the attention override) stay, so such a call would mix the two.

Each clone the pack makes carries ``reload_wrapper`` (APPLY_MODEL, outside the pack's other wrappers of that clone).
Before a model call: if the clone being sampled (``BaseModel.current_patcher``, set by the sampler's ``pre_run``)
is no longer loaded and no other clone holds the model, it is loaded as the run's start loaded it
(``load_models_gpu``: object patches, weight patches, the device). After the call: if it was unloaded during the
call (a hook of another node inside it), it is loaded again and the call made again with the same inputs, so the
result is the undisturbed run's, bit for bit. Another clone holding the model is another sampler's (a thread):
errors.py names that. Nothing is stored: the patcher is read from the model per call.
"""

from __future__ import annotations

import logging

from .errors import loaded_patchers_of

logger = logging.getLogger(__name__)

RELOAD_KEY = "dype_sega.reload"


def _unloaded_patcher(base_model):
    """The clone this run samples, when it is no longer loaded and no clone holds ``base_model``; else None."""
    patcher = getattr(base_model, "current_patcher", None)
    if patcher is None or getattr(patcher, "model", None) is not base_model or loaded_patchers_of(base_model):
        return None
    return patcher


def _load_again(patcher, when: str) -> None:
    import comfy.model_management

    logger.info("DyPE/SEGA: %s was unloaded %s; loading it again so the run keeps its patches.",
                type(patcher.model).__name__, when)
    comfy.model_management.load_models_gpu([patcher])


def reload_wrapper(executor, *args, **kwargs):
    """Load the sampled clone again if memory was freed before this model call, and make the call again if it was
    freed during it."""
    base_model = executor.class_obj
    patcher = _unloaded_patcher(base_model)
    if patcher is not None:
        _load_again(patcher, "between two model calls")
    out = executor(*args, **kwargs)
    patcher = _unloaded_patcher(base_model)
    if patcher is None:
        return out
    _load_again(patcher, "during a model call")
    return executor(*args, **kwargs)


def add_reload(clone) -> None:
    """Give ``clone`` the reload wrapper, once (a clone of a clone of ours has it already). Call it before adding
    the clone's other APPLY_MODEL wrappers: the first added runs outermost."""
    import comfy.patcher_extension as ext

    if not clone.get_wrappers(ext.WrappersMP.APPLY_MODEL, RELOAD_KEY):
        clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, RELOAD_KEY, reload_wrapper)
