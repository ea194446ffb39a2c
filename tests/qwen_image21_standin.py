"""A stand-in for Qwen-Image 2.1 as ComfyUI 0.37+ runs it: no host here has it. Written from reading Comfy-Org/ComfyUI
``comfy/ldm/qwen_image21/model.py`` (commits 08f68f09, the newest read, and b806797), ``comfy/model_base.py``
@094c74c1 (``QwenImage21``), ``comfy/supported_models.py`` @01f03bbd and ``comfy/latent_formats.py`` (``QwenImage21``).
Never run against the real model.

Kept from upstream, because the pack depends on them:

* positions (``build_sequence``): text segments run on from 0 on all three id columns (split at ``image_slots``
  around the references), each reference at one index, centred on the target with half a token where its parity
  differs, the target last, centred on -ceil(h/2); one ComfyUI EmbedND call on batch-1 ids, transposed to the
  (1, N, 1, pairs, 2, 2) table the fused kernel takes;
* the rotary after the q/k RMSNorm: fused (``rms_rope``: comfy-kitchen's where the host has it, else RMSNorm and
  ComfyUI's ``apply_rope1``) without ``attn1_patch``, the eager ``apply_rope1`` path with one, the patches seeing
  (B, H, N, D) and the table transposed back;
* block-causal attention (text causal, each image block bidirectional over everything before its end) and t = 0
  modulation of the text and reference rows;
* the prefix K/V cache: enabled for a run when the patcher is set without hook patches (model_base's
  ``current_patcher`` setter, which frees the previous run's); skipped whenever ``patches_replace["dit"]``,
  ``post_input``, ``single_block`` or ``attn1_patch`` is present, or ``transformer_options["qwen_image21_cache"]
  ["device"] == "off"``; keyed by the sizes, slots, prompt and references (no timestep); its slots, their order,
  eviction, memory budget and int8 / int4 storage are upstream's (tests/qwen_image21_cache.py). As in 08f68f09's
  ``_forward`` (:360-388), a call that fills a slot runs the prefix rows apart (the prefix segments only) and stores
  their keys *after* the rotary and their values; every call with a cache then runs the target rows against the
  stored keys as ``take`` gives them back (dequantized where int8 / int4), filling or reading.

Simplified (nothing the pack reads): widths and depth, one modulation Linear, a LayerNorm out, attention as plain
matmuls; no fun-control branch or prefetch queue. The block's shape is upstream's (q, k, v, out projections, SwiGLU
MLP with ratio 3), so the work the cache saves is in proportion. The cache counts its fills and hits (and
evictions) so tests can see which path ran.
"""

from __future__ import annotations

import importlib

import tiny_models
import torch
import torch.nn.functional as F
from qwen_image21_cache import Memory, PoseBranchCache, select_prefix_cache

CACHE_OPTION = "qwen_image21_cache"


def _apply_rope1(x: torch.Tensor, pe: torch.Tensor) -> torch.Tensor:
    return importlib.import_module("comfy.ldm.flux.math").apply_rope1(x, pe)


def _fused_rms_rope(q, k, pe, norm_q, norm_k):
    """The fused path: comfy-kitchen's ``rms_rope`` where the host has it (0.30), else its eager meaning."""
    ck = getattr(importlib.import_module("comfy.quant_ops"), "ck", None)
    if ck is not None and hasattr(ck, "rms_rope"):
        return ck.rms_rope(q, k, pe, norm_q.weight, norm_k.weight, norm_q.eps)
    return _apply_rope1(norm_q(q), pe), _apply_rope1(norm_k(k), pe)


def _sdpa(q, k, v, mask=None):
    """(B, Nq, H, D) queries over (B, Nk, H, D) keys -> (B, Nq, H * D); written out as matmuls (dense, every masked
    entry computed, as upstream's attention with a mask) so torch's FLOP counter sees all of it."""
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(dim=-1) @ v).transpose(1, 2).flatten(2)


def block_causal(segments, store=None, prefix_len: int = 0):
    """Attention over the whole sequence; ``store(k, v)`` receives the prefix rows' keys and values (post-rotary)."""
    def attend(q, k, v):
        if store is not None:
            store(k[:, :prefix_len], v[:, :prefix_len])
        return torch.cat([_sdpa(q[:, a:b], k[:, :b], v[:, :b], mask) for a, b, mask in segments], dim=1)
    return attend


def _stacked_into(cache, index: int):
    """Upstream's store: keys and values stacked on dim 1 (batch first, quantized rows per token and head)."""
    return lambda k, v: cache.put(index, torch.stack([k, v], dim=1))


