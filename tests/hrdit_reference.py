"""An independent float64 transcription of HRDiT's SPA and HAP (github zylwithxy/HRDiT at e4aa8c6), written from
reading hrdit/spa.py (``_phi``, ``build_bundle_id_variants``), hrdit/transformer.py (``FluxPosEmbed`` /
``get_1d_rotary_pos_embed``, the SPA variants' tables at ``ntk_factor=1.0``), hrdit/attention.py
(``apply_rotary_emb``, ``_spa_attention``, the proportional attention scale) and hrdit/hap.py (``mask_mod``,
``band_blocks``, ``prepare_mask``). It shares nothing with rope/spa.py or nodes/hap/.

Kept in the official code's own terms: integer ids and floor division for the bundles, ``.max().item()`` for the
bundle size, diffusers' [S, D] cos/sin tables repeat-interleaved over pairs, the mask evaluated one (query, key)
pair at a time with Python integers, softmax written out.
"""

from __future__ import annotations

import math

import torch

F64 = torch.float64
BLOCK = 64
ANCHOR_OFF = 1 << 30


# --- SPA -----------------------------------------------------------------------------------------------------

def phi(x: torch.Tensor, n1: int, size: int) -> torch.Tensor:
    """``_phi`` on integer ids: 0 below n1, else (x + 1 - n1 + size - 1) // size."""
    return torch.where(x < n1, torch.zeros_like(x), (x + 1 - n1 + size - 1) // size)


def bundle_id_variants(img_ids: torch.Tensor, group_num: int) -> list[torch.Tensor]:
    """``build_bundle_id_variants``: img_ids [T, 3], column 1 rows, column 2 columns."""
    rows, cols = img_ids[:, 1].long(), img_ids[:, 2].long()
    s_row = max(1, math.ceil(rows.max().item() / (group_num - 1)))
    s_col = max(1, math.ceil(cols.max().item() / (group_num - 1)))

    def variant(n1_row: int, n1_col: int) -> torch.Tensor:
        ids = img_ids.clone()
        ids[:, 1] = phi(rows, n1_row, s_row).to(img_ids.dtype)
        ids[:, 2] = phi(cols, n1_col, s_col).to(img_ids.dtype)
        return ids

    out = [variant(s_row, s_col)]
    out += [variant(n, s_col) for n in range(1, s_row)]
    out += [variant(s_row, m) for m in range(1, s_col)]
    return out


def image_ids(rows: int, cols: int) -> torch.Tensor:
    """diffusers' ``_prepare_latent_image_ids``: [rows*cols, 3], (0, row, col) in raster order."""
    ids = torch.zeros(rows, cols, 3, dtype=F64)
    ids[..., 1] += torch.arange(rows, dtype=F64)[:, None]
    ids[..., 2] += torch.arange(cols, dtype=F64)[None, :]
    return ids.reshape(rows * cols, 3)


def rope_cos_sin(ids: torch.Tensor, axes_dim: list[int], theta: float, ntk_factor: float = 1.0):
    """``FluxPosEmbed.forward``: per axis theta*ntk, freqs float64, cos/sin repeat-interleaved to [S, D]."""
    cos_out, sin_out = [], []
    for i, dim in enumerate(axes_dim):
        base = theta * ntk_factor
        freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=F64)[: dim // 2] / dim))
        angles = torch.outer(ids[:, i].to(F64), freqs)
        cos_out.append(angles.cos().repeat_interleave(2, dim=1))
        sin_out.append(angles.sin().repeat_interleave(2, dim=1))
    return torch.cat(cos_out, dim=-1), torch.cat(sin_out, dim=-1)


def apply_rotary(x: torch.Tensor, cos_sin) -> torch.Tensor:
    """``apply_rotary_emb`` (use_real, unbind dim -1): x [B, H, S, D], pairs interleaved."""
    cos, sin = cos_sin
    real, imag = x.reshape(*x.shape[:-1], -1, 2).unbind(-1)
    rotated = torch.stack([-imag, real], dim=-1).flatten(3)
    return x * cos[None, None] + rotated * sin[None, None]


def attention(q, k, v, scale: float, keep: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(q·kᵀ·scale) v in float64; ``keep`` (H, S, S) bool drops the other entries before the softmax."""
    logits = torch.einsum("bhqd,bhkd->bhqk", q.to(F64), k.to(F64)) * scale
    if keep is not None:
        logits = logits.masked_fill(~keep[None], float("-inf"))
    return torch.einsum("bhqk,bhkd->bhqd", logits.softmax(-1), v.to(F64))


def proportional_scale(tokens: int, head_dim: int, train_seq_len: int = 64 ** 2 + 512) -> float:
    """The stage processor's scale: sqrt(log_{train_seq_len}(key tokens) / head_dim)."""
    return math.sqrt(math.log(tokens, train_seq_len) / head_dim)


def spa_attention(q, k, v, tables, scale: float, keep: torch.Tensor | None = None) -> torch.Tensor:
    """``_spa_attention``: per variant rotate q and k, attend, sum the outputs in order, divide by the count."""
    total = None
    for table in tables:
        out = attention(apply_rotary(q, table), apply_rotary(k, table), v, scale, keep)
        total = out if total is None else total + out
    return total / len(tables)


# --- HAP -----------------------------------------------------------------------------------------------------

def band_blocks(alphas, betas, seq_len: int) -> list[int]:
    nbx = seq_len // BLOCK
    return [max(2 * int(a // BLOCK + b * nbx) - 1, 1) for a, b in zip(alphas, betas, strict=True)]


def hap_keep(seq_len: int, band: list[int], anchor_stride: int, text_len: int = 512) -> torch.Tensor:
    """``mask_mod`` of every (head, query, key), with Python integers (floor division and modulo as Python's)."""
    halves = [(int(x) - 1) // 2 for x in band]
    stride = anchor_stride if anchor_stride and anchor_stride > 0 else ANCHOR_OFF
    keep = torch.zeros(len(halves), seq_len, seq_len, dtype=torch.bool)
    for h, half in enumerate(halves):
        for q in range(seq_len):
            qb = (q - text_len) // BLOCK
            for k in range(seq_len):
                kb = (k - text_len) // BLOCK
                keep[h, q, k] = q < text_len or k < text_len or abs(qb - kb) <= half or kb % stride == 0
    return keep


def official_mask_mod(halves: list[int], anchor_stride: int, text_len: int = 512):
    """``HapRuntime.mask_mod`` as the official code hands it to ``create_block_mask``: tensors in, Python's ``//``
    and ``%`` on them, the head's half-width read from a per-head buffer (``half_buf[h]``)."""
    half_buf = torch.tensor(halves, dtype=torch.int32)
    stride = anchor_stride if anchor_stride and anchor_stride > 0 else ANCHOR_OFF

    def mask_mod(b, h, q, k):
        qb = (q - text_len) // BLOCK
        kb = (k - text_len) // BLOCK
        return (q < text_len) | (k < text_len) | ((qb - kb).abs() <= half_buf.to(q.device)[h]) | (kb % stride == 0)

    return mask_mod


def keep_rows(rows: torch.Tensor, seq_len: int, half: int, anchor_stride: int, text_len: int = 512) -> torch.Tensor:
    """(len(rows), seq_len) bool: ``official_mask_mod`` of one head for the query ``rows`` against every key."""
    keys = torch.arange(seq_len, device=rows.device)
    return official_mask_mod([half], anchor_stride, text_len)(0, 0, rows[:, None], keys[None])
