"""The user's attention backend as ComfyUI calls it, for the attention override of an HRDiT stage clone
(spa_attention.py): where an attention goes when the override has nothing of its own to do, the same place for each
attention the override computes itself, and HAP's masked attention through it where it takes a mask.

What the host does, read at Comfy-Org/ComfyUI 05080f6 (comfy/ldm/modules/attention.py, the newest ``wrap_attn`` we
could read) and 980c56c (comfy/ldm/flux/math.py): FLUX's ``attention()`` hands q, k, v to ``optimized_attention`` in
``AttentionTensorContainer``s, with the block's ``preferred_attention`` (a ``ComfyAttention`` module whose
``function`` a checkpoint's attention config sets, e.g. comfy-kitchen's INT8). ``wrap_attn`` pops
``preferred_attention``, then: with an override in ``transformer_options``, the override's
``container_function(q, k, v, ...)`` where it has one (the containers as they are: INT8's frees them before
attending), else the tensors taken out and ``override(func, q, k, v, ...)``, the preference dropped; without an
override, ``preferred.function(...)`` where set; else ``func``'s own ``container_function``, or ``func`` on the
tensors. The only attribute of the override read there is ``container_function``; ModelPatcher's
``set_model_optimized_attention`` (08d0e51), which the Model Attention Backend node (691e827) calls, copies it from
the function it wraps. ComfyUI 0.3.75 and 0.30 have no containers and no preference: the override gets tensors and
``func``.

So a stage clone's override always has a ``container_function``; wrap_attn then passes it no ``func``, and ``func``
is FLUX's ``optimized_attention`` (what 980c56c calls). The preference never reaches an override, so it is read from
the model, once per model call: the ``ComfyAttention`` modules of each block (the newest FLUX layers could not be
read to say which module a block passes; a block whose modules set different functions is said once and gets the
host's attention).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .spa import AttentionCall, Notes

BOOLEAN, ADDITIVE = "boolean", "additive"
#: How ComfyUI's attention functions (05080f6) take a (B, H, n, N) mask. PyTorch's SDPA, and comfy-kitchen's INT8
#: (0.2.40 ``_validate_inputs``: bool, fp16, bf16 or fp32, broadcast to the scores), a boolean keep mask; basic,
#: split, sub-quadratic and xformers add theirs to the scores (basic's boolean branch is a per-key mask, xformers
#: copies the mask into q's dtype). Sage and sage3 hand a mask to PyTorch's attention (or to a sageattn whose mask
#: we could not read), flash raises on one and falls back with a warning per call: HAP runs its own kernel there.
MASKS = {"attention_pytorch": BOOLEAN, "attention_comfy_kitchen_int8": BOOLEAN, "attention_basic": ADDITIVE,
         "attention_split": ADDITIVE, "attention_sub_quad": ADDITIVE, "attention_xformers": ADDITIVE}


def _attention_module():
    import comfy.ldm.modules.attention as attention

    return attention


def host_function() -> Callable:
    """``func`` where wrap_attn does not pass it (container calls): what FLUX's attention calls (980c56c)."""
    import comfy.ldm.flux.math as flux_math

    return flux_math.optimized_attention


def block_preferences(model: torch.nn.Module, notes: Notes) -> dict:
    """(block type, block index) -> the attention function the checkpoint's config sets for that block's
    ``ComfyAttention`` modules (None: none), and (None, None) -> the model's where all agree, for an attention outside
    FLUX's blocks; {} on hosts without them. Read once per model call, outside the diffusion model (which
    torch.compile may trace); a block whose modules set different functions is said once and gets the host's."""
    kind = getattr(_attention_module(), "ComfyAttention", None)
    if kind is None:
        return {}

    def one(scope: torch.nn.Module, where: str | None) -> Callable | None:
        found = {id(m.function): m.function for m in scope.modules()
                 if isinstance(m, kind) and getattr(m, "function", None) is not None}
        if len(found) > 1 and where is not None:
            notes.once(f"HRDiT: the checkpoint sets {len(found)} attention functions in {where}; HRDiT's stages use "
                       "the host's attention there.")
        return next(iter(found.values())) if len(found) == 1 else None

    preferences = {(None, None): one(model, None)}
    for block_type in ("double", "single"):
        for index, block in enumerate(getattr(model, f"{block_type}_blocks", ())):
            preferences[block_type, index] = one(block, f"{block_type} block {index}")
    return preferences


def preferred_function(call: AttentionCall | None, options: dict) -> Callable | None:
    """The checkpoint's attention function for this call's block (AttentionCall.preferred), or None."""
    if call is None or not call.preferred:
        return None
    key = (options.get("block_type"), options.get("block_index"))
    return call.preferred[key] if key in call.preferred else call.preferred[None, None]


