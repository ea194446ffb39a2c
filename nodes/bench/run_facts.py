"""What one patched run does, counted: model calls, spectra, tables built and tensor values our code reads per step
(the spectra and tables by the engine's profiler labels); and under torch.compile, graph breaks from our frames and
frames compiled per call."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator

import torch

from ..rope_patch.config import LABEL_SPECTRUM, LABEL_TABLE
from .model import SMALL_BASE_PX, patched, sample, tiny_flux
from .sources import is_pack_source
from .timing import labelled


@contextlib.contextmanager
def tensor_reads_from_pack(reads: list) -> Iterator[None]:
    """Record every .item()/.tolist()/bool()/float()/int() of a tensor whose caller is the pack (tests excluded)."""
    names = ("item", "tolist", "__bool__", "__float__", "__int__")
    reals = {name: getattr(torch.Tensor, name) for name in names}

    def spy(name):
        def read(self, *args, **kwargs):
            caller = traceback.extract_stack(limit=2)[0]
            if is_pack_source(caller.filename):
                reads.append((caller.name, self.device.type))
            return reals[name](self, *args, **kwargs)

        return read

    for name in names:
        setattr(torch.Tensor, name, spy(name))
    try:
        yield
    finally:
        for name, real in reals.items():
            setattr(torch.Tensor, name, real)


def per_step_counts(device: torch.device) -> dict[str, float]:
    """DyPE + SEGA on a tiny Flux, split conds (different text lengths: one model call each), 4 steps: model calls,
    latent spectra (the FFT), tables built, and tensor values our code reads (and where)."""
    import comfy.patcher_extension as ext

    steps = 4
    model = patched(tiny_flux(1, 1, 1, device), sega=True, base_px=SMALL_BASE_PX)
    reads, model_calls = [], []

    def count_call(executor, *args, **kwargs):
        model_calls.append(1)
        return executor(*args, **kwargs)

    model.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "bench_count", count_call)
    with tensor_reads_from_pack(reads):
        counts, _, _ = labelled(lambda: sample(model, 512, steps, 3.0, negative_tokens=9), (LABEL_SPECTRUM, LABEL_TABLE))
    in_steps = [r for r in reads if r[0] != "_report_run"]
    return {"steps": steps, "calls": len(model_calls) / steps, "spectrum": counts[LABEL_SPECTRUM] / steps,
            "table": counts[LABEL_TABLE] / steps, "reads_in_steps": len(in_steps),
            "reads_in_steps_device": sum(1 for r in in_steps if r[1] != "cpu"),
            "reads_at_end": len(reads) - len(in_steps)}


def compile_facts(device: torch.device) -> dict[str, int]:
    """``torch._dynamo.explain`` of the patched diffusion model (graph breaks from our frames vs stock), and how many
    frames ComfyUI's torch.compile wrapper compiles per model call over two runs of 4 steps."""
    import comfy.patcher_extension as ext
    from comfy_api.torch_helpers.torch_compile import set_torch_compile_wrapper
    from torch._dynamo.testing import CompileCounter

    facts = {}
    for name, make in (("stock", lambda: tiny_flux(1, 1, 1, device)),
                       ("patched", lambda: patched(tiny_flux(1, 1, 1, device), sega=True, base_px=SMALL_BASE_PX))):
        model = make().clone()
        explained = []

        def explain(executor, *args, explained=explained, **kwargs):
            if not explained:
                explained.append(torch._dynamo.explain(executor.class_obj._forward)(*args, **kwargs))
            return executor(*args, **kwargs)

        model.add_wrapper_with_key(ext.WrappersMP.DIFFUSION_MODEL, "bench_explain", explain)
        sample(model, 512, 1, 1.0)
        torch._dynamo.reset()
        facts[f"{name}_breaks"] = explained[0].graph_break_count
        facts[f"{name}_ours"] = sum(
            1 for b in explained[0].break_reasons
            if any(is_pack_source(f.filename) for f in b.user_stack))
        counter = CompileCounter()
        compiled = make()
        set_torch_compile_wrapper(compiled, backend=counter)
        frames = []

        def count(executor, *args, frames=frames, counter=counter, **kwargs):
            out = executor(*args, **kwargs)
            frames.append(counter.frame_count)
            return out

        compiled.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, "bench_count", count)
        for _ in range(2):
            sample(compiled, 512, 4, 3.0, negative_tokens=16)
        torch._dynamo.reset()
        facts[f"{name}_first_call"] = frames[0]
        facts[f"{name}_later"] = frames[-1] - frames[0]
        facts[f"{name}_after_second_call"] = frames[-1] - frames[1]
    return facts
