"""Fault matrix rows: the embedder's window fast path under autograd, and ids that move between calls (CPU and device flags)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest
import torch
from patching import _pack

from .lab import (
    Lab,
    dype,
    row,
    sample_with,
    sega,
)

FAST_HW = (64, 48)  # 32 x 24 tokens: the window pays off, so the calls after each signature's first one gather


@contextlib.contextmanager
def stock_formula_only() -> Iterator[None]:
    """Every table by the stock formula (each token's own cos/sin): the embedder's window path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_pack("nodes.rope_patch.embedder"), "MIN_TOKENS_PER_WINDOW_POSITION", 10**9)
        yield


@contextlib.contextmanager
def counted_gathers() -> Iterator[list]:
    """Count the embedder's window gathers (the fast path) while still running them."""
    tables = _pack("nodes.rope_patch.tables")
    real, counted = tables.gather_tables, []

    def gather(parts):
        counted.append(len(parts))
        return real(parts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tables, "gather_tables", gather)
        yield counted


@row("SEGA with uni_pc / uni_pc_bh2 under grad mode (a script calling comfy.sample; 0.3.75 runs uni_pc outside "
     "no_grad, so the latent requires grad after the first step)",
     "the stock formula's result bit for bit: a table that carries a gradient is built per token, never gathered")
def row_uni_pc_with_grad(lab: Lab) -> None:
    model = sega(dype(lab.model))
    for sampler in ("uni_pc", "uni_pc_bh2"):
        with torch.enable_grad():
            fast = sample_with(model, "flux", FAST_HW, steps=3, cfg=1.0, sampler=sampler)
            with stock_formula_only():
                stock = sample_with(model, "flux", FAST_HW, steps=3, cfg=1.0, sampler=sampler)
        assert torch.equal(fast, stock) and fast.requires_grad == stock.requires_grad


def sample_gradient_guided(model, x, sigmas, extra_args=None, callback=None, disable=None):
    """A gradient-guidance sampler as guidance nodes write one: under grad mode, with the latent requiring grad on
    purpose, the model's forward is recorded for autograd and each denoised estimate is moved down the gradient of a
    guidance loss with respect to the latent. The loss here is of the latent alone: ComfyUI's Flux itself cannot be
    differentiated (in-place adds on 0.3.75; comfy-kitchen's apply_rope has no autograd formula on 0.30), stock or
    patched; the gradient through our tables is checked in tests/test_embedder_fast_path.py."""
    extra_args = extra_args or {}
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        with torch.enable_grad():
            x_in = x.detach().requires_grad_(True)
            denoised = model(x_in, sigmas[i] * s_in, **extra_args)
            assert denoised.requires_grad  # the forward was recorded: every table of it saw grad mode
            (grad,) = torch.autograd.grad((x_in - denoised.detach()).square().mean(), x_in)
        denoised = denoised.detach() - 0.5 * grad
        x = x + (x - denoised) / sigmas[i] * (sigmas[i + 1] - sigmas[i])
    return x


@row("a gradient-guidance sampler (grad mode, the latent requires grad on purpose), DyPE and DyPE + SEGA",
     "the stock formula's result bit for bit: DyPE's tables (no gradient) are gathered; so are SEGA's under the "
     "reference recipes paper and port, whose spectrum carries no gradient (both codes compute it under no_grad); "
     "under refined (a gradient through the temperatures, from that latent's spectrum) they are built per token, so "
     "their gradient is the stock formula's")
def row_gradient_guidance(lab: Lab) -> None:
    import comfy.sample
    import comfy.samplers

    sampler = comfy.samplers.KSAMPLER(sample_gradient_guided)
    latent = lab.fam.latent(1, *FAST_HW)
    noise = torch.randn(latent.shape, generator=torch.Generator().manual_seed(0))
    sigmas = comfy.samplers.calculate_sigmas(lab.model.get_model_object("model_sampling"), "simple", 3)

    def run(model):
        return comfy.sample.sample_custom(model, noise, 1.0, sampler, sigmas, lab.fam.cond(7, 1), lab.fam.cond(7, 2),
                                          latent, disable_pbar=True, seed=0)

    for model, gathers_expected in ((dype(lab.model), True), (sega(dype(lab.model), recipe="refined (ours)"), False),
                                    (sega(dype(lab.model), recipe="paper (official SEGA code)"), True),
                                    (sega(dype(lab.model), recipe="diffusers port"), True)):
        with counted_gathers() as gathers:
            fast = run(model)
        with stock_formula_only():
            stock = run(model)
        assert torch.equal(fast, stock) and torch.isfinite(fast).all()
        assert bool(gathers) == gathers_expected, gathers


