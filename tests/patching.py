"""What host tests share: the pack's modules, a tiny family or a skip naming what this host lacks, DyPE applied as the
node applies it, and the rotary table rope/ prescribes for a call (every table a patched model builds is checked
against it)."""

from __future__ import annotations

import pytest
import tiny_models
import torch

FAMILIES = ["flux", "qwen_image"]  # the full matrix of sampler/schedule/composition cases runs on these two
# Every supported family whose embedder takes ids: the per-family contract below (Anima's Cosmos module takes the
# latent's shape and has its own contract, test_anima_host.py).
ALL_FAMILIES = [name for name, fam in tiny_models.FAMILIES.items() if fam.ids_embedder]
BASE_TOKENS = 4  # trained grid of the tests: tiny latents of 8+ tokens per axis are then "above the trained size"
BASE_PX = BASE_TOKENS * 16  # for the 16-px-per-token families


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def host_family(name: str) -> tiny_models.TinyFamily:
    """The tiny family, or a skip saying what this host lacks for it (families of newer hosts)."""
    why = tiny_models.missing_on_this_host(name)
    if why:
        pytest.skip(f"{name} is not on this host: {why}")
    return tiny_models.FAMILIES[name]


def base_px(name: str, tokens: float = BASE_TOKENS) -> float:
    return tokens * tiny_models.FAMILIES[name].px_per_token


def dype(model, base_px: float = BASE_PX, **schedule):
    rope = _pack("rope")
    patch = _pack("nodes.rope_patch.clone")
    sched = rope.PositionSchedule(**schedule)
    return patch.patch_model(model, lambda config: config.with_positions(sched, base_px))


def pair_slices(fam: tiny_models.TinyFamily) -> list[slice]:
    """The pairs each id column owns in the table (columns are concatenated in order)."""
    bounds = [0]
    for dim in fam.axes_dim:
        bounds.append(bounds[-1] + dim // 2)
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def as_heads_first(fam: tiny_models.TinyFamily, pe: torch.Tensor) -> torch.Tensor:
    """(B, 1, N, pairs, 2, 2) whatever the family's layout."""
    return pe.movedim(2, 1) if fam.tokens_first else pe


def expected_table(ids: torch.Tensor, sigma: torch.Tensor, grid: tuple[int, int], base_tokens: float,
                   fam: tiny_models.TinyFamily | None = None, temperatures=None, **schedule):
    """The table rope/ prescribes for these ids at this sigma, in the family's layout: the spatial columns get the
    schedule (every token on them, text included), every other column the family's plain RoPE."""
    fam = fam or tiny_models.FAMILIES["flux"]
    table = reference_table(fam.axes_dim, fam.theta, fam.spatial, ids, sigma, grid, (base_tokens, base_tokens),
                            temperatures, **schedule)
    return table.unsqueeze(2 if fam.tokens_first else 1)


def reference_table(axes_dim, theta: float, spatial: tuple[int, int], ids: torch.Tensor, sigma: torch.Tensor,
                    grid, base_grid, temperatures=None, **schedule) -> torch.Tensor:
    """rope/'s (B, N, pairs, 2, 2) table: the ``spatial`` (row, col) id columns get the schedule for ``grid`` over
    ``base_grid`` tokens (YaRN's temperature, or ``temperatures[axis]`` where given; plain RoPE at or below scale 1),
    every other column plain RoPE at ``theta`` (image and video tests share it)."""
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    parts = []
    for column, dim in enumerate(axes_dim):
        plain = rope.plain_frequencies(dim, theta)[None]
        if column not in spatial:
            parts.append(rope.rotation_table(ids[..., column], plain))
            continue
        axis = spatial.index(column)
        scale = grid[axis] / base_grid[axis]
        freqs = rope.axis_frequencies(sched, dim, theta, scale, base_grid[axis], sigma.to(torch.float64))
        temperature = None if temperatures is None else temperatures[axis]
        if temperature is None and sched.method == "yarn" and scale > 1:
            temperature = torch.full((1, dim // 2), rope.yarn_temperature(scale), dtype=torch.float64)
        if scale <= 1:
            freqs, temperature = plain, None
        parts.append(rope.rotation_table(ids[..., column], freqs, temperature))
    batch = max(p.shape[0] for p in parts)
    return torch.cat([p.expand(batch, *p.shape[1:]) for p in parts], dim=-3)


def check_tables(fam, calls, grid, base_tokens, **schedule):
    """Every table the embedder returned in every model call is rope/'s table for that call's live sigma."""
    for call in calls:
        assert call.tables  # Lumina on newer hosts embeds caption and image in separate calls: all are checked
        for ids, pe in call.tables:
            n = ids.shape[1]
            assert pe.dtype == torch.float32
            assert as_heads_first(fam, pe).shape[:3] == (call.sigma.shape[0], 1, n)
            assert torch.equal(pe, expected_table(ids, call.sigma, grid, base_tokens, fam, **schedule))
