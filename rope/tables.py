"""Rotation tables from positions, per-pair frequencies and per-pair attention temperatures.

The layout is the one ComfyUI's ``EmbedND`` returns: ``(..., N, pairs, 2, 2)`` float32 rotation matrices
``[[cos, -sin], [sin, cos]]``, rotating interleaved channel pairs. Angles are float64; cos/sin are rounded to
float32 and *then* multiplied by the temperature in float32, which is bit-for-bit what the official DyPE code does.

Where positions are integers in a known window, ``gather_tables`` builds the same table from cos/sin evaluated once
per window position and axis (the same float64 angles and float32 roundings, so the same bits) for a fraction of the
trig; ``window_index`` says, on the device, whether that premise held. The gather is differentiable (autograd
reaches the window tables through it), though its gradient sums per window position, so a caller wanting the stock
formula's gradient bit for bit builds that table per token instead.
"""

from __future__ import annotations

import torch


def rotation_table(
    positions: torch.Tensor,
    freqs: torch.Tensor,
    temperature: torch.Tensor | None = None,
) -> torch.Tensor:
    """Build the rotation table of one axis.

    Args:
        positions: ``(B_p, N)`` token positions on this axis (any real dtype; used in float64).
        freqs: ``(B_f, pairs)`` float64 angular frequencies (B_f broadcasts against B_p).
        temperature: optional ``(B_f, pairs)`` factor applied to cos and sin (so q.k of the pair scales by its
            square); ``None`` means 1 and skips the multiply, keeping plain RoPE bit-exact.

    Returns:
        ``(B, N, pairs, 2, 2)`` float32 with ``B = max(B_p, B_f)``.
    """
    angles = positions.to(torch.float64)[..., :, None] * freqs.to(torch.float64)[..., None, :]
    cos = torch.cos(angles).to(torch.float32)
    sin = torch.sin(angles).to(torch.float32)
    if temperature is not None:
        temp = temperature.to(torch.float32)[..., None, :]
        cos = cos * temp
        sin = sin * temp
    return torch.stack((cos, -sin, sin, cos), dim=-1).unflatten(-1, (2, 2))


def window_radius(n_tokens: int, grid: tuple[int, int]) -> int:
    """Half-width of an integer window that holds every position of a sequence built on a ``grid`` of tokens when
    the other ``n_tokens - rows * cols`` tokens (text, references) run on from or around it. A guess to be
    checked (``window_index``), never trusted: ids outside it are reported, not assumed away."""
    rows, cols = grid
    return max(rows, cols) + max(n_tokens - rows * cols, 0)


def window_positions(radius: int, device: torch.device | None = None) -> torch.Tensor:
    """The integer positions ``-radius .. radius`` as a ``(1, 2 radius + 1)`` float64 row."""
    return torch.arange(-radius, radius + 1, dtype=torch.float64, device=device)[None]


def window_index(positions: torch.Tensor, radius: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Where each position sits in ``window_positions(radius)``, and whether some position is not there.

    Returns ``(index, missed)``: int64 ``index`` shaped like ``positions``, clamped into the window so it is always
    safe to gather with, and a 0-d bool ``missed``, true when some position is not an integer in
    ``[-radius, radius]`` (NaN included). Computed where ``positions`` are: no host sync.
    """
    shifted = positions.to(torch.float64) + radius
    index = shifted.nan_to_num(0.0).clamp(0, 2 * radius).to(torch.int64)
    missed = (index.to(torch.float64) != shifted).any()
    return index, missed


def gather_tables(parts: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """Fill the ``(B, N, pairs, 2, 2)`` table of all axes from per-axis window tables, writing it once, contiguous.

    Args:
        parts: per axis, in pair order, ``(window_table, index)``: the ``(B_t, K, pairs_a, 2, 2)`` table of the
            axis at its window positions (``B_t`` rows; row b of the table uses window row ``b mod B_t``, so 1
            broadcasts) and the ``(B_i, N)`` int64 window index of every token (``B_i`` is 1 or B).

    Returns:
        float32 ``(B, N, sum pairs_a, 2, 2)``; entry ``[b, n]`` of axis ``a`` is
        ``window_table[b mod B_t, index[b or 0, n]]``.
    """
    batch = max(max(table.shape[0], index.shape[0]) for table, index in parts)
    tokens = parts[0][1].shape[1]
    columns = []
    for table, index in parts:
        windows, width = table.shape[0], table.shape[1]
        rows = table.reshape(windows * width, -1)  # one row of pairs_a * 4 floats per (sample, window position)
        index = index.expand(batch, tokens)
        if windows > 1:  # sample b reads window table b mod B_t (B_t divides B: calc_cond_batch's row order)
            index = index + (torch.arange(batch, device=index.device) % windows)[:, None] * width
        columns.append((rows, index.reshape(-1)))
    total = sum(rows.shape[1] for rows, _ in columns)
    # out= into a view is eager-only and refused by autograd: the compiler fuses the concatenation, and a table
    # that carries a gradient (SEGA's temperatures of a latent that requires grad) takes the differentiable ops.
    differentiable = torch.is_grad_enabled() and any(rows.requires_grad for rows, _ in columns)
    if differentiable or torch.compiler.is_compiling():
        flat = torch.cat([torch.index_select(rows, 0, index) for rows, index in columns], dim=1)
    else:
        flat = torch.empty(batch * tokens, total, dtype=columns[0][0].dtype, device=columns[0][0].device)
        start = 0
        for rows, index in columns:
            torch.index_select(rows, 0, index, out=flat[:, start : start + rows.shape[1]])
            start += rows.shape[1]
    return flat.view(batch, tokens, total // 4, 2, 2)