class ShiftFromSecondCall:
    """A DIFFUSION_MODEL wrapper standing for a node that moves positions differently from call to call: Flux's
    ``rope_options`` shift_y = 500 from its second call on (``calls`` = 0 starts over)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, executor, x, timestep, context, y, guidance, ref_latents, control, transformer_options,
                 **kwargs):
        self.calls += 1
        if self.calls > 1:
            transformer_options = {**transformer_options, "rope_options": {"shift_y": 500.0}}
        return executor(x, timestep, context, y, guidance, ref_latents, control, transformer_options, **kwargs)


def moving_ids(model) -> tuple:
    import comfy.patcher_extension as ext

    mover = ShiftFromSecondCall()
    clone = model.clone()
    clone.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "tests_move", mover)
    return clone, mover


def _moved_reference(lab: Lab, steps: int) -> torch.Tensor:
    with stock_formula_only():
        model, _ = moving_ids(dype(lab.model))
        return sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0)


@row("a node moving RoPE positions differently from call to call (a DIFFUSION_MODEL wrapper: rope_options shift_y "
     "500 from its second call on), the flag readable before the gather (CPU)",
     "detected before gathering: those calls use the stock formula, the result is the stock formula's bit for bit")
def row_moving_ids_in_time(lab: Lab) -> None:
    model, _ = moving_ids(dype(lab.model))
    with counted_gathers() as gathers:
        out = sample_with(model, "flux", FAST_HW, steps=4, cfg=1.0)
    assert torch.equal(out, _moved_reference(lab, 4)) and gathers == []
    assert not model.model_options["transformer_options"][_pack("nodes.rope_patch.ids_check").HISTORY_KEY].moved


class FakeCudaEvent:
    """The part of torch.cuda.Event the pack uses (``query``), on the CPU: true from query number ``polls`` + 1 on
    (never when None), as a flag copied from the GPU lands some calls later or after the run."""

    def __init__(self, polls: int | None) -> None:
        self.polls = polls

    def query(self) -> bool:
        if self.polls is None:
            return False
        self.polls -= 1
        return self.polls < 0


@contextlib.contextmanager
def flags_on_a_device(polls: Callable[[int], int | None] | None) -> Iterator[None]:
    """Run the CUDA path on the CPU: no flag is read before a gather; with ``polls``, flag number n reaches the host
    at its (polls(n) + 1)-th poll (None: never), as CUDA's non-blocking copy and event do."""
    tables, ids_check = _pack("nodes.rope_patch.tables"), _pack("nodes.rope_patch.ids_check")
    sent: list = []

    def send(flag):
        polls_left = polls(len(sent))
        sent.append(flag)
        return ids_check.HostFlag(flag, flag.clone(), FakeCudaEvent(polls_left))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tables, "reads_free", lambda flag: False)
        if polls is not None:
            patch.setattr(ids_check, "send_to_host", send)
        yield


@row("the same moving node, the flag on the device (CUDA: never read before the gather; run on the CPU by the "
     "same code with the copy's arrival simulated): it arrives after the call, at a later call, after the run",
     "WindowMissError (what moved, the likely node named, how to get the exact result), raised when the flag "
     "arrives; no result is returned; queued again, the same model gives the stock formula's result bit for bit")
def row_moving_ids_on_a_device(lab: Lab) -> None:
    errors, ids_check = _pack("nodes.rope_patch.errors"), _pack("nodes.rope_patch.ids_check")
    steps = 5
    reference = _moved_reference(lab, steps)
    arrivals = {"after the call": None, "at a later call": lambda n: 1, "after the run": lambda n: 0 if n == 0 else None}
    for when, polls in arrivals.items():
        model, mover = moving_ids(dype(lab.model))
        calls_at_error = []

        def count_calls(step, *_, mover=mover, calls_at_error=calls_at_error):
            calls_at_error.append(mover.calls)

        with flags_on_a_device(polls), pytest.raises(errors.WindowMissError) as raised:
            sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0, callback=count_calls)
        message = str(raised.value)
        for part in ("would not be exact", "'tests_move'", "queue the prompt again", "stock formula"):
            assert part in message, (when, message)
        finished_steps = len(calls_at_error)
        assert finished_steps == {"after the call": 1, "at a later call": 3, "after the run": steps}[when], when
        assert model.model_options["transformer_options"][ids_check.HISTORY_KEY].moved
        mover.calls = 0
        with counted_gathers() as gathers:
            again = sample_with(model, "flux", FAST_HW, steps=steps, cfg=1.0)
        assert torch.equal(again, reference) and gathers == [], when
