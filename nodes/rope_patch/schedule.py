"""The schedule of one model call: per spatial axis, float64 frequencies and (SEGA's or YaRN's) temperatures, from
the clone's config, the family, the latent's grid and the live sigma. What each axis does is planned in
axis_plan.py; SEGA's spectrum comes from spectrum.py; the embedder turns the result into its table (tables.py)."""

from __future__ import annotations

import torch

from ..families import FamilyAdapter
from .axis_plan import AxisPlan, axis_rules, plan_call
from .config import LABEL_SCHEDULE, PatchConfig
from .devices import math_device
from .scopes import AxisSchedule, CallScope, StepScope, current_run
from .spectrum import call_spectrum


def build_call_scope(
    config: PatchConfig,
    adapter: FamilyAdapter,
    embedder: torch.nn.Module,
    x: torch.Tensor,
    sigma: torch.Tensor,
    step: StepScope | None = None,
    base_model=None,
) -> CallScope | None:
    """The schedule for one model call, or None when nothing is above the trained grid (exact stock behaviour).

    Inside a sampler step, for a call whose rows are whole copies of the step's samples (calc_cond_batch
    concatenates one copy per cond: row j is sample j mod B), the schedule is the step's, built once on the first
    B rows and shared: its AxisSchedules then have B rows, which the embedder maps onto the call's rows.
    ``base_model`` is the BaseModel being sampled (SEGA's "paper" spectrum embeds the latent with its layer; inside
    a step the step's model is used).
    """
    grid = adapter.token_grid(x)
    plans = plan_call(config, adapter, grid)
    if plans is None:
        return None
    with torch.profiler.record_function(LABEL_SCHEDULE):
        return _call_scope(config, adapter, embedder, x, sigma, step, base_model, plans)


def _call_scope(config: PatchConfig, adapter: FamilyAdapter, embedder: torch.nn.Module, x: torch.Tensor,
                sigma: torch.Tensor, step: StepScope | None, base_model,
                plans: tuple[AxisPlan, ...]) -> CallScope:
    device = math_device(x.device)
    scope = dict(embedder=embedder, pe_unsqueeze_dim=adapter.pe_unsqueeze_dim, math_device=device, batch=x.shape[0],
                 table_batch=adapter.table_batch, family=adapter.display_name)
    samples = None if step is None else step.x_in.shape[0]
    if samples is None or step.x_in.shape[1:] != x.shape[1:] or x.shape[0] % samples or sigma.numel() != x.shape[0]:
        axes = _axis_schedules(config, adapter, embedder, x, sigma, plans, step, base_model)
        return CallScope(axes=axes, **scope)
    key = (config, embedder, tuple(x.shape[1:]), x.device)
    axes = step.schedules.get(key)
    if axes is None:  # two threads may both build it (same values); the first one stored is kept
        axes = _axis_schedules(config, adapter, embedder, x[:samples], sigma.reshape(-1)[:samples], plans, step,
                               base_model)
        axes = step.schedules.setdefault(key, axes)
    return CallScope(axes=axes, **scope)


def _axis_schedules(config: PatchConfig, adapter: FamilyAdapter, embedder: torch.nn.Module, x: torch.Tensor,
                    sigma: torch.Tensor, plans: tuple[AxisPlan, ...], step: StepScope | None,
                    base_model=None) -> tuple[AxisSchedule, ...]:
    """Frequencies (and SEGA's or YaRN's temperatures) of each spatial axis for the rows of ``x``."""
    theta = float(embedder.theta)
    device = math_device(x.device)
    t = sigma.detach().to(device=device, dtype=torch.float64).reshape(-1)  # flow time = sigma, clamped in rope/

    spectrum = None
    sega = config.sega
    if sega is not None:
        spectrum = call_spectrum(x, sigma, adapter, sega, step, base_model)
        run = current_run(step)
        if run is not None:
            run.fallback_flags.append(~spectrum.valid)

    rules = axis_rules(config, plans, embedder.axes_dim, theta, t, spectrum, device)
    return tuple(AxisSchedule(plan.column, freqs, temperature)
                 for plan, (freqs, temperature) in zip(plans, rules, strict=True))
