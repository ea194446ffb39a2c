"""The replacement RoPE embedder: an ``nn.Module`` (ComfyUI's object patches must be modules) that holds only the
original embedder. Everything that changes per clone, step or call reaches it through ``runtime.CALL``.

Fast path, exact by construction: when the ids of a call are integers inside a window ``[-r, r]`` (Flux, Qwen and
the other image families number their tokens that way), cos/sin are evaluated once per window position and axis
and every token's entries are gathered: the same float64 angles and float32 roundings as evaluating every token,
so the same bits, for 256 + 512 text rows of trig instead of 66k tokens at 4096². Whether the ids *are* in the
window is never assumed: the first call of each ids signature in a run (ids_check.ids_signature: input shapes,
``rope_options``, patches) uses the stock formula and flags, on the device, whether the window would have held;
only once the host has that verdict do later calls of the signature gather. Non-integer ids (``rope_options``
scale/shift, a node that rewrites ids) therefore always get the stock formula, bit for bit; ids that move after
the check are caught as ids_check.py describes. A table that carries a gradient is never gathered.
"""

from __future__ import annotations

import torch

from ..rope import gather_tables, plain_frequencies, rotation_table, window_index, window_positions, window_radius
from .errors import concurrent_sampling_error
from .ids_check import WindowFlag, reads_free
from .runtime import CALL, AxisSchedule, CallScope, math_device

#: The window path pays off while the window (2r + 1 positions) is well below the token count.
MIN_TOKENS_PER_WINDOW_POSITION = 4


class ExtrapolatingRopeEmbedder(torch.nn.Module):
    """Stands in for ``EmbedND`` (or HiDream's copy, which has no ``dim``); outside a patched call (or at/below the
    trained grid) it *is* the original."""

    def __init__(self, original: torch.nn.Module) -> None:
        super().__init__()
        self.original = original
        self.theta = original.theta
        self.axes_dim = list(original.axes_dim)
        if hasattr(original, "dim"):
            self.dim = original.dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        scope = CALL.get()
        if scope is None:
            return self.original(ids)
        if scope.embedder is not self:
            if getattr(scope.embedder, "original", None) is self.original:
                # Another clone's replacement of the same module took its place in the middle of this call.
                raise concurrent_sampling_error("base", "the RoPE embedder", "another clone's DyPE/SEGA embedder")
            return self.original(ids)  # an embedder of another model called inside this one's call
        if ids.shape[0] == 1 and scope.batch > 1:  # one ids row for the call's samples (Lumina's caption on newer
            ids = ids.expand(scope.batch, *ids.shape[1:])  # hosts): one table row per sample, as for a batch of ids
        radius = _window(ids, scope)
        if radius is None:
            return embed_ids(ids, self.axes_dim, float(self.theta), scope.axes, scope.pe_unsqueeze_dim, scope.device)
        key = (len(scope.window_flags), tuple(ids.shape[1:]), ids.dtype)  # this table's place in the call
        gather = scope.verdicts.get(key) is True
        table, flag = embed_ids_checked(ids, self.axes_dim, float(self.theta), scope.axes, radius, gather,
                                        scope.pe_unsqueeze_dim, scope.device)
        scope.window_flags.append((key, flag))
        return table


def _window(ids: torch.Tensor, scope: CallScope) -> int | None:
    """The window radius to check (and, once checked, gather from), or None where it cannot pay off."""
    if scope.verdicts is None or scope.grid is None or ids.dim() != 3:
        return None
    radius = window_radius(ids.shape[-2], scope.grid)
    if MIN_TOKENS_PER_WINDOW_POSITION * (2 * radius + 1) > ids.shape[-2]:
        return None
    return radius


def describe_module(module: object) -> str:
    return f"{type(module).__module__}.{type(module).__qualname__}"


def is_stock_rope_embedder(module: object, spatial_axes: tuple[int, ...]) -> bool:
    """ComfyUI's own EmbedND-style module (its class defined in ``comfy.*``) with theta and the spatial axes.

    Any other class is another node's RoPE replacement: its table is not a function of theta/axes_dim we can
    rebuild, so building ours in its place would silently drop its effect.
    """
    axes_dim = getattr(module, "axes_dim", None)
    return (
        isinstance(module, torch.nn.Module)
        and type(module).__module__.split(".")[0] == "comfy"
        and getattr(module, "theta", None) is not None
        and axes_dim is not None
        and len(axes_dim) > max(spatial_axes)
    )