def against_cached(prefix_k, prefix_v):
    """Target-only queries against the cached prefix keys and values and their own."""
    def attend(q, k, v):
        return _sdpa(q, torch.cat([prefix_k, k], dim=1), torch.cat([prefix_v, v], dim=1))
    return attend


def prefix_cache_key(x, context, refs, slots) -> torch.Tensor:
    """Sizes and slots, then the prompt and the references, per batch row: no timestep (upstream's rule)."""
    header = [context.shape[1], len(refs), *x.shape[-2:], *slots, *(s for r in refs for s in r.shape[-2:])]
    header = torch.tensor(header, dtype=torch.float32).expand(context.shape[0], -1)
    return torch.cat([header, context.float().flatten(1).cpu()] + [r.float().flatten(1).cpu() for r in refs], dim=1)


def _by_rows(x, pair, prefix_len, fn):
    """``fn`` with the t = 0 modulation row on the prefix rows and the sampled t's on the target rows."""
    return torch.cat([fn(x[:, :prefix_len], pair[0]), fn(x[:, prefix_len:], pair[1])], dim=1)


class Block(torch.nn.Module):
    def __init__(self, dim: int, heads: int, head_dim: int, ops, dtype=None, device=None) -> None:
        super().__init__()
        self.heads = heads
        linear = lambda i, o: ops.Linear(i, o, bias=False, dtype=dtype, device=device)  # noqa: E731
        self.to_q, self.to_k, self.to_v, self.to_out = (linear(dim, dim) for _ in range(4))
        self.norm_q = ops.RMSNorm(head_dim, eps=1e-6, dtype=dtype, device=device)
        self.norm_k = ops.RMSNorm(head_dim, eps=1e-6, dtype=dtype, device=device)
        self.gate_up, self.down = linear(dim, 6 * dim), linear(3 * dim, dim)  # upstream's SwiGLU, mlp_ratio 3

    def attention(self, x, pe, attend, prefix_len, options):
        b, n, _ = x.shape
        q, k, v = (layer(x).view(b, n, self.heads, -1) for layer in (self.to_q, self.to_k, self.to_v))
        patches = options.get("patches", {}).get("attn1_patch", [])
        if patches:  # the eager path: patches see (B, H, N, D) before the rotary, the table as (·, 1, N, ...)
            q, k = self.norm_q(q), self.norm_k(k)
            q, k, v, pe = (t.transpose(1, 2) for t in (q, k, v, pe))
            extra = {**options, "img_slice": [prefix_len, n]}
            for patch in patches:
                out = patch(q, k, v, pe=pe, attn_mask=None, extra_options=extra)
                q, k, v, pe = out.get("q", q), out.get("k", k), out.get("v", v), out.get("pe", pe)
            q, k, v, pe = (t.transpose(1, 2) for t in (q, k, v, pe))
            q, k = _apply_rope1(q, pe), _apply_rope1(k, pe)
        else:
            q, k = _fused_rms_rope(q, k, pe, self.norm_q, self.norm_k)
        return self.to_out(attend(q, k, v))

    def forward(self, x, mod, pe, attend, prefix_len, options):
        scale1, gate1, scale2, gate2 = mod
        scaled, gated = (lambda v, s: v * (1 + s)), (lambda v, g: v * g.tanh())
        h = _by_rows(F.layer_norm(x, x.shape[-1:], eps=1e-6), scale1, prefix_len, scaled)
        x = x + _by_rows(self.attention(h, pe, attend, prefix_len, options), gate1, prefix_len, gated)
        gate, up = self.gate_up(_by_rows(F.layer_norm(x, x.shape[-1:], eps=1e-6), scale2, prefix_len, scaled)).chunk(
            2, dim=-1)
        return x + _by_rows(self.down(F.silu(gate) * up), gate2, prefix_len, gated)


