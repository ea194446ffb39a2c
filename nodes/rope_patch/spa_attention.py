"""The attention of an HRDiT stage clone: SPA's average over its variants' tables, and HAP's pruned attention.

It is ComfyUI's attention override (``transformer_options["optimized_attention_override"]``, which the host's
``comfy.ldm.modules.attention.wrap_attn`` calls as ``override(func, q, k, v, heads, ...)`` with q and k already
rotated by the table the model's embedder returned), chained onto any override the MODEL already had. Per block:

* an SPA call (spa.py left the tables; the model rotated q and k with an identity table): in a block SPA is on,
  the mean over the variants of attention(rope(q, table), rope(k, table), v), summed in the official order and
  divided by their count (``_spa_attention``: mean of softmax(A_n)·V == mean of the outputs); in a block it is
  not, the ordinary table, as the model would have applied it;
* every other call: q and k as they came;

and each attention is the plan's kernel (HAP) where it has one, else the host's own (or the chained override).
"""

from __future__ import annotations

from collections.abc import Callable

from .scopes import warn
from .spa import ATTENTION, AttentionCall


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


def chained_override(previous: Callable | None) -> Callable:
    """The override of an HRDiT stage clone, calling ``previous`` (another node's override) for every attention."""

    def inner(func, q, k, v, heads, *args, **kwargs):
        if previous is not None:
            return previous(func, q, k, v, heads, *args, **kwargs)
        return func(q, k, v, heads, *args, **kwargs)

    def attend(call: AttentionCall, func, q, k, v, heads, args, kwargs):
        kernel = call.plan.kernel
        if kernel is None or args:
            return inner(func, q, k, v, heads, *args, **kwargs)
        return kernel(q, k, v, heads, call, kwargs)

    def override(func, q, k, v, heads, *args, **kwargs):
        call = ATTENTION.get()
        if call is None:
            return inner(func, q, k, v, heads, *args, **kwargs)
        if call.spa_on and call.tables is None:
            warn("HRDiT: SPA was on for this model call, but the model never asked the SPA embedder for its rotary "
                 "table (another node replaced the embedder?); this call runs without SPA.")
            call.spa_on = False
        if not call.spa_on:
            return attend(call, func, q, k, v, heads, args, kwargs)
        options = kwargs.get("transformer_options") or {}
        ordinary, variants = call.tables
        if not call.plan.spa.allows(options.get("block_type"), options.get("block_index")):
            q, k = _host_rope(q, k, ordinary)
            return attend(call, func, q, k, v, heads, args, kwargs)
        total = None
        for table in variants:
            q_v, k_v = _host_rope(q, k, table)
            out = attend(call, func, q_v, k_v, v, heads, args, kwargs)
            total = out if total is None else total + out
        return total / len(variants)

    override.dype_sega_attention = True  # marks ours: a second HRDiT clone of a clone does not chain itself twice
    override.previous = previous
    return override
