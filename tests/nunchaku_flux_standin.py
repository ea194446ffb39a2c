"""A stand-in for Nunchaku FLUX as ComfyUI-nunchaku runs it: nunchaku is not on PyPI and its kernels need CUDA.
Written from reading nunchaku-tech/ComfyUI-nunchaku @dbfd194 (``wrappers/flux.py``: ComfyFluxWrapper;
``nodes/models/flux.py``: NunchakuFluxDiTLoader puts it on ComfyUI's ``model_base.Flux``) and nunchaku-tech/nunchaku
@3a3cc3d (``nunchaku/models/transformers/transformer_flux.py``: NunchakuFluxTransformer2dModel, its EmbedND and
NunchakuFluxTransformerBlocks; ``nunchaku/models/embeddings.py``: NunchakuFluxPosEmbed, pack_rotemb;
``nunchaku/utils.py``: pad_tensor; ``src/kernels/zgemm/epilogues.cuh``: the kernel that rotates q and k). Never run
against the real thing.

Kept from upstream, because the pack depends on them:

* the wrapper's call shape: ``forward(x, timestep, context, y, guidance, control, transformer_options, **kwargs)``,
  tokens packed "b c (h ph) (w pw) -> b (h w) (c ph pw)", image and text ids built in the latent's dtype
  (``wrappers/flux.py`` lines 112-118, 200: bf16 as nunchaku runs, the loader setting ComfyUI's inference dtype to
  bf16, ``nodes/models/flux.py`` line 296), Kontext references at index 1 with their offsets, text ids zeros; the
  transformer called with keywords and its ``.sample`` cut to the image tokens;
* the transformer: ``ids = cat(txt_ids[0], img_ids[0])`` (2-D), ``pos_embed(ids)`` with nunchaku's EmbedND
  (class name, module and layout: ids[None] as with diffusers >= 0.31, per axis [sin, cos] of pos · theta^(-2k/dim)
  in float64, (1, 1, N, pairs, 1, 2) float32, ``transformer_flux.py`` lines 343-378), the blocks' asserts (lines
  169-172: a table of batch 1 for every sample), the text, image and joint tables padded to 256 tokens and packed
  with ``pack_rotemb`` and its asserts (lines 74-80: a float32 table, whatever the blocks compute in; the table is
  moved to the device only, line 155, its cast to the blocks' dtype commented out, lines 175-177);
* what the kernel reads: per pair a float32 [sin, cos] (``epilogues.cuh`` line 276: the packed table is float4;
  lines 386-395: ``rope(x, y, sincos.x, sincos.y)`` with x·cos − y·sin, x·sin + y·cos);
* instead of the CUDA kernels, dense attention: the packed tables are unpacked (``unpack_rotemb``, the inverse
  permutation) and turned into ComfyUI's [[cos, -sin], [sin, cos]] layout for the blocks of a ComfyUI Flux model
  (its img_in as ``x_embedder``, time, guidance and vector embeddings, double and single blocks, final layer), so a
  stand-in built on a tiny ComfyUI Flux computes what that Flux computes, its table read through nunchaku's layout.
  That Flux is built in the stand-in's dtype: bf16 is the loader's (ComfyUI's dtype and nunchaku's blocks alike);
  for fp16 (the loader's "float16" data type) ComfyUI's dtype is fp16 here too, where the loader keeps bf16 and
  nunchaku's blocks cast to fp16 (lines 152-154): the ids are then fp16 instead of bf16, the table still float32.
"""

from __future__ import annotations

from types import SimpleNamespace

import tiny_models
import torch

NUNCHAKU_MODULE = "nunchaku.models.transformers.transformer_flux"