class QwenImage21Transformer(torch.nn.Module):
    """Upstream's ``QwenImage21Transformer2DModel`` in small (see the module docstring for what is kept)."""

    def __init__(self, in_channels=64, out_channels=64, num_layers=2, attention_head_dim=128, num_attention_heads=2,
                 context_in_dim=32, axes_dims_rope=(16, 56, 56), image_model=None, dtype=None, device=None,
                 operations=None):
        super().__init__()
        from comfy.ldm.flux.layers import EmbedND

        dim = num_attention_heads * attention_head_dim
        self.dtype, self.out_channels = dtype, out_channels
        self.pe_embedder = EmbedND(dim=attention_head_dim, theta=10000, axes_dim=list(axes_dims_rope))
        linear = lambda i, o: operations.Linear(i, o, bias=False, dtype=dtype, device=device)  # noqa: E731
        self.txt_in, self.img_in, self.time_in = linear(context_in_dim, dim), linear(in_channels, dim), linear(256, dim)
        self.modulation = linear(dim, 4 * dim)
        self.transformer_blocks = torch.nn.ModuleList(
            Block(dim, num_attention_heads, attention_head_dim, operations, dtype, device) for _ in range(num_layers))
        self.proj_out = linear(dim, out_channels)
        self.prefix_cache: PoseBranchCache | None = None
        self.prefix_cache_enabled = False
        self.cache_memory = Memory()  # what the cache reads as free memory (the stand-in's hook: qwen_image21_cache.py)

    def reset_prefix_cache(self, enabled: bool) -> None:
        if self.prefix_cache is not None:
            self.prefix_cache.free()
        self.prefix_cache = None
        self.prefix_cache_enabled = enabled

    def build_sequence(self, x, context, refs, image_slots):
        """Text with each reference spliced in at its slot, the target last: tokens, the (1, N, 1, ...) table,
        the attention segments."""
        txt = self.txt_in(context)
        slots = (image_slots + [txt.shape[1]] * len(refs))[:len(refs)]
        bounds = [0, *slots, txt.shape[1]]
        parts, ids, segments, pos, length = [], [], [], 0, 0
        for (start, end), img in zip(zip(bounds[:-1], bounds[1:], strict=True), [*refs, x], strict=True):
            if end > start:
                n = end - start
                parts.append(txt[:, start:end])
                ids.append(torch.arange(pos, pos + n, dtype=torch.float32)[:, None].expand(n, 3))
                segments.append((length, length + n, torch.ones(n, length + n, dtype=torch.bool).tril(length)))
                pos, length = pos + n, length + n
            h, w = img.shape[-2:]
            parts.append(self.img_in(img.flatten(2).transpose(1, 2)))
            rows = torch.arange(h, dtype=torch.float32) - (h - h // 2) + 0.5 * (h % 2 - x.shape[-2] % 2)
            cols = torch.arange(w, dtype=torch.float32) - (w - w // 2) + 0.5 * (w % 2 - x.shape[-1] % 2)
            ids.append(torch.stack([torch.full((h, w), float(pos)), rows[:, None].expand(h, w),
                                    cols[None, :].expand(h, w)], dim=-1).flatten(0, 1))
            segments.append((length, length + h * w, None))
            pos, length = pos + max(h, w), length + h * w
        pe = self.pe_embedder(torch.cat(ids).unsqueeze(0).to(x.device)).transpose(1, 2).contiguous()
        return torch.cat(parts, dim=1), pe, segments

    def forward(self, x, timestep, context, ref_latents=None, image_slots=None, transformer_options=None, **kwargs):
        import comfy.patcher_extension as ext

        return ext.WrapperExecutor.new_class_executor(
            self._forward, self, ext.get_all_wrappers(ext.WrappersMP.DIFFUSION_MODEL, transformer_options or {}),
        ).execute(x, timestep, context, ref_latents, image_slots, transformer_options or {}, **kwargs)

    def _forward(self, x, timesteps, context, ref_latents=None, image_slots=None, transformer_options=None, **kwargs):
        from comfy.ldm.flux.layers import timestep_embedding

        b, _, height, width = x.shape
        refs, options = list(ref_latents or []), transformer_options or {}
        hidden, pe, segments = self.build_sequence(x, context, refs, list(image_slots or []))
        prefix_len = hidden.shape[1] - height * width
        patches = options.get("patches", {})
        for patch in patches.get("post_input", []):
            out = patch({"img": hidden, "pe": pe, "transformer_options": options})
            hidden, pe = out["img"], out.get("pe", pe)
        temb = self.time_in(timestep_embedding(torch.cat([timesteps, timesteps.new_zeros(1)]), 256).to(x.dtype))
        mod = tuple((m[-1:, None], m[:-1, None]) for m in self.modulation(F.silu(temb)).chunk(4, dim=-1))
        replace = options.get("patches_replace", {}).get("dit", {})
        hooked = replace or patches.get("post_input") or patches.get("single_block") or patches.get("attn1_patch")
        cache, cached = None, False
        if self.prefix_cache_enabled and prefix_len > 0 and not hooked:
            key = prefix_cache_key(x, context, refs, image_slots or [])
            size = 2 * len(self.transformer_blocks) * b * prefix_len * hidden.shape[-1] * hidden.element_size()
            cache, cached = select_prefix_cache(self, key, size, x.device, options.get(CACHE_OPTION, {}))
        if cache is not None:  # 08f68f09: the prefix rows run apart from the target when filling; the target reads
            cache.hits, cache.fills = cache.hits + cached, cache.fills + (not cached)  # the stored (taken) keys
            (prefix, hidden), (prefix_pe, pe) = (t.split([prefix_len, t.shape[1] - prefix_len], 1) for t in (hidden, pe))
        for i, block in enumerate(self.transformer_blocks):
            if cache is not None:
                if not cached:
                    prefix = block(prefix, mod, prefix_pe, block_causal(segments[:-1], _stacked_into(cache, i),
                                                                        prefix_len), prefix_len, options)
                attend = against_cached(*cache.take(i, x.device, x.dtype, b).unbind(1))
                if cached:
                    cache.prefetch(i + 1, x.device, x.dtype)
            else:
                attend = block_causal(segments, None, prefix_len)
            hidden = block(hidden, mod, pe, attend, 0 if cache is not None else prefix_len, options)
            for patch in patches.get("single_block", []):
                hidden = patch({"img": hidden, "x": x, "block_index": i, "transformer_options": options})["img"]
        prefix_len = 0 if cache is not None else prefix_len
        out = F.layer_norm(hidden[:, prefix_len:], hidden.shape[-1:], eps=1e-6) * (1 + mod[0][1])
        return self.proj_out(out).transpose(1, 2).reshape(b, self.out_channels, height, width)


def build(seed: int = 0, num_layers: int = 2):
    """A ModelPatcher of the stand-in: its model_base class ``QwenImage21`` defined as ComfyUI defines it (in
    ``comfy.model_base``, a QwenImage subclass), a supported_models config with upstream's sampling settings and a
    64-channel 16x latent format, random weights (tiny_models' draw)."""
    import comfy.latent_formats
    import comfy.model_base
    import comfy.model_patcher
    import comfy.supported_models_base

    class QwenImage21(comfy.model_base.QwenImage):
        __module__ = comfy.model_base.__name__

        def __init__(self, model_config, model_type=comfy.model_base.ModelType.FLUX, device=None):
            comfy.model_base.BaseModel.__init__(self, model_config, model_type, device=device,
                                                unet_model=QwenImage21Transformer)
            self.memory_usage_factor_conds = ("ref_latents",)

        @property
        def current_patcher(self):
            return self._current_patcher

        @current_patcher.setter
        def current_patcher(self, patcher):  # upstream: the cache lives for one run, off when hooks repatch weights
            self._current_patcher = patcher
            model = getattr(self, "diffusion_model", None)
            if model is not None:
                model.reset_prefix_cache(patcher is not None and len(patcher.hook_patches) == 0)

        def extra_conds(self, **kwargs):
            import comfy.conds

            out = super().extra_conds(**kwargs)
            if kwargs.get("image_slots") is not None:
                out["image_slots"] = comfy.conds.CONDConstant(kwargs["image_slots"])
            return out

    class Latent(comfy.latent_formats.LatentFormat):
        latent_channels = 64
        spacial_downscale_ratio = 16

    class Config(comfy.supported_models_base.BASE):
        unet_config = {"image_model": "qwen_image21"}
        unet_extra_config = {}
        sampling_settings = {"multiplier": 1.0, "shift": 0.69}
        latent_format = Latent
        supported_inference_dtypes = [torch.bfloat16, torch.float32]

        def get_model(self, state_dict, prefix="", device=None):
            return QwenImage21(self, device=device)

    config = Config({"image_model": "qwen_image21", "num_layers": num_layers, "context_in_dim": tiny_models.TEXT_WIDTH})
    config.set_inference_dtype(torch.float32, None)
    model = config.get_model({})
    tiny_models._randomize(model, seed)
    model.eval()
    return comfy.model_patcher.ModelPatcher(model, load_device=torch.device("cpu"), offload_device=torch.device("cpu"))


#: The stand-in as a tiny family (tests/tiny_models.py): a 64-channel 4-D latent, patch 1, text on the spatial columns.
FAMILY = tiny_models.TinyFamily("qwen_image21", build, lambda b, h, w: torch.zeros(b, 64, h, w), tiny_models.qwen_cond,
                                patch=1, text_on_spatial=True)
