"""Record what the patched model actually does in each model call: sigma, latent, ids and the table it used."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

CAPTURE_KEY = "tests_capture"


@dataclass
class ModelCall:
    sigma: torch.Tensor
    x: torch.Tensor
    tables: list = field(default_factory=list)  # (ids, pe) per embedder call inside this model call


@contextmanager
def capture(model, embedder_attr: str = "diffusion_model.pe_embedder"):
    """Yield (clone, calls): sample the clone and ``calls`` fills with one ModelCall per apply_model."""
    import comfy.patcher_extension as ext

    calls: list[ModelCall] = []
    clone = model.clone()

    def record_call(executor, x, t, *args, **kwargs):
        calls.append(ModelCall(sigma=t.detach().clone(), x=x.detach().clone()))
        return executor(x, t, *args, **kwargs)

    clone.add_wrapper_with_key(ext.WrappersMP.APPLY_MODEL, CAPTURE_KEY, record_call)
    embedder = clone.get_model_object(embedder_attr)

    def record_table(module, inputs, output):
        calls[-1].tables.append((inputs[0].detach().clone(), output.detach().clone()))

    handle = embedder.register_forward_hook(record_table)
    try:
        yield clone, calls
    finally:
        handle.remove()


def formula_table(rope, ours, scope, ids: torch.Tensor) -> torch.Tensor:
    """rope/'s table for ``ids`` under the call's schedule, column by column (plain RoPE off the spatial columns)."""
    by_column = {axis.column: axis for axis in scope.axes}
    parts = []
    for column, dim in enumerate(ours.axes_dim):
        axis = by_column.get(column)
        freqs = axis.freqs if axis else rope.plain_frequencies(dim, float(ours.theta), ids.device)[None]
        parts.append(rope.rotation_table(ids[..., column], freqs, axis.temperature if axis else None))
    return torch.cat(parts, dim=-3).unsqueeze(1)
