"""The attention of an HRDiT stage clone: SPA's average over its variants' tables, and HAP's pruned attention.

It is ComfyUI's attention override (``transformer_options["optimized_attention_override"]``, which the host's
``comfy.ldm.modules.attention.wrap_attn`` calls as ``override(func, q, k, v, heads, ...)``, or, on hosts that hand
q, k, v in containers, as ``override.container_function(q, k, v, heads, ...)``), chained onto the override the
MODEL already had. Per block:

* an SPA call (spa.py left the tables; the model rotated q and k with an identity table): in a block SPA is on,
  the mean over the variants of attention(rope(q, table), rope(k, table), v), summed in the official order and
  divided by their count (``_spa_attention``: mean of softmax(A_n)·V == mean of the outputs); in a block it is
  not, the ordinary table, as the model would have applied it;
* every other call: q and k as they came;

and each attention is the plan's kernel (HAP, attending through the user's backend where that takes a mask) or the
user's backend. A call with nothing of ours to do (SPA off, no kernel) goes, untouched, where it would have gone
without us: attention_backend.py says where (the previous override's container path, the checkpoint's preferred
attention, the host's function) and why.
"""

from __future__ import annotations

from collections.abc import Callable

from .attention_backend import Route, hap_attend, host_function, preferred_function
from .scopes import ThreadSlot, warn
from .spa import ATTENTION, AttentionCall

#: Set while our override computes its own attentions: an override chained under ours that calls ours again (a node
#: that chained onto our clone, re-chained under it by attention_clone.py) passes through instead of acting twice.
INSIDE = ThreadSlot()


def _host_rope(q, k, table):
    from comfy.ldm.flux.math import apply_rope

    return apply_rope(q, k, table)


def host_can_override_attention() -> str:
    """'' when the running ComfyUI lets a node replace attention, else the feature it lacks (for refusals)."""
    import comfy.ldm.modules.attention as attention

    if not hasattr(attention, "wrap_attn"):
        return ("ComfyUI's attention override (transformer_options['optimized_attention_override'], honoured by "
                "comfy.ldm.modules.attention.wrap_attn), which this ComfyUI does not have")
    return ""


def _acts(call: AttentionCall, args: tuple) -> bool:
    """Whether this call has anything of ours to do: SPA's rotation, or a kernel (which takes no positional extras)."""
    if call.spa_on and call.tables is None:
        warn("HRDiT: SPA was on for this model call, but the model never asked the SPA embedder for its rotary "
             "table (another node replaced the embedder?); this call runs without SPA.")
        call.spa_on = False
    return call.spa_on or (call.plan.kernel is not None and not args)


def _attend_all(call: AttentionCall, route: Route, q, k, v, heads: int, args: tuple, kwargs: dict,
                box: type | None):
    """SPA's average (or the ordinary table) and each attention through the kernel or ``route``."""
    kernel = call.plan.kernel
    attend = None
    if kernel is not None and not args:
        attend = hap_attend(route, kwargs, box)
        if attend is None:
            call.notes.once(f"HRDiT: HAP runs its own attention kernel: the attention backend {route.name} takes "
                            "no mask.")

    def one(q, k, v):
        if kernel is None or args:
            return route.fresh(q, k, v, heads, args, kwargs, box)
        return kernel(q, k, v, heads, call, kwargs, attend=attend)

    if not call.spa_on:
        return one(q, k, v)
    options = kwargs.get("transformer_options") or {}
    ordinary, variants = call.tables
    if not call.plan.spa.allows(options.get("block_type"), options.get("block_index")):
        return one(*_host_rope(q, k, ordinary), v)
    total = None
    for table in variants:
        out = one(*_host_rope(q, k, table), v)
        total = out if total is None else total + out
    return total / len(variants)


def chained_override(previous: Callable | None) -> Callable:
    """The override of an HRDiT stage clone, chained onto ``previous`` (the override the MODEL had, or None)."""

    def act(func, q, k, v, heads, args, kwargs, boxed: bool):
        call = ATTENTION.get()
        options = kwargs.get("transformer_options") or {}
        preferred = preferred_function(call, options) if previous is None else None
        route = Route(previous, preferred, func if func is not None else host_function())
        if call is None or INSIDE.get() or not _acts(call, args):
            return route(q, k, v, heads, args, kwargs, boxed)
        box = type(q) if boxed else None
        if boxed:  # as wrap_attn does before calling an override without a container path
            q, k, v = q.take(), k.take(), v.take()
        with INSIDE.holding(True):
            return _attend_all(call, route, q, k, v, heads, args, kwargs, box)

    def override(func, q, k, v, heads, *args, **kwargs):
        return act(func, q, k, v, heads, args, kwargs, False)

    def container_function(q, k, v, heads, *args, **kwargs):
        return act(None, q, k, v, heads, args, kwargs, True)

    override.container_function = container_function  # the host hands us its containers: see attention_backend.py
    override.dype_sega_attention = True  # marks ours: a second HRDiT clone of a clone does not chain itself twice
    override.previous = previous
    return override
