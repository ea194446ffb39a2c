"""HRDiT's stage model as the official code runs it (zylwithxy/HRDiT e4aa8c6, hrdit/transformer.py and
hrdit/attention.py), on a ComfyUI model, for the whole-cascade reference: every attention computed in float64 by
tests/hrdit_reference.py, nothing of the pack's.

The clone's rotary embedder only records the ids the model builds and returns an identity table; its attention
override then does what the official processor does with them: the stage's table at theta x ntk_factor
(``FluxPosEmbed(ids, ntk_factor)``), or on the stage's first ``spa_steps`` steps SPA's variants at ntk 1 and the
mean of their outputs; the proportional scale sqrt(log_4608(N) / d); HAP's mask on every step. The step is the
count of the clone's model calls since its sampling started (one call per step at cfg 1, as the reference loop
samples).
"""

from __future__ import annotations

import hrdit_reference as ref
import torch

AXES, THETA, TRAIN_SEQ_LEN = [16, 56, 56], 10000.0, 64 ** 2 + 512


class _Ids(torch.nn.Module):
    def __init__(self, state: dict) -> None:
        super().__init__()
        self.state = state

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        self.state["ids"] = ids[0].double()
        table = torch.zeros(ids.shape[0], 1, ids.shape[1], sum(AXES) // 2, 2, 2)
        table[..., 0, 0] = table[..., 1, 1] = 1.0
        return table


def reference_stage(model, text: int, ntk_factor: float, spa_steps: int, group_num: int, alpha: float,
                    anchor: int, beta: float = 0.0, hap: bool = True):
    """A clone of ``model`` whose every attention is the official stage processor's, in float64."""
    import comfy.patcher_extension as ext

    state: dict = {"step": 0, "masks": {}}

    def keep_of(tokens: int, heads: int):
        if not hap:
            return None
        key = (tokens, heads)
        if key not in state["masks"]:
            band = ref.band_blocks([alpha] * heads, [beta] * heads, tokens)
            state["masks"][key] = ref.hap_keep(tokens, band, anchor, text_len=text)
        return state["masks"][key]

    def override(func, q, k, v, heads, *args, **kwargs):
        ids = state["ids"]
        if state["step"] < spa_steps:
            variants = ref.bundle_id_variants(ids[text:], group_num)
            tables = [ref.rope_cos_sin(torch.cat([ids[:text], variant]), AXES, THETA) for variant in variants]
        else:
            tables = [ref.rope_cos_sin(ids, AXES, THETA, ntk_factor)]
        scale = ref.proportional_scale(q.shape[2], q.shape[-1], TRAIN_SEQ_LEN)
        out = ref.spa_attention(q, k, v, tables, scale, keep_of(q.shape[2], q.shape[1]))
        return out.transpose(1, 2).reshape(q.shape[0], q.shape[2], -1).to(q.dtype)

    def count_steps(executor, *args, **kwargs):
        try:
            return executor(*args, **kwargs)
        finally:
            state["step"] += 1

    def new_run(executor, *args, **kwargs):
        state["step"] = 0
        return executor(*args, **kwargs)

    clone = model.clone()
    clone.add_object_patch("diffusion_model.pe_embedder", _Ids(state))
    clone.model_options.setdefault("transformer_options", {})["optimized_attention_override"] = override
    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "hrdit_reference", count_steps)
    clone.add_wrapper_with_key(ext.WrappersMP.OUTER_SAMPLE, "hrdit_reference", new_run)
    return clone