def rope(pos: torch.Tensor, dim: int, theta: float) -> torch.Tensor:
    """(B, N) positions -> (B, N, dim/2, 1, 2) float32 [sin, cos]."""
    omega = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float64, device=pos.device) / dim)
    angles = pos.to(torch.float64)[..., None] * omega
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).view(pos.shape[0], -1, dim // 2, 1, 2).float()


class EmbedND(torch.nn.Module):
    """nunchaku's own EmbedND (not ComfyUI's): (N, 3) ids -> (1, 1, N, pairs, 1, 2)."""

    def __init__(self, dim: int, theta: float, axes_dim: list[int]) -> None:
        super().__init__()
        self.dim, self.theta, self.axes_dim = dim, theta, axes_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids[None, ...]
        return torch.cat([rope(ids[..., i], self.axes_dim[i], self.theta) for i in range(ids.shape[-1])],
                         dim=-3).unsqueeze(1)


EmbedND.__module__ = NUNCHAKU_MODULE


def pad_tensor(tensor: torch.Tensor, multiples: int, dim: int) -> torch.Tensor:
    pad = -tensor.shape[dim] % multiples
    shape = list(tensor.shape)
    shape[dim] = pad
    return torch.cat([tensor, tensor.new_zeros(shape)], dim=dim) if pad else tensor


def pack_rotemb(rotemb: torch.Tensor) -> torch.Tensor:
    """(B, M, D/2, 1, 2) -> (B, M, D): 16x8 tiles in the MMA accumulator order, with nunchaku's asserts
    (``transformer_flux.py`` lines 74-80, ``embeddings.py`` lines 120-126): a bf16 or fp16 table stops the run."""
    assert rotemb.dtype == torch.float32
    b, m, d = rotemb.shape[0], rotemb.shape[1], rotemb.shape[2] * 2
    assert rotemb.shape == (b, m, d // 2, 1, 2)
    assert m % 16 == 0
    assert d % 8 == 0
    tiles = rotemb.reshape(b, m // 16, 16, d // 8, 8).permute(0, 1, 3, 2, 4)
    tiles = tiles.reshape(*tiles.shape[:3], 2, 8, 4, 2).permute(0, 1, 2, 4, 5, 3, 6)
    return tiles.contiguous().view(b, m, d)


def unpack_rotemb(packed: torch.Tensor) -> torch.Tensor:
    """The inverse of ``pack_rotemb`` (what the stand-in's kernel reads): (B, M, D) -> (B, M, D/2, 1, 2)."""
    b, m, d = packed.shape
    tiles = packed.view(b, m // 16, d // 8, 8, 4, 2, 2).permute(0, 1, 2, 5, 3, 4, 6)
    return tiles.reshape(b, m // 16, d // 8, 16, 8).permute(0, 1, 3, 2, 4).reshape(b, m, d // 2, 1, 2)


def comfy_table(rotemb: torch.Tensor) -> torch.Tensor:
    """(1, N, pairs, 1, 2) [sin, cos] -> ComfyUI's (1, 1, N, pairs, 2, 2) [[cos, -sin], [sin, cos]]: the kernel's
    reading, sin first (``epilogues.cuh`` lines 386-395), in float32 as it reads them (line 276)."""
    sin, cos = rotemb[..., 0, 0], rotemb[..., 0, 1]
    return torch.stack((cos, -sin, sin, cos), dim=-1).unflatten(-1, (2, 2)).unsqueeze(1)


class NunchakuFluxTransformer2dModel(torch.nn.Module):
    """The quantized transformer's interface on a ComfyUI Flux's layers (dense attention)."""

    def __init__(self, core: torch.nn.Module) -> None:
        super().__init__()
        self.core = core
        self.x_embedder = core.img_in
        self.pos_embed = EmbedND(dim=core.hidden_size, theta=10000, axes_dim=[16, 56, 56])

    def forward(self, hidden_states, encoder_hidden_states=None, pooled_projections=None, timestep=None,
                img_ids=None, txt_ids=None, guidance=None, controlnet_block_samples=None,
                controlnet_single_block_samples=None, joint_attention_kwargs=None, return_dict=True):
        from comfy.ldm.flux.layers import timestep_embedding

        core = self.core
        img = self.x_embedder(hidden_states)
        vec = core.time_in(timestep_embedding(timestep, 256).to(img.dtype))
        if guidance is not None:
            vec = vec + core.guidance_in(timestep_embedding(guidance, 256).to(img.dtype))
        vec = vec + core.vector_in(pooled_projections[:, :core.params.vec_in_dim])
        txt = core.txt_in(encoder_hidden_states)
        txt_ids = txt_ids[0] if txt_ids.ndim == 3 else txt_ids
        img_ids = img_ids[0] if img_ids.ndim == 3 else img_ids
        table = self.pos_embed(torch.cat((txt_ids, img_ids), dim=0))
        n_txt, n = txt.shape[1], txt.shape[1] + img.shape[1]
        assert table.ndim == 6 and table.shape[:3] == (1, 1, n)  # nunchaku's asserts: one table for the batch
        table = table.reshape(1, n, *table.shape[3:])
        packed_txt, packed_img, packed_single = (pack_rotemb(pad_tensor(t, 256, 1)) for t in
                                                 (table[:, :n_txt], table[:, n_txt:], table))
        joint = torch.cat([unpack_rotemb(packed_txt)[:, :n_txt], unpack_rotemb(packed_img)[:, :n - n_txt]], dim=1)
        pe_double, pe_single = comfy_table(joint), comfy_table(unpack_rotemb(packed_single)[:, :n])
        for block in core.double_blocks:
            img, txt = block(img=img, txt=txt, vec=vec, pe=pe_double, attn_mask=None, transformer_options={})
        img = torch.cat((txt, img), 1)
        for block in core.single_blocks:
            img = block(img, vec=vec, pe=pe_single, attn_mask=None, transformer_options={})
        return SimpleNamespace(sample=core.final_layer(img[:, n_txt:], vec))


NunchakuFluxTransformer2dModel.__module__ = NUNCHAKU_MODULE


class ComfyFluxWrapper(torch.nn.Module):
    """ComfyUI-nunchaku's wrapper: ComfyUI's Flux call in, nunchaku's transformer call out."""

    def __init__(self, model: torch.nn.Module, config: dict) -> None:
        super().__init__()
        self.model, self.config = model, config
        self.dtype = next(model.parameters()).dtype

    def process_img(self, x, index=0, h_offset=0, w_offset=0):
        from comfy.ldm.common_dit import pad_to_patch_size
        from einops import rearrange, repeat

        _, _, h, w = x.shape
        p = self.config.get("patch_size", 2)
        img = rearrange(pad_to_patch_size(x, (p, p)), "b c (h ph) (w pw) -> b (h w) (c ph pw)", ph=p, pw=p)
        h_len, w_len = (h + p // 2) // p, (w + p // 2) // p
        h_offset, w_offset = (h_offset + p // 2) // p, (w_offset + p // 2) // p
        ids = torch.zeros((h_len, w_len, 3), device=x.device, dtype=x.dtype)
        ids[:, :, 0] = ids[:, :, 1] + index
        ids[:, :, 1] += torch.linspace(h_offset, h_len - 1 + h_offset, steps=h_len, device=x.device,
                                       dtype=x.dtype).unsqueeze(1)
        ids[:, :, 2] += torch.linspace(w_offset, w_len - 1 + w_offset, steps=w_len, device=x.device,
                                       dtype=x.dtype).unsqueeze(0)
        return img, repeat(ids, "h w c -> b (h w) c", b=x.shape[0])

    def forward(self, x, timestep, context, y, guidance, control=None, transformer_options=None, **kwargs):
        from einops import rearrange

        bs, _, h_orig, w_orig = x.shape
        p = self.config.get("patch_size", 2)
        img, img_ids = self.process_img(x)
        img_tokens = img.shape[1]
        h = w = 0
        for ref in kwargs.get("ref_latents") or []:
            h_offset = w_offset = 0
            if ref.shape[-2] + h > ref.shape[-1] + w:
                w_offset = w
            else:
                h_offset = h
            kontext, kontext_ids = self.process_img(ref, index=1, h_offset=h_offset, w_offset=w_offset)
            img, img_ids = torch.cat([img, kontext], dim=1), torch.cat([img_ids, kontext_ids], dim=1)
            h, w = max(h, ref.shape[-2] + h_offset), max(w, ref.shape[-1] + w_offset)
        txt_ids = torch.zeros((bs, context.shape[1], 3), device=x.device, dtype=x.dtype)
        out = self.model(hidden_states=img, encoder_hidden_states=context, pooled_projections=y, timestep=timestep,
                         img_ids=img_ids, txt_ids=txt_ids,
                         guidance=guidance if self.config["guidance_embed"] else None).sample
        out = rearrange(out[:, :img_tokens], "b (h w) (c ph pw) -> b c (h ph) (w pw)",
                        h=(h_orig + p // 2) // p, w=(w_orig + p // 2) // p, ph=p, pw=p)
        return out[:, :, :h_orig, :w_orig]


def build(seed: int = 0, dtype: torch.dtype = torch.float32):
    """(Nunchaku FLUX stand-in, the tiny ComfyUI Flux whose layers it runs), both in ``dtype``: ComfyUI's
    model_base.Flux with its diffusion model replaced by the wrapper, as NunchakuFluxDiTLoader does."""
    flux = tiny_models.build_flux(seed, dtype=dtype)
    nunchaku = tiny_models.build_flux(seed, dtype=dtype)
    core = nunchaku.model.diffusion_model
    nunchaku.model.diffusion_model = ComfyFluxWrapper(NunchakuFluxTransformer2dModel(core),
                                                      {"patch_size": 2, "guidance_embed": True})
    return nunchaku, flux


#: The stand-in as a tiny family (tests/tiny_models.py): Flux.1's latent and conditioning.
FAMILY = tiny_models.TinyFamily("nunchaku_flux", lambda seed=0: build(seed)[0], tiny_models.FAMILIES["flux"].latent,
                                tiny_models.flux_cond)
