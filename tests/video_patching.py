"""What the video host tests share: the tiny video families' adapters and trained sizes, DyPE and SEGA as the nodes
apply them, and the rotary table rope/ prescribes for a video call (time keeps the model's RoPE)."""

from __future__ import annotations

import tiny_video
import torch
from patching import reference_table

FAMILIES = ["wan21", "wan22_5b", "hunyuan_video", "hunyuan_video15"]  # Wan I2V: its own tests below (detection, conditioning)
LONG_TOKENS = 8  # the tests' trained long side: 8 tokens; the short side follows the family's aspect
GRID = (8, 12)  # rows x cols tokens above it on both axes (scales 8/short and 12/8)


def _pack(name: str):
    import host

    return host.pack_submodule(name)


def adapter_of(fam: tiny_video.TinyVideo):
    return _pack("nodes.families").find_adapter(fam.adapter)


def long_px(fam: tiny_video.TinyVideo, tokens: float = LONG_TOKENS) -> float:
    return tokens * fam.px_per_token


def dype(model, base_px: float, **schedule):
    rope = _pack("rope")
    sched = rope.PositionSchedule(**schedule)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda config: config.with_positions(sched, base_px))


def sega(model, base_px: float = 0.0, **settings):
    """SEGA Attention; the "refined" recipe (the latent spectrum, per sample) unless a test asks for another."""
    spectral = _pack("spectral")
    settings.setdefault("recipe", "refined")
    values = spectral.SegaSettings(**settings)
    return _pack("nodes.rope_patch.clone").patch_model(model, lambda config: config.with_sega(values, base_px))


def pair_slices(fam: tiny_video.TinyVideo) -> list[slice]:
    bounds = [0]
    for dim in fam.axes_dim:
        bounds.append(bounds[-1] + dim // 2)
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def expected_table(fam, ids, sigma, grid, base_grid, temperatures=(None, None), **schedule) -> torch.Tensor:
    """rope/'s table for these ids at this sigma: time keeps the model's RoPE, rows/cols get the schedule."""
    return reference_table(fam.axes_dim, fam.theta, (1, 2), ids, sigma, grid, base_grid, temperatures,
                           **schedule).unsqueeze(1)


def trained_grid(fam, base_px: float, grid) -> tuple[float, float]:
    return adapter_of(fam).base_grid(base_px, grid)


def sega_temperatures(fam, x, sigma, base_px):
    """The per-pair temperatures SEGA prescribes for this call's latent (per sample, power averaged over frames)."""
    rope, spectral = _pack("rope"), _pack("spectral")
    settings = spectral.SegaSettings(recipe="refined")
    adapter = adapter_of(fam)
    grid = adapter.token_grid(x)
    base_grid = adapter.base_grid(base_px, grid)
    spectrum = spectral.latent_spectrum(x, adapter.patch_size, settings)
    temps = []
    for axis, key in enumerate(("h", "w")):
        dim = fam.axes_dim[axis + 1]
        scale = grid[axis] / base_grid[axis]
        freqs = rope.axis_frequencies(rope.PositionSchedule(), dim, fam.theta, scale, base_grid[axis],
                                      sigma.to(torch.float64))
        band, energy = getattr(spectrum, f"band_{key}"), getattr(spectrum, f"axis_{key}")
        if hasattr(spectral, "axis_temperatures"):  # the m_ref rule lives in the settings (newer spectral/)
            temps.append(spectral.axis_temperatures(freqs, band, energy, spectrum.spread, scale, settings,
                                                    spectrum.valid))
        else:
            temps.append(_pack("spectral.allocation").pair_temperatures(freqs, band, energy, spectrum.spread,
                                              spectral.reference_temperature(scale, settings.kappa), settings,
                                              spectrum.valid))
    return tuple(temps), grid, base_grid