def _schedules(axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...], device: torch.device,
               batch: int | None = None) -> list:
    """Per id column: (float64 freqs (B_f, pairs), temperature or None). With ``batch``, schedules of B rows for a
    call of k * B rows (a step's schedule on a CFG batch or concatenated conds) are repeated to ``batch`` rows."""
    by_column = {axis.column: axis for axis in spatial}
    schedules = []
    for column, dim in enumerate(axes_dim):
        axis = by_column.get(column)
        if axis is None:
            schedules.append((plain_frequencies(dim, theta, device)[None], None))
            continue
        freqs = axis.freqs.to(device)
        temperature = None if axis.temperature is None else axis.temperature.to(device)
        if batch is not None:
            freqs, temperature = _rows(freqs, batch), None if temperature is None else _rows(temperature, batch)
        schedules.append((freqs, temperature))
    return schedules


def _rows(value: torch.Tensor, batch: int) -> torch.Tensor:
    """``value`` (R, ...) for ``batch`` rows: as is when R is 1 or ``batch`` (broadcast) or does not divide it
    (broadcasting then decides, as for any schedule), else repeated (row j is row j mod R, calc_cond_batch's order)."""
    rows = value.shape[0]
    if rows in (1, batch) or batch % rows:
        return value
    return value.repeat(batch // rows, *([1] * (value.dim() - 1)))


def embed_ids(ids: torch.Tensor, axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...],
              unsqueeze_dim: int = 1, device: torch.device | None = None) -> torch.Tensor:
    """The family's pe layout, float32, with the spatial axes' schedules applied to every token on those columns.

    ``ids`` is (B, N, n_columns) in any dtype; the table is (B, N, pairs, 2, 2) with ``unsqueeze_dim`` inserted:
    1 gives EmbedND's (B, 1, N, pairs, 2, 2), 2 HiDream's (B, N, 1, pairs, 2, 2). Every token's cos/sin evaluated
    (the stock formula).
    """
    device = device or math_device(ids.device)
    schedules = _schedules(axes_dim, theta, spatial, device, ids.shape[0])
    tables = [rotation_table(ids[..., column].to(device), freqs, temperature)
              for column, (freqs, temperature) in enumerate(schedules)]
    batch = max(table.shape[0] for table in tables)
    table = torch.cat([t.expand(batch, *t.shape[1:]) for t in tables], dim=-3)
    return table.unsqueeze(unsqueeze_dim).to(ids.device)


def embed_ids_checked(ids: torch.Tensor, axes_dim: list[int], theta: float, spatial: tuple[AxisSchedule, ...],
                      radius: int, gather: bool, unsqueeze_dim: int = 1,
                      device: torch.device | None = None) -> tuple[torch.Tensor, WindowFlag]:
    """``embed_ids``' table and what was done: the 0-d bool device flag "some id is not an integer in
    ``[-radius, radius]``", whether the table was gathered, whether ids moved (ids_check.py).

    With ``gather`` the table is gathered from cos/sin at the window positions (bit-identical when the flag is
    false) unless that cannot be exact or would change the gradient:
    * the flag is readable for free (a CPU flag, eager) and says an id missed: the stock formula instead;
    * the table carries a gradient (grad enabled, a schedule or the ids require grad: SEGA's temperatures of a
      latent that requires grad): the stock formula, so the gradient is the per-token formula's, bit for bit.
    Without ``gather`` it is ``embed_ids``' (the stock formula, exact always).
    """
    device = device or math_device(ids.device)
    schedules = _schedules(axes_dim, theta, spatial, device)
    on_device = ids.to(device)
    indices, misses = zip(*(window_index(on_device[..., column], radius) for column in range(len(schedules))),
                          strict=True)
    missed = torch.stack(misses).any()
    if gather and _carries_gradient(ids, schedules):
        gather = False
    verified = moved = False
    if gather and reads_free(missed):
        moved = bool(missed)
        verified = not moved
    if not gather or moved:
        return embed_ids(ids, axes_dim, theta, spatial, unsqueeze_dim, device), WindowFlag(missed, False, moved)
    window = window_positions(radius, device)
    parts = [(rotation_table(window, freqs, temperature), index)
             for (freqs, temperature), index in zip(schedules, indices, strict=True)]
    table = gather_tables(parts).unsqueeze(unsqueeze_dim).to(ids.device)
    return table, WindowFlag(missed, True, False, verified)


def _carries_gradient(ids: torch.Tensor, schedules: list) -> bool:
    """The table would be part of an autograd graph (metadata only: no tensor value is read)."""
    if not torch.is_grad_enabled():
        return False
    tensors = [ids] + [t for pair in schedules for t in pair if t is not None]
    return any(t.requires_grad for t in tensors)
