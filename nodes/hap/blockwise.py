"""HAP's exact attention without FlexAttention: each chunk of image queries attends only the keys HAP keeps.

An image query's kept keys depend only on its 64-token block (masks.py): the text, the band of blocks within the
head's half-width, and the anchor blocks. For a chunk of c whole query blocks the union of those is the text, one
contiguous span of blocks (the chunk's blocks ± the half-width) and the anchor blocks outside that span; a small
mask (the chunk's rows x the span's keys, from a c x (c + 2·half) table of blocks) drops what one query block of the
chunk does not keep. Text queries attend every key, unmasked. Heads are grouped by half-width. So the work is the
kept entries plus the chunk's band edges, and nothing is ever as wide as tokens x tokens: memory per chunk is its
mask (at most ``MASK_ENTRIES``) and its gathered keys.

The attention of each piece is ``attend(q, k, v, mask, scale) -> (B, H, n, D)``, ``mask`` None or a boolean
(1, 1, n, keys) tensor, True where a query attends a key; the default is PyTorch's SDPA. It is a parameter so the
host's attention backend can be passed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ...spectral.shape_cache import TABLES
from .masks import stride_of
from .scope_plan import BLOCK

Attend = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, "torch.Tensor | None", "float | None"], torch.Tensor]
MASK_ENTRIES = 1 << 22  # query rows x keys of one chunk's mask, at most (unless one block alone is wider)


def sdpa_attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                scale: float | None) -> torch.Tensor:
    """The default ``attend``: PyTorch's scaled dot-product attention (a boolean mask keeps where True)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


@dataclasses.dataclass(frozen=True)
class Chunk:
    """Query rows [rows) attend the text, the keys [span), and the anchor list's tokens but [anchors) (those lie in
    the span), through ``keep`` ((blocks of rows, blocks of span) bool; None: every one of those keys)."""

    rows: tuple[int, int]
    span: tuple[int, int]
    anchors: tuple[int, int]
    keep: torch.Tensor | None


def blocks_per_chunk(text: int, blocks: int, half: int, anchor_blocks: int) -> int:
    """The most query blocks a chunk takes: at most 2·half + 1 (its span stays under twice the band), and a mask
    within ``MASK_ENTRIES``."""
    chunk = max(1, min(2 * half + 1, blocks))
    while chunk > 1 and chunk * BLOCK * (text + BLOCK * (chunk + 2 * half + anchor_blocks)) > MASK_ENTRIES:
        chunk -= 1
    return chunk


def chunk_plan(tokens: int, text: int, half: int, anchor: int, device: torch.device) -> tuple:
    """(the anchor blocks' tokens, *the chunks' keep tables, the chunks) of one half-width: tensors first (the
    shape cache counts them). Built once per shape on the CPU, then moved."""
    blocks = -(-(tokens - text) // BLOCK)
    stride = stride_of(anchor)
    anchors = torch.arange(0, blocks, stride)
    anchor_tokens = (text + BLOCK * anchors[:, None] + torch.arange(BLOCK)[None]).flatten()
    anchor_tokens = anchor_tokens[anchor_tokens < tokens]
    size = blocks_per_chunk(text, blocks, half, anchors.numel())

    def token(block: int) -> int:
        return min(text + BLOCK * block, tokens)

    def anchor_token(block: int) -> int:  # where the anchors from block on start in anchor_tokens
        return min(BLOCK * -(-block // stride), anchor_tokens.numel())

    chunks = []
    for start in range(0, blocks, size):
        stop = min(start + size, blocks)
        low, high = max(0, start - half), min(blocks, stop + half)
        query, key = torch.arange(start, stop)[:, None], torch.arange(low, high)[None]
        keep = ((query - key).abs() <= half) | (torch.remainder(key, stride) == 0)
        chunks.append(Chunk((token(start), token(stop)), (token(low), token(high)),
                            (anchor_token(low), anchor_token(high)), None if bool(keep.all()) else keep.to(device)))
    return (anchor_tokens.to(device), *[c.keep for c in chunks if c.keep is not None], tuple(chunks))


def _keys(t: torch.Tensor, text: int, chunk: Chunk, anchored: torch.Tensor) -> torch.Tensor:
    a_low, a_high = chunk.anchors
    return torch.cat([t[:, :, :text], t[:, :, chunk.span[0]:chunk.span[1]], anchored[:, :, :a_low],
                      anchored[:, :, a_high:]], dim=2)


def _mask(chunk: Chunk, text: int, anchor_keys: int) -> torch.Tensor | None:
    if chunk.keep is None:
        return None
    rows, span = chunk.rows[1] - chunk.rows[0], chunk.span[1] - chunk.span[0]
    band = chunk.keep.repeat_interleave(BLOCK, 0)[:rows].repeat_interleave(BLOCK, 1)[:, :span]
    return F.pad(band, (text, anchor_keys), value=True)[None, None]


def masked_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, text: int, half: tuple[int, ...],
                     anchor: int, scale: float | None, attend: Attend | None = None) -> torch.Tensor:
    """(B, H, N, D) attention of q over the keys HAP keeps (text first, ``half`` per head), blockwise."""
    attend = attend or sdpa_attend
    batch, heads, tokens, _ = q.shape
    out = q.new_empty(batch, heads, tokens, v.shape[-1])
    if text:
        out[:, :, :text] = attend(q[:, :, :text], k, v, None, scale)
    if tokens == text:
        return out
    groups: dict[int, list[int]] = {}
    for head, width in enumerate(half):
        groups.setdefault(width, []).append(head)
    for width, members in groups.items():
        index = None if len(members) == heads else TABLES.get(
            ("hap_heads", tuple(members), q.device), lambda m=members: torch.tensor(m, device=q.device))
        qs, ks, vs = (t if index is None else t.index_select(1, index) for t in (q, k, v))
        key = ("hap_chunks", tokens, text, width, anchor, q.device)
        plan = TABLES.get(key, lambda w=width: chunk_plan(tokens, text, w, anchor, q.device))
        anchor_tokens, chunks = plan[0], plan[-1]
        k_anchor, v_anchor = ks.index_select(2, anchor_tokens), vs.index_select(2, anchor_tokens)
        for chunk in chunks:
            outside = anchor_tokens.numel() - (chunk.anchors[1] - chunk.anchors[0])
            result = attend(qs[:, :, chunk.rows[0]:chunk.rows[1]], _keys(ks, text, chunk, k_anchor),
                            _keys(vs, text, chunk, v_anchor), _mask(chunk, text, outside), scale)
            if index is None:
                out[:, :, chunk.rows[0]:chunk.rows[1]] = result
            else:
                out[:, index, chunk.rows[0]:chunk.rows[1]] = result
    return out