def override_function(override: Callable) -> Callable | None:
    """The attention function a host-set override calls, or None where that cannot be known: the wrapper of
    ModelPatcher.set_model_optimized_attention (08d0e51) closes over it; an override carrying INT8's
    ``container_function`` runs INT8 on containers."""
    import comfy.model_patcher

    setter = getattr(comfy.model_patcher.ModelPatcher, "set_model_optimized_attention", None)
    code, cells = getattr(override, "__code__", None), getattr(override, "__closure__", None) or ()
    if code is not None and code in getattr(getattr(setter, "__code__", None), "co_consts", ()):
        wrapped = [cell.cell_contents for cell in cells if callable(cell.cell_contents)]
        if len(wrapped) == 1:
            return wrapped[0]
    int8 = getattr(_attention_module(), "attention_comfy_kitchen_int8", None)
    container = getattr(override, "container_function", None)
    return int8 if container is not None and container is getattr(int8, "container_function", None) else None


def mask_kind(function: Callable | None) -> str | None:
    """BOOLEAN, ADDITIVE, or None: how ``function`` (one of ComfyUI's, by identity) takes a mask."""
    attention = _attention_module()
    return next((kind for name, kind in MASKS.items()
                 if function is not None and function is getattr(attention, name, None)), None)


def _name(function: Callable) -> str:
    return getattr(function, "__qualname__", None) or type(function).__name__


def override_name(override: Callable) -> str:
    """For the log: the function a host-set override calls where known, else the override's own name."""
    known = override_function(override)
    return f"{_name(known) if known else _name(override)} (the model's attention override)"


@dataclass(frozen=True)
class Route:
    """Where one attention goes without our override (module docstring), called as wrap_attn calls it."""

    previous: Callable | None  # the override the MODEL had before ours
    preferred: Callable | None  # the checkpoint's function for the block (consulted only without ``previous``)
    func: Callable  # the host's

    def __call__(self, q, k, v, heads: int, args: tuple, kwargs: dict, boxed: bool):
        """q, k, v as the host handed them: containers where ``boxed``, else tensors."""
        if self.previous is not None:
            container = getattr(self.previous, "container_function", None)
            if boxed and container is not None:
                return container(q, k, v, heads, *args, **kwargs)
            if boxed:
                q, k, v = q.take(), k.take(), v.take()
            return self.previous(self.func, q, k, v, heads, *args, **kwargs)
        if self.preferred is not None:
            return self.preferred(q, k, v, heads, *args, **kwargs)
        return self.func(q, k, v, heads, *args, **kwargs)

    def fresh(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, heads: int, args: tuple, kwargs: dict,
              box: type | None):
        """Attention of tensors our override made: in new containers of the host's ``box`` type where it has them,
        so a backend's container path (INT8 freeing q, k, v before attending) runs for them too."""
        if box is not None:
            return self(box(q), box(k), box(v), heads, args, kwargs, True)
        return self(q, k, v, heads, args, kwargs, False)

    @property
    def function(self) -> Callable | None:
        """The attention function doing the work, where known."""
        if self.previous is not None:
            return override_function(self.previous)
        return self.preferred if self.preferred is not None else self.func

    @property
    def name(self) -> str:
        if self.previous is not None:
            return override_name(self.previous)
        if self.preferred is not None:
            return f"{_name(self.preferred)} (the checkpoint's)"
        return f"{_name(self.func)} (ComfyUI's)"


def hap_attend(route: Route, kwargs: dict, box: type | None) -> Callable | None:
    """HAP's inner attention ``attend(q, k, v, keep_mask, scale) -> (B, H, n, D)`` through ``route`` where its
    function takes a mask (MASKS; an additive mask with a finite floor, so a fully pruned chunk of keys cannot turn
    sub-quadratic attention's running maximum into NaN), else None: HAP's own kernel."""
    kind = mask_kind(route.function)
    if kind is None:
        return None
    rest = {key: value for key, value in kwargs.items()
            if key not in ("mask", "skip_reshape", "skip_output_reshape", "scale")}

    def attend(q, k, v, mask, scale):  # mask: None (every key kept) or a bool keep mask broadcasting over heads
        if kind == ADDITIVE and mask is not None:
            mask = (~mask).to(q.dtype) * (torch.finfo(q.dtype).min / 2)
        extra = dict(rest, mask=mask, skip_reshape=True, skip_output_reshape=True)
        if scale is not None:
            extra["scale"] = scale
        return route.fresh(q, k, v, q.shape[1], (), extra, box)

    return attend
